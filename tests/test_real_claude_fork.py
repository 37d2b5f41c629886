"""Issue 22: `roost fork` with the real Claude Code (offline, against the API stand-in): the
fork's next turn holds the original's history, and the original's transcript is unchanged."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from anthropic_stub import running_stub
from conftest import Env
from real_claude import (
    prepare_home,
    read_transcript,
    real_world,
    transcript_path,
    transcript_texts,
)

pytestmark = [pytest.mark.tmux, pytest.mark.real_claude]


def users(path: Path) -> list[str]:
    return transcript_texts(read_transcript(path), "user") if path.exists() else []


def test_a_fork_goes_on_with_a_copy_of_the_conversation(world: Env) -> None:
    work = world.tmp / "work"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(work)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "first"], check=True)
    key = hashlib.sha256(os.path.realpath(work / ".git").encode()).hexdigest()[:8]
    fork_tree = world.home / "worktrees" / f"work-{key}" / "fw"  # docs/WORKTREES.md's layout
    with running_stub() as stub:
        real_world(world, stub.url)
        prepare_home(world.user_home, [work, fork_tree])  # both folders trusted
        world.roost("spawn", "cc", "--cwd", str(work))
        world.wait_status("cc", "idle", 60)
        world.roost("send", "cc", "first message", "--wait")
        sid = world.ls()["cc"]["provider_session_id"]
        original = transcript_path(world.user_home, work, sid)
        # the turn's last line (its own, written after the Stop hook) before the snapshot
        world.wait_for(
            lambda: original.exists() and b'"subtype":"turn_duration"' in original.read_bytes(),
            what="the original's turn written out",
        )
        before = original.read_bytes()

        world.roost("fork", "cc", "fk")
        world.wait_status("fk", "idle", 60)
        fork = world.ls()["fk"]
        assert fork["provider_session_id"] not in (None, sid) and fork["cwd"] == str(work)
        reply = world.roost("send", "fk", "fork message", "--wait").stdout
        assert "stub reply: fork message" in reply
        # the turn the API saw carried the original's history before the fork's message
        [turn] = [r for r in stub.requests if "fork message" in str(r.body.get("messages"))][-1:]
        history = str(turn.body["messages"])
        assert history.index("first message") < history.index("fork message")
        copy = transcript_path(world.user_home, work, fork["provider_session_id"])
        world.wait_for(lambda: "fork message" in " ".join(users(copy)), what="fork transcript")
        said = " ".join(users(copy))
        assert said.index("first message") < said.index("fork message")
        assert original.read_bytes() == before  # the original's conversation is its own
        log = json.loads(world.roost("events", "fk", "--json").stdout)
        kinds = {e["kind"]: e for e in log}
        assert kinds["forked"]["origin"] == "cc" and kinds["forked"]["session"] == sid

        # a fork in a worktree of its own: the conversation follows it to the new folder
        world.roost("fork", "cc", "fw", "--worktree")
        fw = world.ls()["fw"]
        assert fw["cwd"] == str(fork_tree) and fw["worktree"]["branch"] == "roost/fw"
        world.wait_status("fw", "idle", 60)
        assert (
            "stub reply: in the worktree"
            in world.roost("send", "fw", "in the worktree", "--wait").stdout
        )
        moved = transcript_path(world.user_home, fork_tree, fw["provider_session_id"])
        world.wait_for(lambda: "in the worktree" in " ".join(users(moved)), what="its transcript")
        said = " ".join(users(moved))
        assert said.index("first message") < said.index("in the worktree")
        assert "fork message" not in said  # a copy of cc's conversation, not of fk's
        assert original.read_bytes() == before
