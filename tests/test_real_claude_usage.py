"""Usage per agent with the real Claude Code (pinned 2.1.332, offline against the Messages API
stand-in): the tokens `roost usage` and `roost ls --json` report are the ones the stand-in
answered in `usage` for the conversation's turns, each counted once (issue 23 part 4)."""

from __future__ import annotations

import json

import pytest

from anthropic_stub import running_stub
from conftest import Env
from real_claude import real_world

pytestmark = [pytest.mark.tmux, pytest.mark.real_claude]


@pytest.mark.service
def test_usage_totals_are_what_the_api_answered(world: Env) -> None:
    with running_stub() as stub:
        real_world(world, stub.url)
        world.roost("spawn", "cu", "--cwd", str(world.tmp / "work"))
        world.wait_status("cu", "idle", 60)
        world.roost("send", "cu", "first question about usage")
        world.wait_status("cu", "idle", 60)
        world.roost("send", "cu", "a second, longer question about what it costs")
        world.wait_status("cu", "idle", 60)
        answered = [r.usage for r in stub.messages("main") if r.usage]
        # The roost service read the transcript at the turn's end: `ls --json` reads no file.
        want = sum(u["input_tokens"] + u["output_tokens"] for u in answered)
        listed = world.wait_for(
            lambda: (u := world.ls()["cu"]["usage"])["total"] == want and u, 120, "usage read"
        )
        report = json.loads(world.roost("usage", "cu", "--json").stdout)
    assert len(answered) == 2
    total = report["total"]
    assert total["input"] == sum(u["input_tokens"] for u in answered)
    assert total["output"] == sum(u["output_tokens"] for u in answered)
    assert (total["cache_write"], total["cache_read"]) == (0, 0)
    assert {r["model"] for r in report["rows"]} == {u["model"] for u in answered}
    # Claude Code's default model (what it asked the stand-in for) has a price (issue 35)
    assert listed["cost_usd"] is not None and report["total"]["cost_usd"] is not None
    assert report["estimate"] is True
    assert {k: listed[k] for k in ("input", "output", "total")} == {
        k: total[k] for k in ("input", "output", "total")
    }
