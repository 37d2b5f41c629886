"""An import never turns permission checks off unless the person says so (issue 18, item 13).

Before: `settings.dangerous = "1"` in a file with no agents switched every later spawn to
dangerous mode; agents came in with `dangerous: true`, `--dangerously-skip-permissions` in their
arguments and a `transcript_path` of /etc/shadow (which read_conversation then reads); a 100 MB
key no roost knows was read and ignored. Now: dangerous mode and CLI arguments are left off and
listed unless `--allow-dangerous` is given; a path outside the agent's own files and an unknown
key are refused, nothing changed."""

from __future__ import annotations

import sqlite3
import uuid
from typing import Any

import pytest
from test_bad_input import assert_refused
from test_import_hostile import one_agent, write

from conftest import Env

pytestmark = pytest.mark.tmux

HOSTILE_ARGS = ["--dangerously-skip-permissions", "--model", "opus"]


def setting(world: Env, key: str) -> list[tuple[str]]:
    conn = sqlite3.connect(world.home / "roost.db")
    try:
        return conn.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchall()
    finally:
        conn.close()


def test_an_import_with_no_agents_never_switches_the_workspace_to_dangerous(world: Env) -> None:
    data = {
        "format": "roost-workspace",
        "version": 1,
        "settings": {"dangerous": "1"},
        "tabs": [],
        "agents": [],
        "pins": [],
    }
    out = world.roost("import", write(world, data)).stdout
    assert "imported 0 agents" in out and "left off" in out and "settings.dangerous" in out
    assert setting(world, "dangerous") == []
    world.roost("spawn", "later", "--cwd", str(world.tmp / "work"))
    assert world.ls()["later"]["dangerous"] is False


def test_an_agent_comes_in_without_dangerous_mode_and_arguments_and_says_so(world: Env) -> None:
    out = world.roost("import", write(world, one_agent(dangerous=True, args=HOSTILE_ARGS))).stdout
    assert "imported 1 agents" in out
    assert "guest: dangerous mode" in out and "--dangerously-skip-permissions" in out
    guest = world.ls()["guest"]
    assert guest["dangerous"] is False and guest["args"] == []


def test_allow_dangerous_keeps_them(world: Env) -> None:
    data = one_agent(dangerous=True, args=HOSTILE_ARGS)
    data["settings"] = {"dangerous": "1"}
    out = world.roost("import", "--allow-dangerous", write(world, data)).stdout
    assert "left off" not in out
    guest = world.ls()["guest"]
    assert guest["dangerous"] is True and guest["args"] == HOSTILE_ARGS
    assert setting(world, "dangerous") == [("1",)]


@pytest.mark.parametrize(
    "path",
    [
        "/etc/shadow",
        "{claude}/projects/-srv-w/{other}.jsonl",  # another conversation's transcript
        "{claude}/projects/-srv-w/../../../../etc/{sid}.jsonl",
        "{claude}/{sid}.jsonl",
    ],
    ids=["etc-shadow", "another-session", "dot-dot", "not-under-projects"],
)
def test_a_transcript_outside_the_agents_own_files_is_refused(world: Env, path: str) -> None:
    sid, claude = str(uuid.uuid4()), world.user_home / ".claude"
    given = path.format(claude=claude, sid=sid, other=uuid.uuid4())
    data = one_agent(provider_session_id=sid, transcript_path=given)
    assert_refused(
        world,
        "import",
        "--allow-dangerous",
        write(world, data),
        code=2,
        says="agents[0].transcript_path: ",
    )
    assert "guest" not in world.ls()


def test_the_agents_own_transcript_is_taken(world: Env) -> None:
    sid = str(uuid.uuid4())
    own = world.user_home / ".claude" / "projects" / "-srv-w" / f"{sid}.jsonl"
    world.roost(
        "import", write(world, one_agent(provider_session_id=sid, transcript_path=str(own)))
    )
    assert "guest" in world.ls()


def test_a_key_roost_does_not_know_is_refused(world: Env) -> None:
    data: dict[str, Any] = one_agent()
    data["padding"] = "x" * 1_000_000
    assert_refused(
        world,
        "import",
        write(world, data),
        code=2,
        says="'padding' is not part of a roost workspace export",
    )


@pytest.mark.parametrize(
    "change",
    [{"cwd": "/srv/\ud800"}, {"last_error": "x\ud800"}, {"args": ["--model", "\udfff"]}],
    ids=["cwd", "last_error", "args"],
)
def test_a_lone_surrogate_anywhere_is_one_line_not_a_traceback(
    world: Env, change: dict[str, Any]
) -> None:
    assert_refused(
        world,
        "import",
        "--allow-dangerous",
        write(world, one_agent(**change)),
        code=2,
        says="holds a lone surrogate",
    )
