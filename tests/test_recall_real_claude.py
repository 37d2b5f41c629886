"""Recall (issue 39) with the real Claude Code (offline, against the API stand-in): a turn sent
through roost is found by a word only it holds, with its agent and turn, in the transcript the
pinned CLI wrote; a fork at that turn goes on, and its own turn is found under its name."""

from __future__ import annotations

import json
from typing import Any

import pytest

from anthropic_stub import running_stub
from conftest import Env
from real_claude import prepare_home, real_world, transcript_path

pytestmark = [pytest.mark.tmux, pytest.mark.real_claude]


def search(world: Env, *args: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(world.roost("search", *args, "--json").stdout)
    return found


def test_a_turn_sent_to_claude_is_found_with_its_agent_and_turn(world: Env) -> None:
    work = world.tmp / "work"
    with running_stub() as stub:
        real_world(world, stub.url)
        prepare_home(world.user_home, [work])
        world.roost("spawn", "cc", "--cwd", str(work))
        world.wait_status("cc", "idle", 60)
        world.roost("send", "cc", "remember the word zanzibarquux", "--wait")
        sid = world.ls()["cc"]["provider_session_id"]
        path = transcript_path(world.user_home, work, sid)
        world.wait_for(
            lambda: path.exists() and b'"subtype":"turn_duration"' in path.read_bytes(),
            what="the turn written out",
        )
        hits = search(world, "zanzibarquux")
        assert {(h["ref"], h["role"], h["session"]) for h in hits} >= {
            ("cc@1", "user", sid),
            ("cc@1", "agent", sid),  # the stand-in's reply echoes the prompt
        }
        shown = world.roost("show", "cc@1").stdout
        assert "remember the word zanzibarquux" in shown and "[agent]" in shown

        world.roost("fork", "cc@1", "fk")
        world.wait_status("fk", "idle", 60)
        world.roost("send", "fk", "the fork says xylophonequark", "--wait")
        fork_sid = world.ls()["fk"]["provider_session_id"]
        copy = transcript_path(world.user_home, work, fork_sid)
        world.wait_for(
            lambda: copy.exists() and b"xylophonequark" in copy.read_bytes(), what="fork turn"
        )
        found = search(world, "xylophonequark", "--role", "user")
        assert [(h["ref"], h["session"]) for h in found] == [("fk@2", fork_sid)]
        # the fork's copy of the original's turn is the fork's own first turn
        assert {h["ref"] for h in search(world, "zanzibarquux", "--role", "user")} == {
            "cc@1",
            "fk@1",
        }
