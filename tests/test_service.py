"""The roost service (issue 21, part 1) on a real tmux: started on demand in a hidden session of
its own, never an agent, restarted after a kill -9 with backoff, stopped and kept stopped; its
death harms no agent."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from roost.ops.context import App
from roost.system import servicesock

from conftest import Env


def service_status(world: Env) -> dict[str, Any]:
    return json.loads(world.roost("service", "status", "--json").stdout)


def test_service_starts_hidden_and_stops(world: Env) -> None:
    world.roost("spawn", "cmd", "--provider", "command", "--", "sh", "-c", "echo ready; sleep 300")
    started = json.loads(world.roost("service", "start", "--json").stdout)
    assert started["running"] and started["pid"] and started["since"], started
    assert "monitor" in started["serves"]
    assert service_status(world)["pid"] == started["pid"]
    # Never an agent: `ls` shows only the agent; doctor does not call its session foreign.
    assert list(world.ls()) == ["cmd"]
    doctor = world.roost("doctor", check=False)
    assert "_roost_service" not in doctor.stdout + doctor.stderr
    again = json.loads(world.roost("service", "start", "--json").stdout)
    assert again["pid"] == started["pid"]  # started on demand: once
    stopped = json.loads(world.roost("service", "stop", "--json").stdout)
    assert not stopped["running"]
    assert "_roost_service" not in world.tmux("list-sessions", "-F", "#{session_name}")
    world.wait_status("cmd", "idle")  # the agent runs on (its start may still be settling)


def test_service_restarts_after_kill_9_and_agents_run_on(world: Env) -> None:
    world.roost("spawn", "cmd", "--provider", "command", "--", "sh", "-c", "echo ready; sleep 300")
    first = json.loads(world.roost("service", "start", "--json").stdout)
    agent_pid = world.ls()["cmd"]["pid"]
    os.kill(first["pid"], signal.SIGKILL)
    back = world.wait_for(
        lambda: (s := service_status(world))["running"] and s["pid"] != first["pid"] and s,
        timeout=20,
        what="the service restarted",
    )
    assert back["since"] > first["since"]
    assert world.ls()["cmd"]["pid"] == agent_pid  # untouched
    world.roost("service", "stop")
    assert not service_status(world)["running"]


@pytest.mark.service
def test_a_launch_starts_the_service_unless_autostart_is_off(world: Env) -> None:
    """As a user's roost: a launch starts it. ROOST_SERVICE_AUTOSTART=0 (a script, a CI job,
    the tests' worlds): nothing starts it by itself; `roost service start` still does."""
    off = {"ROOST_SERVICE_AUTOSTART": "0"}
    world.roost("spawn", "a", "--provider", "command", "--", "sleep", "300", env=off)
    world.roost("kill", "a", env=off)
    world.roost("wake", "a", env=off)
    assert not service_status(world)["running"]
    assert "_roost_service" not in world.tmux("list-sessions", "-F", "#{session_name}")
    world.roost("spawn", "b", "--provider", "command", "--", "sleep", "300")
    assert world.wait_for(lambda: service_status(world)["running"], 20, "started by the launch")
    world.roost("service", "stop")
    assert json.loads(world.roost("service", "start", "--json", env=off).stdout)["running"]


@pytest.mark.service
def test_commands_that_change_agents_bring_the_service_back(world: Env) -> None:
    """Issue 36 point 1: the service is the runtime. Gone without `roost service stop` (its
    session killed: no pane-died hook restarts it), the next command that changes an agent
    (a send, a park, a kill) starts it again before acting; `ls` only reads, and does not."""
    from roost.core.service import SESSION

    world.roost("spawn", "a", "--provider", "command", "--", "sh", "-c", "cat; sleep 300")
    world.wait_for(lambda: service_status(world)["running"], 30, "started by the launch")
    for command in (("send", "a", "hello"), ("park", "a"), ("kill", "a")):
        world.tmux("kill-session", "-t", SESSION)
        world.wait_for(lambda: not service_status(world)["running"], 30, "the service gone")
        world.ls()
        assert not service_status(world)["running"]
        world.roost(*command)
        world.wait_for(lambda: service_status(world)["running"], 30, f"started by {command[0]}")


def test_the_services_wakes_start_agents_in_their_own_saved_environment(app: App) -> None:
    """The service runs in tmux with a minimal environment: its wakes (a notice to a sleeping
    parent, a resume at a reset, the web's buttons) must take the agent's saved one, as the
    supervisor's do, or a CLI found by the user's PATH or needing their API key fails."""
    from roost.ops import service
    from roost.ops.context import started_by_tmux

    env = service._environment(app)
    assert started_by_tmux(env)
    assert env["ROOST_HOME"] == str(app.paths.home)


# ---- one service per ROOST_HOME; status is the truth (issue 36 point 6) -------------------------
def runs(world: Env) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(world.home / "roost.db")) as db:
        return db.execute(
            "SELECT id, pid, pane_id, started_at, ended_at, exit_code FROM service_runs ORDER BY id"
        ).fetchall()


def readers_socket(world: Env) -> str:
    found = servicesock.path(os.path.realpath(world.home))
    assert found is not None
    return found


def endpoint_file(world: Env) -> Path:
    return world.home / "mcp-endpoint"


def serving(world: Env, *names: str) -> dict[str, Any]:
    """The status once these components serve and none is still starting (they start in
    threads after the run begins)."""

    def settled() -> dict[str, Any] | None:
        found = service_status(world)
        starting = any(p["state"] == "starting" for p in found.get("components", []))
        wanted = found["running"] and set(names) <= set(found["serves"])
        return found if wanted and not starting else None

    return world.wait_for(settled, 30, f"the service serving {names}")


def test_a_second_service_run_is_refused_and_changes_nothing(world: Env) -> None:
    """A `roost service run` started by hand beside the running service: it used to run every
    component but the readers' socket, leave status at "starting" for good and take the shared
    MCP endpoint's file with it. Now it refuses at once, and nothing of the first one moves."""
    world.start_service()
    before = serving(world, "readers", "mcp", "monitor")
    sock = readers_socket(world)
    inode = os.lstat(sock).st_ino
    endpoint = endpoint_file(world).read_text()
    rows = runs(world)
    second = world.roost_start("service", "run")
    try:
        out, err = second.communicate(timeout=30)
    except subprocess.TimeoutExpired:  # killed by communicate: it ran beside the first
        pytest.fail("a second service ran beside the first")
    assert second.returncode == 1, (out, err)
    assert out == "" and err.count("\n") == 1 and "another roost service runs" in err, err
    assert str(before["pid"]) in err
    after = service_status(world)
    assert {k: after[k] for k in ("running", "pid", "since", "serves", "endpoint")} == {
        k: before[k] for k in ("running", "pid", "since", "serves", "endpoint")
    }
    assert os.lstat(sock).st_ino == inode
    assert endpoint_file(world).read_text() == endpoint
    assert runs(world) == rows


def test_after_a_kill_9_the_next_service_starts_and_holds_the_lock(world: Env) -> None:
    """The lock is the kernel's (flock): a service killed -9 leaves nothing that keeps the next
    one out, and two starts at once (with the pane-died hook's own restart) end with one."""
    first = world.start_service()
    os.kill(first["pid"], signal.SIGKILL)
    starts = world.roost_together(("service", "start", "--json"), ("service", "start", "--json"))
    assert all(c.returncode == 0 for c in starts), starts
    pids = {json.loads(c.stdout)["pid"] for c in starts}
    back = world.wait_for(
        lambda: (s := service_status(world))["running"] and s["pid"] != first["pid"] and s,
        30,
        "the service back",
    )
    assert pids == {back["pid"]}
    open_runs = [r for r in runs(world) if r[4] is None]
    assert [r[1] for r in open_runs] == [back["pid"]]
    assert (world.home / "run" / "service.lock").is_file()
    refused = world.roost("service", "run", check=False, timeout=30)
    assert refused.returncode == 1 and "another roost service runs" in refused.stderr

    # A socket taken from under the running service is no longer served: status looks.
    serving(world, "readers")
    sock = readers_socket(world)
    os.rename(sock, sock + ".moved")
    os.symlink(sock + ".moved", sock)
    assert "readers" not in service_status(world)["serves"]
    world.roost("service", "stop")
    assert os.path.islink(sock)  # not the service's own socket: left as it was


def test_status_lists_only_what_serves(world: Env) -> None:
    """A symlink planted at the readers' socket is refused, and status says so instead of
    listing readers; web is not listed when no web server runs; the endpoint's address is
    the one its file records."""
    world.roost("ls")  # makes the home's folders
    sock = readers_socket(world)
    planted = world.tmp / "planted"
    planted.write_text("not a socket")
    os.symlink(planted, sock)
    started = json.loads(world.roost("service", "start", "--json").stdout)
    assert started["running"], started
    found = serving(world, "mcp", "monitor")
    assert "readers" not in found["serves"] and "web" not in found["serves"], found
    parts = {p["name"]: p for p in found["components"]}
    assert parts["readers"]["state"] == "failed" and sock in parts["readers"]["error"], parts
    assert parts["web"]["state"] == "off", parts
    assert parts["mcp"]["state"] == "serving"
    recorded = json.loads(endpoint_file(world).read_text())
    assert found["endpoint"] == parts["mcp"]["address"] == recorded["url"]
    assert os.path.islink(sock) and planted.read_text() == "not a socket"
    text = world.roost("service", "status").stdout
    assert f"mcp endpoint: {recorded['url']}" in text and "readers failed" in text, text
    assert "web" not in text.splitlines()[0]


# ---- without the service: said once (issue 36 point 1) ------------------------------------------
WITHOUT = "working without the roost service"


def refusing_tmux(world: Env) -> None:
    """config.toml's `[tmux] bin`: a tmux that refuses the service's session (as a tmux that
    cannot start it would) and runs every other command."""
    wrapper = world.tmp / "tmux-without-service"
    wrapper.write_text(
        "#!/bin/sh\n"
        'for word in "$@"; do\n'
        '  if [ "$word" = "_roost_service" ]; then echo "refused by the test" >&2; exit 1; fi\n'
        "done\n"
        'exec tmux "$@"\n'
    )
    wrapper.chmod(0o755)
    world.home.mkdir(mode=0o700, exist_ok=True)
    (world.home / "config.toml").write_text(f'[tmux]\nbin = "{wrapper}"\n')


@pytest.mark.service
def test_commands_that_cannot_start_the_service_say_so_once(world: Env) -> None:
    """A spawn says it once, though its launch finds the service missing too (its agent gets
    its own `roost mcp`); a restore of three agents says it once, not per agent and not never
    (it said nothing: each launch fell back in silence)."""
    refusing_tmux(world)
    for name in ("a", "b", "c"):
        spawned = world.roost("spawn", name, "--provider", "command", "--", "sleep", "300")
        assert spawned.stderr.count(WITHOUT) == 1, spawned.stderr
        assert "refused by the test" in spawned.stderr
    world.tmux("kill-server")
    restored = world.roost("restore")
    assert restored.stderr.count(WITHOUT) == 1, restored.stderr
    assert {n: a["state"] for n, a in world.ls().items()} == dict.fromkeys("abc", "running")
    assert not service_status(world)["running"]
    assert world.roost("ls").stderr == ""  # a reader starts nothing, says nothing


@pytest.mark.service
def test_roost_mcp_starts_the_service_first(world: Env) -> None:
    """It creates and changes agents (an agent's tools, a person's client): the runtime first,
    as spawn and wake do."""
    mcp = world.roost("mcp", input="")  # a client that says nothing and goes
    assert mcp.returncode == 0, mcp.stderr
    world.wait_for(lambda: service_status(world)["running"], 30, "started by roost mcp")


@pytest.mark.service
def test_roost_web_starts_the_service_first(world: Env) -> None:
    """Its buttons start and change agents: the runtime first, as spawn and wake do (before it
    serves: its login URL is printed after), said once when tmux refuses it (it said nothing);
    a person who stopped the service keeps it stopped."""
    from web_server import running

    refusing_tmux(world)
    with running(world) as web:
        pass
    assert web.proc is not None and web.proc.stderr is not None
    assert web.proc.stderr.read().count(WITHOUT) == 1
    (world.home / "config.toml").unlink()
    with running(world):
        world.wait_for(lambda: service_status(world)["running"], 30, "started by roost web")
    world.roost("service", "stop")
    with running(world):  # (its session gone, tmux's server went too: no other session)
        sessions = world.tmux("list-sessions", "-F", "#{session_name}", check=False)
        assert "_roost_service" not in sessions
