"""Issue 22: `roost fork` with the real Codex CLI 0.169.0 (offline, against the Responses
stand-in). `codex fork ID` starts a new session whose rollout holds no copy of the history: its
`session_meta` names `forked_from_id` and `forked_from_ordinal_exclusive`, and codex reads the
original's rollout up to there. So the fork's requests carry the original's history as it was at
the fork, the original's rollout is not written by the fork, and what the original says later
stays out of the fork."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess

import pytest
from test_real_codex import CodexWorld, codex_bin, cx  # noqa: F401  (fixtures)

from openai_responses_stub import REPLY_PREFIX, input_texts
from real_claude import wait_for
from real_codex import prepare_codex_home, rollout_meta, rollout_texts

pytestmark = [pytest.mark.tmux, pytest.mark.real_codex]


def sent_for(cx: CodexWorld, text: str) -> list[str]:  # noqa: F811
    """The user texts of the last request whose input holds `text`."""
    turn = [r for r in cx.stub.responses("main") if text in input_texts(r.body)][-1]
    return input_texts(turn.body)


def test_a_codex_fork_goes_on_with_a_copy_of_the_conversation(cx: CodexWorld) -> None:  # noqa: F811
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(cx.work)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "first"], check=True)
    key = hashlib.sha256(os.path.realpath(cx.work / ".git").encode()).hexdigest()[:8]
    fork_tree = cx.world.home / "worktrees" / f"work-{key}" / "fw"  # docs/WORKTREES.md
    prepare_codex_home(cx.codex_home, cx.stub.url, [cx.work, fork_tree])  # both trusted

    cx.spawn("cx")
    cx.reply("cx", "first message")
    sid = wait_for(lambda: cx.ls("cx")["provider_session_id"], 20, "cx's id")
    original = cx.rollout("cx")
    wait_for(
        lambda: REPLY_PREFIX + "first message" in rollout_texts(original, "assistant"),
        20,
        "the original's turn written out",
    )
    before = original.read_bytes()

    cx.world.roost("fork", "cx", "fk")
    cx.wait_status("fk", "idle", 60)
    cx.reply("fk", "fork message")
    fid = wait_for(lambda: cx.ls("fk")["provider_session_id"], 20, "the fork's id")
    assert fid != sid and cx.ls("fk")["cwd"] == str(cx.work)
    said = sent_for(cx, "fork message")  # the model got the original's history first
    assert said.index("first message") < said.index("fork message")
    copy = cx.rollout("fk")
    assert copy != original and rollout_meta(copy)["forked_from_id"] == sid
    assert rollout_texts(copy, "user") == ["fork message"]  # a reference, not a copy
    assert original.read_bytes() == before  # the fork did not write the original's rollout
    forked = next(
        e
        for e in json.loads(cx.world.roost("events", "fk", "--json").stdout)
        if e["kind"] == "forked"
    )
    assert forked["origin"] == "cx" and forked["session"] == sid

    # the original goes on; the fork does not see it (it reads only up to the fork's point)
    cx.reply("cx", "the original goes on")
    assert "fork message" not in sent_for(cx, "the original goes on")
    cx.reply("fk", "fork again")
    assert "the original goes on" not in sent_for(cx, "fork again")

    # a fork in a worktree of its own: codex finds the session by id from the new folder
    cx.world.roost("fork", "cx", "fw", "--worktree")
    fw = cx.ls("fw")
    assert fw["cwd"] == str(fork_tree) and fw["worktree"]["branch"] == "roost/fw"
    cx.wait_status("fw", "idle", 60)
    cx.reply("fw", "in the worktree")
    said = sent_for(cx, "in the worktree")
    assert said.index("first message") < said.index("in the worktree")
    assert "fork message" not in said  # a fork of cx's conversation, not of fk's
    assert rollout_meta(cx.rollout("fw"))["cwd"] == str(fork_tree)
