"""Nothing roost started outlives it (issue 36 point 7) on a real tmux: an agent deaf to the
hangup outlives its tmux server; the service reaps it at its next start when a kill -9 took
the service with the server (nothing was left to do it), and on its own way out when it sees
its server die. Only this roost home's tagged processes: an untagged one and another home's
are left alone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import psutil
import pytest
from test_orphans import agent_processes, spawn_deaf

from conftest import Env

pytestmark = pytest.mark.tmux


def reaped_events(world: Env, name: str) -> list[dict[str, Any]]:
    found = json.loads(world.roost("events", name, "--json").stdout)
    return [e for e in found if e["kind"] == "orphans-stopped"]


def server(world: Env) -> tuple[int, str]:
    """The tmux server's pid, and the TMUX value its panes' processes carry."""
    pid, path = world.tmux("display-message", "-p", "#{pid} #{socket_path}").split()
    return int(pid), f"{path},{pid},0"


@pytest.fixture
def bystanders(world: Env) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes that are none of this roost home's agents, started by the test."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        proc.kill()
        proc.wait()


def start_bystanders(
    world: Env, started: list[subprocess.Popen[bytes]], agent_id: str, tmux: str
) -> None:
    """Two processes beside the agent, each under the same tmux server as it and out of its
    own session (the server's death leaves them running): one carrying this home but no agent
    tag, one tagged as the same agent of another roost home."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ROOST_", "TMUX"))}
    for extra in (
        {"ROOST_HOME": str(world.home)},
        {"ROOST_HOME": str(world.tmp / "another-home"), "ROOST_AGENT_ID": agent_id},
    ):
        started.append(
            subprocess.Popen(
                [sys.executable, "-c", "import time; time.sleep(600)"],
                env={**base, **extra, "TMUX": tmux},
                start_new_session=True,
            )
        )


def test_the_next_start_reaps_what_a_kill_9_of_service_and_server_left(
    world: Env, bystanders: list[subprocess.Popen[bytes]]
) -> None:
    service = world.start_service()
    agent = spawn_deaf(world, "alpha")
    [orphan] = agent_processes(str(world.home), agent["id"])
    server_pid, tmux = server(world)
    start_bystanders(world, bystanders, agent["id"], tmux)
    # Both at once, with no chance to clean up: the service stopped first (it would hear its
    # hangup), then the server and it killed -9.
    os.kill(service["pid"], signal.SIGSTOP)
    os.kill(server_pid, signal.SIGKILL)
    os.kill(service["pid"], signal.SIGKILL)
    world.wait_for(lambda: not psutil.pid_exists(server_pid), what="the server gone")
    assert agent_processes(str(world.home), agent["id"]) == [orphan]  # deaf to the hangup

    world.start_service()
    world.wait_for(
        lambda: not agent_processes(str(world.home), agent["id"]), 30, "the leftover reaped"
    )
    [event] = world.wait_for(lambda: reaped_events(world, "alpha"), what="its event")
    assert event["pids"] == [orphan] and event["by"] == "service"
    assert all(p.poll() is None for p in bystanders)  # neither of this home's agents
    assert world.ls()["alpha"]["status"] != "crashed"


def test_a_service_that_sees_its_server_die_reaps_on_its_way_out(world: Env) -> None:
    world.start_service()
    agent = spawn_deaf(world, "alpha")
    [orphan] = agent_processes(str(world.home), agent["id"])
    world.tmux("kill-server")
    world.wait_for(
        lambda: not agent_processes(str(world.home), agent["id"]), 30, "the leftover reaped"
    )
    [event] = reaped_events(world, "alpha")  # written before it went, by nothing started since
    assert event["pids"] == [orphan] and event["by"] == "service"
