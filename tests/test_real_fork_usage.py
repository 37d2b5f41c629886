"""Issue 35: a fork's usage is its own turns only, with the real CLIs (offline, against the API
stand-ins). Claude Code 2.1.332 copies the original's messages (ids kept) into the fork's
transcript; Codex 0.169.0 writes no copy, but its running totals in the fork's rollout go on
from the original's. Either way the original's history counted again inflated every tree total
and budget; now the fork counts what the stand-in answered for its own turns."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_real_codex import CodexWorld, codex_bin, cx  # noqa: F401  (fixtures)

from anthropic_stub import running_stub
from conftest import Env
from openai_responses_stub import REPLY_PREFIX
from real_claude import real_world, transcript_path, wait_for

pytestmark = pytest.mark.tmux


def per_agent(world: Env) -> dict[str, int]:
    report = json.loads(world.roost("usage", "--json").stdout)
    found: dict[str, int] = {}
    for row in report["rows"]:
        found[row["who"]] = found.get(row["who"], 0) + row["total"]
    return {**found, "all": report["total"]["total"]}


def counted(world: Env, expected: dict[str, int], what: str) -> None:
    """Wait until `roost usage` counts `expected`: Codex writes a token_count whose `info` is
    null before the one with the totals, and a line can be read before its newline is written,
    so the bytes `token_count` in the rollout are no sign the figures are there yet."""
    wait_for(
        lambda: per_agent(world) == expected,
        20,
        what,
        on_timeout=lambda: f"counted {per_agent(world)}, expected {expected}",
    )


def answered(requests: list[Any], text: str) -> int:
    """The tokens the stand-in answered for the turns whose last user message holds `text`
    (the Messages API's `messages`, the Responses API's `input`)."""
    found = 0
    for r in requests:
        items = r.body.get("messages") or r.body.get("input") or []
        said = [m for m in items if isinstance(m, dict) and m.get("role") == "user"][-1:]
        if r.usage and text in json.dumps(said):
            found += r.usage["input_tokens"] + r.usage["output_tokens"]
    return found


@pytest.mark.real_claude
def test_a_claude_fork_counts_its_own_turns(world: Env) -> None:
    work = world.tmp / "work"
    with running_stub() as stub:
        real_world(world, stub.url)
        world.roost("spawn", "cc", "--cwd", str(work))
        world.wait_status("cc", "idle", 60)
        world.roost("send", "cc", "first message", "--wait")
        original = transcript_path(world.user_home, work, world.ls()["cc"]["provider_session_id"])
        world.wait_for(
            lambda: b'"subtype":"turn_duration"' in original.read_bytes(), what="the turn written"
        )
        mine = answered(stub.messages("main"), "first message")
        assert mine and per_agent(world) == {"cc": mine, "all": mine}
        world.roost("fork", "cc", "fk")
        world.wait_status("fk", "idle", 60)
        assert per_agent(world) == {"cc": mine, "all": mine}  # the fork has said nothing yet
        world.roost("send", "fk", "fork message", "--wait")
        copy = transcript_path(world.user_home, work, world.ls()["fk"]["provider_session_id"])
        world.wait_for(
            lambda: b'"subtype":"turn_duration"' in copy.read_bytes().split(b"fork message")[-1],
            what="the fork's turn written",
        )
        assert b"first message" in copy.read_bytes()  # the original's history, copied
        own = answered(stub.messages("main"), "fork message")
        assert per_agent(world) == {"cc": mine, "fk": own, "all": mine + own}
        assert world.ls()["fk"]["usage"]["total"] == own
        # Claude Code's default model has a price now (it showed "?")
        assert world.ls()["fk"]["usage"]["cost_usd"] is not None


@pytest.mark.real_codex
def test_a_codex_fork_counts_its_own_turns(cx: CodexWorld) -> None:  # noqa: F811
    cx.spawn("cx")
    cx.reply("cx", "first message")
    wait_for(lambda: cx.ls("cx")["provider_session_id"] and cx.rollout("cx"), 20, "its rollout")
    mine = answered(cx.stub.responses("main"), "first message")
    assert mine
    counted(cx.world, {"cx": mine, "all": mine}, "the original's totals")
    cx.world.roost("fork", "cx", "fk")
    cx.wait_status("fk", "idle", 60)
    cx.reply("fk", "fork message")
    wait_for(lambda: cx.ls("fk")["provider_session_id"] and cx.rollout("fk"), 20, "its rollout")
    own = answered(cx.stub.responses("main"), "fork message")
    assert REPLY_PREFIX + "fork message" in cx.screen("fk")
    # the fork's rollout holds no copy: its totals are its own turn's
    counted(cx.world, {"cx": mine, "fk": own, "all": mine + own}, "the fork's totals")
