"""The roost service (issue 21, part 1) on a real tmux: started on demand in a hidden session of
its own, never an agent, restarted after a kill -9 with backoff, stopped and kept stopped; its
death harms no agent."""

from __future__ import annotations

import json
import os
import signal

import pytest

from roost.ops.context import App

from conftest import Env


def service_status(world: Env) -> dict:
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


def test_the_services_wakes_start_agents_in_their_own_saved_environment(app: App) -> None:
    """The service runs in tmux with a minimal environment: its wakes (a notice to a sleeping
    parent, a resume at a reset, the web's buttons) must take the agent's saved one, as the
    supervisor's do, or a CLI found by the user's PATH or needing their API key fails."""
    from roost.ops import service
    from roost.ops.context import started_by_tmux

    env = service._environment(app)
    assert started_by_tmux(env)
    assert env["ROOST_HOME"] == str(app.paths.home)
