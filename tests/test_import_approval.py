"""Import validates every value whatever `--allow-dangerous` says, and an agent whose program or
arguments it left off waits for the person's approval (issue 35, finding 5).

Before: a `command` agent imported without `--allow-dangerous` lost its program and could never
wake ("needs the program after --"), with no way to give it back; a command agent with no
program, a 1 MB argument, an exit code of 10^12, a launch count one short of SQLite's largest
integer (the next wake overflowed), a cwd like /srv/../etc or an agent that is its own parent
were all stored, with or without the flag. Now each is one line, exit 2, nothing stored; and the
left-off agent is `needs approval` (ls, ls --json, doctor) until `roost approve NAME` shows its
exact argv and keeps it on consent."""

from __future__ import annotations

import json
import sqlite3
import uuid
from typing import Any

import pytest
from test_bad_input import assert_refused
from test_gc import in_terminal
from test_import_hostile import one_agent, write

from conftest import Env

pytestmark = pytest.mark.tmux

# What the imported command agent runs: its words prove it is this exact argv. The last
# argument (sh's $0) is an OSC 52 clipboard write: approve must show it escaped, never raw.
PROGRAM = ["sh", "-c", "echo ready-$((40 + 2)); exec cat", "\x1b]52;c;aGk=\x07"]


def a_tab() -> dict[str, Any]:
    return {"id": str(uuid.uuid4()), "name": "t", "position": 0, "layout": None, "focus": None}


def with_tab(tab: dict[str, Any]) -> dict[str, Any]:
    data = one_agent()
    data["tabs"] = [tab]
    return data


def self_linked() -> dict[str, Any]:
    me = str(uuid.uuid4())
    return one_agent(id=me, linked_parent=me)


def settings(value: object) -> dict[str, Any]:
    data = one_agent()
    data["settings"] = {"dangerous": value}
    return data


def with_env() -> dict[str, Any]:
    data = one_agent()
    data["agents"][0]["env"] = {"LD_PRELOAD": "/tmp/evil.so"}
    return data


MALFORMED = [
    # names
    pytest.param(one_agent(name="has space"), "agents[0].name:", id="name"),
    pytest.param(one_agent(home="a.b"), "agents[0].home:", id="home"),
    # cwd
    pytest.param(one_agent(cwd="srv/w"), "agents[0].cwd:", id="cwd-relative"),
    pytest.param(one_agent(cwd="/srv/w/../../etc"), "agents[0].cwd:", id="cwd-dotdot"),
    # provider
    pytest.param(one_agent(provider="vim"), "unknown provider 'vim'", id="provider"),
    # settings and booleans
    pytest.param(settings(True), 'settings.dangerous: must be "0" or "1"', id="setting-bool"),
    pytest.param(settings("yes"), 'settings.dangerous: must be "0" or "1"', id="setting-yes"),
    pytest.param(one_agent(dangerous="1"), "agents[0].dangerous: must be true", id="dangerous"),
    pytest.param(one_agent(mcp="1"), "agents[0].mcp: must be true or false", id="mcp"),
    # args, and a command agent's program
    pytest.param(one_agent(args="bash"), "args must be a list of strings", id="args-text"),
    pytest.param(one_agent(args=["x" * 200_000]), "agents[0].args[0]:", id="arg-too-long"),
    pytest.param(
        one_agent(args=["y" * 100_000] * 20), "agents[0].args:", id="argv-too-long-together"
    ),
    pytest.param(
        one_agent(provider="command", args=[], provider_session_id=None),
        "agents[0].args: a command agent's args hold its program",
        id="command-no-program",
    ),
    pytest.param(
        one_agent(provider="command", args=["", "x"], provider_session_id=None),
        "agents[0].args[0]: a command agent's program",
        id="command-empty-program",
    ),
    # env: not part of an agent's record (roost passes the caller's own)
    pytest.param(with_env(), "agents[0] must have exactly the fields", id="env"),
    # numbers
    pytest.param(one_agent(last_exit=10**12), "agents[0].last_exit:", id="exit-code"),
    pytest.param(one_agent(last_exit=-1000), "agents[0].last_exit:", id="exit-code-negative"),
    pytest.param(one_agent(launches=2**63 - 1), "agents[0].launches:", id="launches"),
    pytest.param(one_agent(buried_ratio=7), "agents[0].buried_ratio:", id="ratio"),
    # links
    pytest.param(self_linked(), "agents[0] (guest): linked_parent", id="own-parent"),
    # tabs
    pytest.param(with_tab({**a_tab(), "position": 2**63 - 1}), "tabs[0].position:", id="tab-pos"),
    pytest.param(with_tab({**a_tab(), "name": "a:b"}), "tabs[0]: bad", id="tab-name"),
]


@pytest.mark.parametrize("flag", [[], ["--allow-dangerous"]], ids=["plain", "allow-dangerous"])
@pytest.mark.parametrize(("data", "says"), MALFORMED)
def test_a_malformed_value_is_refused_whatever_the_flag(
    world: Env, flag: list[str], data: dict[str, Any], says: str
) -> None:
    assert_refused(world, "import", *flag, write(world, data), code=2, says=says)
    assert stored(world, "SELECT COUNT(*) FROM agents") == [(0,)]
    assert stored(world, "SELECT * FROM settings") == []
    assert stored(world, "SELECT * FROM tabs") == []


def test_an_exit_code_and_a_launch_count_in_range_still_import(world: Env) -> None:
    world.roost("import", write(world, one_agent(last_exit=255, launches=2**31 - 1)))
    assert "guest" in world.ls()


def stored(world: Env, sql: str) -> list[tuple[Any, ...]]:
    db = world.home / "roost.db"
    if not db.exists():
        return [(0,)] if "COUNT" in sql else []
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def imported_command_agent(world: Env, *flag: str) -> str:
    work = world.tmp / "work"
    work.mkdir(exist_ok=True)
    data = one_agent(
        provider="command", args=PROGRAM, provider_session_id=None, cwd=str(work.resolve())
    )
    return str(world.roost("import", *flag, write(world, data)).stdout)


def test_a_command_agent_imported_without_the_flag_needs_approval_then_wakes(world: Env) -> None:
    said = imported_command_agent(world)
    assert "guest" in said and "roost approve guest" in said
    guest = world.ls()["guest"]
    assert guest["needs_approval"] is True and guest["proposed_args"] == PROGRAM
    assert guest["args"] == []  # kept aside, never used
    assert "[needs approval]" in world.roost("ls").stdout
    doctor = world.roost("doctor", check=False).stdout
    assert "needs approval" in doctor and "roost approve guest" in doctor

    # Waking it refuses, naming the way out; and so do the other ways to start it.
    assert_refused(world, "wake", "guest", code=2, says="roost approve guest")
    assert_refused(world, "attach", "guest", code=2, says="roost approve guest")
    assert world.panes() == [] or all(p["window"] != "guest" for p in world.panes())

    # No terminal and no --yes: nothing changes.
    assert_refused(world, "approve", "guest", code=2, says="--yes")
    assert world.ls()["guest"]["needs_approval"] is True

    shown = world.roost("approve", "guest", "--yes").stdout
    assert "'sh'" in shown and "'echo ready-$((40 + 2)); exec cat'" in shown
    assert "\\x1b]52;c;aGk=\\x07" in shown and "\x1b" not in shown  # escaped, never raw
    guest = world.ls()["guest"]
    assert guest["needs_approval"] is False and guest["proposed_args"] is None
    assert guest["args"] == PROGRAM
    [event] = [
        e
        for e in json.loads(world.roost("events", "guest", "--json").stdout)
        if e["kind"] == "approved"
    ]
    assert event["args"] == PROGRAM

    world.roost("wake", "guest")
    world.wait_screen(world.pane_of("guest"), "ready-42")
    assert "[needs approval]" not in world.roost("ls").stdout


def test_approve_asks_on_a_terminal_and_a_no_changes_nothing(world: Env) -> None:
    imported_command_agent(world)
    code, out = in_terminal(world, "n", "approve", "guest")
    assert code == 0 and "'sh'" in out and "[y/N]" in out and "nothing approved" in out
    assert world.ls()["guest"]["needs_approval"] is True
    code, out = in_terminal(world, "y", "approve", "guest")
    assert code == 0 and "approved" in out
    assert world.ls()["guest"]["args"] == PROGRAM


def test_restore_leaves_it_waiting_and_names_approve(world: Env) -> None:
    """A tile that needs approval: the restore starts the others and names the way out."""
    work = world.tmp / "work"
    work.mkdir(exist_ok=True)
    data = one_agent(
        provider="command",
        args=PROGRAM,
        provider_session_id=None,
        cwd=str(work.resolve()),
        placement="tile",
        intent="running",
    )
    guest = data["agents"][0]
    data["tabs"] = [{**a_tab(), "layout": {"leaf": guest["id"]}, "focus": guest["id"]}]
    guest["tab_id"] = data["tabs"][0]["id"]
    world.roost("import", write(world, data))
    proc = world.roost("restore", check=False)
    assert proc.returncode == 1 and "roost approve guest" in proc.stdout, proc.stdout
    assert all(p["window"] != "guest" for p in world.panes())
    assert world.ls()["guest"]["needs_approval"] is True


def test_with_the_flag_the_command_agent_keeps_its_program(world: Env) -> None:
    said = imported_command_agent(world, "--allow-dangerous")
    assert "approve" not in said
    guest = world.ls()["guest"]
    assert guest["needs_approval"] is False and guest["args"] == PROGRAM
    world.roost("wake", "guest")
    world.wait_screen(world.pane_of("guest"), "ready-42")


def test_approve_of_an_agent_with_nothing_to_approve_says_so(world: Env) -> None:
    world.roost("import", write(world, one_agent()))
    proc = world.roost("approve", "guest", "--yes")
    assert "nothing to approve" in proc.stdout
    assert_refused(world, "approve", "nobody", "--yes", code=4, says="nobody")
