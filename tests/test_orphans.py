"""Orphans and twins on a real tmux: an agent deaf to SIGHUP outlives its tmux server; roost
stops it before starting the agent again, doctor reports it, and the tags that find it name the
ROOST_HOME too, so another roost home's agent with the same id is never touched."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any

import psutil
import pytest

from conftest import Env, kill_tagged_processes

pytestmark = pytest.mark.tmux


def agent_processes(roost_home: str, agent_id: str) -> list[int]:
    """Fake agent CLIs alive with this agent's tags."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            cmd = proc.info["cmdline"] or []
            env = proc.environ()
            if (
                any(c.endswith("fake_agent.py") for c in cmd)
                and env.get("ROOST_AGENT_ID") == agent_id
                and env.get("ROOST_HOME") == roost_home
                and proc.status() != psutil.STATUS_ZOMBIE
            ):
                found.append(proc.pid)
        except psutil.Error:
            continue
    return found


def spawn_deaf(world: Env, name: str, *args: str) -> dict[str, Any]:
    world.roost(
        "spawn", name, "--cwd", str(world.tmp / "work"), *args, env={"FAKE_AGENT_IGNORE_HUP": "1"}
    )
    world.last_start(1)
    return world.ls()[name]


def outlive_the_server(world: Env, agent: dict[str, Any]) -> int:
    [pid] = agent_processes(str(world.home), agent["id"])
    world.tmux("kill-server")
    assert world.wait_for(lambda: world.panes() == [], what="the server gone")
    assert agent_processes(str(world.home), agent["id"]) == [pid]  # deaf to the hangup
    return pid


@pytest.mark.parametrize("how", [("restore",), ("wake", "alpha")])
def test_after_a_server_death_one_process_runs_the_conversation(
    world: Env, how: tuple[str, ...]
) -> None:
    a = spawn_deaf(world, "alpha")
    orphan = outlive_the_server(world, a)
    world.roost(*how)
    world.last_start(2)
    running = agent_processes(str(world.home), a["id"])
    assert len(running) == 1 and running[0] != orphan, running
    assert world.ls()["alpha"]["pid"] == running[0]
    assert "orphans-stopped" in [
        e["kind"] for e in json.loads(world.roost("events", "alpha", "--json").stdout)
    ]


def test_doctor_reports_orphans_with_the_fix(world: Env) -> None:
    a = spawn_deaf(world, "alpha")
    orphan = outlive_the_server(world, a)
    proc = world.roost("doctor", check=False)
    assert proc.returncode == 1, proc.stdout
    assert f"alpha: 1 process (pid {orphan}) outlived its tmux pane" in proc.stdout
    assert "fix: roost kill alpha" in proc.stdout
    world.roost("kill", "alpha")
    assert agent_processes(str(world.home), a["id"]) == []
    report = json.loads(world.roost("doctor", "--json").stdout)
    assert report["ok"], report


@pytest.fixture
def other(world: Env) -> Iterator[Env]:
    """A second roost home on a tmux server of its own, beside `world`."""
    second = Env(
        tmp=world.tmp,
        env={
            **world.env,
            "ROOST_HOME": str(world.tmp / "roost2"),
            "ROOST_TMUX_SOCKET": f"rt-{uuid.uuid4().hex[:10]}",
        },
        socket="",
    )
    second.socket = second.env["ROOST_TMUX_SOCKET"]
    yield second
    subprocess.run(
        ["tmux", "-L", second.socket, "kill-server"], capture_output=True, env=second.env
    )
    kill_tagged_processes(second.env["ROOST_HOME"])


def test_an_imported_twin_in_another_roost_home_is_left_alone(world: Env, other: Env) -> None:
    a = spawn_deaf(world, "alpha")
    [mine] = agent_processes(str(world.home), a["id"])
    exported = world.roost("export").stdout
    other.roost("import", "-", input=exported)
    other.roost("wake", "alpha")  # the same agent id, in another roost home
    [theirs] = other.wait_for(
        lambda: agent_processes(str(other.home), a["id"]), what="the imported agent running"
    )
    other.roost("kill", "alpha")
    assert agent_processes(str(world.home), a["id"]) == [mine]
    other.roost("wake", "alpha")
    assert agent_processes(str(world.home), a["id"]) == [mine]
    assert theirs not in agent_processes(str(other.home), a["id"])


def test_one_roost_home_through_a_second_socket_starts_no_twin(world: Env, other: Env) -> None:
    a = spawn_deaf(world, "alpha")
    [pid] = agent_processes(str(world.home), a["id"])
    second_socket = {**world.env, "ROOST_TMUX_SOCKET": other.socket}
    proc = world.roost("wake", "alpha", env=second_socket, check=False)
    assert proc.returncode != 0 and "another tmux server" in proc.stderr, proc
    assert len(proc.stderr.splitlines()) == 1
    assert agent_processes(str(world.home), a["id"]) == [pid]
