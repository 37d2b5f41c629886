"""Issue 23 on a real tmux with the fake Claude: a usage limit (its StopFailure and words) reads
`limited` with its reset time; `send` refuses at once, never typing into it; the limit outlives
the tmux server's death, so `restore` starts none of that account's agents and `send` still
refuses without waking it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux


def limit_words(hours: float) -> tuple[str, float]:
    """Claude's words for a limit that resets about `hours` from now (on the hour, in UTC), and
    that reset as an epoch."""
    reset = (datetime.now(UTC) + timedelta(hours=hours)).replace(minute=0, second=0, microsecond=0)
    clock = f"{reset.hour % 12 or 12}{'am' if reset.hour < 12 else 'pm'}"
    return f"You've hit your session limit · resets {clock} (UTC)", reset.timestamp()


def test_a_limit_is_refused_kept_through_a_server_death_and_not_restored(world: Env) -> None:
    words, reset = limit_words(3)
    env = {"FAKE_AGENT_LIMIT_WORDS": words}
    for name in ("cl", "c2"):
        world.roost("spawn", name, "--cwd", str(world.tmp / "work"), env=env)
    world.wait_status("cl", "idle")
    world.roost("send", "cl", "fail limit", check=False)
    seen = world.wait_status("cl", "limited")
    assert seen["status_reason"] == words
    assert seen["limit_kind"] == "session" and seen["limit_resets_at"] == reset

    pane = world.pane_of("cl")
    refused = world.roost("send", "cl", "are you there?", check=False)
    assert refused.returncode != 0
    assert "cl is limited until" in refused.stderr and "(in 2 h" in refused.stderr
    assert "are you there?" not in world.screen(pane)  # never typed into it

    starts = len(world.starts())
    world.tmux("kill-server")
    restored = world.roost("restore", "--json", check=False)
    report = json.loads(restored.stdout)
    assert restored.returncode == 1 and report["started"] == 0
    assert sorted(report["not_started_agents"]) == ["c2", "cl"]
    assert any("claude's account is limited until" in line for line in report["advice"])
    refused = world.roost("send", "cl", "hello", check=False)
    assert refused.returncode != 0 and "cl is limited until" in refused.stderr
    assert len(world.starts()) == starts  # nothing was started
    [listed] = json.loads(world.roost("limits", "--json").stdout)
    assert (listed["name"], listed["kind"], listed["resets_at"]) == ("cl", "session", reset)
    assert "cl  claude  session  resets " in world.roost("limits").stdout


def test_starts_of_one_account_are_spread_out(world: Env) -> None:
    """Issue 23, part 3: a restore never starts many agents of one account at the same instant
    (single-use refresh tokens race): the first start of a provider is a canary, alone until it
    held (restore's queue, ops/restore.py), even with no stagger and room for all at once."""
    names = [f"s{i}" for i in range(4)]
    for name in names:
        world.roost("spawn", name, "--cwd", str(world.tmp / "work"))
    for name in names:
        world.wait_status(name, "idle")
    world.tmux("kill-server")
    before = len(world.starts())
    slow = {"FAKE_AGENT_START_DELAY": "2"}  # each CLI shows its prompt 2 s after it started
    done = world.roost("restore", "--json", "--concurrency", "4", "--stagger", "0", env=slow)
    assert json.loads(done.stdout)["started"] == 4
    times = sorted(datetime.fromisoformat(s["time"]) for s in world.starts()[before:])
    assert len(times) == 4
    # the canary ran alone until its prompt showed; the rest then started together
    assert (times[1] - times[0]).total_seconds() >= 1.5, times
