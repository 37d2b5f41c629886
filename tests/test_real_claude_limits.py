"""Issue 23 on the real Claude Code CLI (pinned, offline against the Messages API stand-in): the
stand-in answers as the API does when a subscription's usage limit is hit (429
`rate_limit_error` with the `anthropic-ratelimit-unified-*` headers), and what Claude Code
shows and reports for it reads as roost says."""

from __future__ import annotations

import time

import pytest

from anthropic_stub import running_stub
from conftest import Env
from real_claude import real_world

pytestmark = [pytest.mark.tmux, pytest.mark.real_claude]


def test_a_usage_limit_on_the_real_claude(world: Env) -> None:
    reset = int(time.time()) + 3 * 3600
    with running_stub() as stub:
        real_world(world, stub.url, CLAUDE_CODE_MAX_RETRIES="0")
        # A subscription's login (an OAuth token, not an API key): only then does Claude Code
        # name the limit and its reset; with an API key a 429 reads "API Error: Request
        # rejected (429) · …" (an `error`: a per-minute rate limit passes by itself).
        world.env.pop("ANTHROPIC_API_KEY", None)
        world.env["CLAUDE_CODE_OAUTH_TOKEN"] = "sk-ant-oat01-" + "x" * 40
        world.roost("spawn", "cc", "--cwd", str(world.tmp / "work"))
        world.wait_status("cc", "idle", 60)
        stub.fail_with(
            429,
            "rate_limit_error",
            "This request would exceed your account's rate limit. Please try again later.",
            headers={
                "anthropic-ratelimit-unified-status": "rejected",
                "anthropic-ratelimit-unified-reset": str(reset),
                "anthropic-ratelimit-unified-representative-claim": "five_hour",
                "anthropic-ratelimit-unified-5h-status": "rejected",
                "anthropic-ratelimit-unified-5h-reset": str(reset),
                "anthropic-ratelimit-unified-5h-utilization": "1.0",
                "retry-after": "10800",
            },
        )
        world.roost("send", "cc", "are you up?", check=False)
        seen = world.wait_status("cc", "limited", 60)
        # Claude Code 2.1.332 with a subscription's login: StopFailure error "rate_limit" and
        # its words, the reset to the minute in the machine's zone.
        assert seen["status_source"] == "hook"
        assert seen["status_reason"].startswith("You've hit your 5-hour limit · resets ")
        assert seen["limit_kind"] == "session"
        assert 0 <= reset - seen["limit_resets_at"] < 60
        refused = world.roost("send", "cc", "and now?", check=False, timeout=30)
        assert refused.returncode == 1 and "cc is limited until " in refused.stderr
        assert "(in 2 h 59 min)" in refused.stderr or "(in 2 h 58 min)" in refused.stderr
        # its record carries the exact epoch too (roost reads the words' minute for now). The
        # StopFailure hook can fire before Claude Code writes the file or appends that record:
        # wait for both.
        projects = world.tmp / "user" / ".claude" / "projects"
        sid = seen["provider_session_id"]
        transcript = world.wait_for(
            lambda: next(projects.rglob(f"{sid}.jsonl"), None), 30, "its transcript"
        )
        world.wait_for(
            lambda: f'"resetsAt":{reset}' in transcript.read_text(), 30, "the transcript's record"
        )
