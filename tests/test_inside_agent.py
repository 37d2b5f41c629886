"""roost run from inside an agent's own pane, on that agent (issue 19, item 4): a command that
stops the agent that runs it completes (its destructive part runs outside the agent's process
tree) instead of sparing it or killing itself half-way; `roost attach` from a pane no terminal
shows says what to do. Real tmux, a shell as the agent, the command typed into it."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from conftest import Env


def shell_agent(world: Env, name: str) -> str:
    """A `command` agent running an interactive shell; its pane id once it shows a prompt."""
    world.roost("spawn", name, "--provider", "command", "--", "env", "PS1=ready> ", "sh", "-i")
    pane = world.wait_for(
        lambda: next((p["pane_id"] for p in world.panes() if p["window"] == name), None),
        what=f"{name}'s pane",
    )
    world.wait_for(lambda: "ready>" in world.screen(str(pane)), what="a shell prompt")
    return str(pane)


def run_inside(world: Env, pane: str, *args: str) -> Path:
    """Type `roost ARGS` into the pane, its output and exit code going to a file."""
    out = world.tmp / f"out-{args[0]}.txt"
    roost = " ".join(shlex.quote(a) for a in (sys.executable, "-m", "roost", *args))
    world.type(pane, f"{roost} >{shlex.quote(str(out))} 2>&1; echo rc=$? >>{shlex.quote(str(out))}")
    return out


def test_kill_run_inside_the_agent_stops_it(world: Env) -> None:
    pane = shell_agent(world, "me")
    run_inside(world, pane, "kill", "me")
    world.wait_for(lambda: world.ls()["me"]["state"] == "stopped", timeout=10, what="me stopped")
    assert world.ls()["me"]["pid"] is None
    assert any(
        e["kind"] == "killed" and e["pids"]
        for e in json.loads(world.roost("events", "me", "--json").stdout)
    )


def test_rm_run_inside_the_agent_removes_it_whole(world: Env) -> None:
    pane = shell_agent(world, "me")
    shell_agent(world, "other")  # keeps the home alive: only me's window must go
    run_inside(world, pane, "rm", "me")
    world.wait_for(lambda: "me" not in world.ls(), timeout=10, what="me's record removed")
    assert not [p for p in world.panes() if p["window"] == "me"]
    assert world.ls()["other"]["state"] == "running"


def test_hibernate_run_inside_the_agent_records_it(world: Env) -> None:
    pane = shell_agent(world, "me")
    run_inside(world, pane, "hibernate", "me")
    world.wait_for(
        lambda: world.ls()["me"]["state"] == "hibernated", timeout=10, what="me hibernated"
    )
    assert not [p for p in world.panes() if p["window"] == "me"]


def test_attach_from_a_pane_no_terminal_shows_says_what_to_do(world: Env) -> None:
    pane = shell_agent(world, "me")
    shell_agent(world, "other")
    out = run_inside(world, pane, "attach", "other")
    text = str(
        world.wait_for(
            lambda: "rc=" in (t := out.read_text() if out.exists() else "") and t,
            what="attach's answer",
        )
    )
    lines = text.splitlines()
    assert lines[-1] != "rc=0", text
    assert len(lines) == 2 and "no current client" not in text, text
    assert "roost attach other" in lines[0], text
