"""`roost attach NAME` needs a terminal (issue 35): without one it woke the hibernated agent and
then printed tmux's raw "open terminal failed". Now it refuses first, one line and exit 2, and
wakes nothing. From inside roost's server it switches the client showing the caller, which
needs no terminal of its own, so that still works whatever its input is."""

from __future__ import annotations

import json
import shlex
import sys
from typing import Any

import pytest
from test_inside_agent import shell_agent
from test_tmux_feel import on, terminal

from conftest import Env

pytestmark = pytest.mark.tmux


def events(world: Env, name: str) -> list[dict[str, Any]]:
    return list(json.loads(world.roost("events", name, "--json").stdout))


def test_attach_without_a_terminal_refuses_and_wakes_nothing(world: Env) -> None:
    world.roost("spawn", "cl", "--cwd", str(world.tmp / "work"))
    world.wait_status("cl", "idle", 30)
    world.roost("hibernate", "cl")
    assert world.ls()["cl"]["state"] == "hibernated"
    before = (events(world, "cl"), len(world.starts()))

    refused = world.roost("attach", "cl", check=False)  # its input: /dev/null
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.splitlines() == [
        "roost: roost attach needs a terminal, and its input is not one: nothing was woken "
        "(run it in a terminal; roost wake cl starts cl without one)"
    ]
    assert refused.stdout == ""
    assert "open terminal failed" not in refused.stderr
    assert world.ls()["cl"]["state"] == "hibernated"
    assert (events(world, "cl"), len(world.starts())) == before
    assert not [p for p in world.panes() if p["window"] == "cl"]


def test_attach_from_inside_roosts_server_switches_without_a_terminal_of_its_own(
    world: Env,
) -> None:
    """A shell agent's pane, shown by a client (a stand-in terminal): `roost attach other
    </dev/null` typed there moves that client to other's session."""
    pane = shell_agent(world, "me")
    shell_agent(world, "other")
    term = terminal(
        world,
        f"{world.socket}-term",
        ["env", "-u", "TMUX", "tmux", "-L", world.socket, "-f", "/dev/null", "attach", "-t", "me"],
    )
    shown = "#{?client_control_mode,,#{client_session}}"
    try:
        world.wait_for(lambda: world.tmux("list-clients", "-F", shown).split() == ["me"])
        line = shlex.join([sys.executable, "-m", "roost", "attach", "other"])
        world.type(pane, f"{line} </dev/null")
        world.wait_for(
            lambda: world.tmux("list-clients", "-F", shown).split() == ["other"],
            30,
            "the client switched to other",
        )
    finally:
        on(world, term, "kill-server")
