"""Issue 23, part 3 on a real tmux with the fake Claude: a restore never starts agents of one
account at the same instant (their CLIs refresh one shared login at start, and single-use
refresh tokens make simultaneous refreshes log each other out), whatever the stagger."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux


def test_restore_spaces_the_starts_of_one_account_by_the_account_gap(world: Env) -> None:
    world.home.mkdir(parents=True, exist_ok=True)
    (world.home / "config.toml").write_text("[restore]\naccount_gap = 2.0\n")
    names = [f"s{i}" for i in range(4)]
    for name in names:
        world.roost("spawn", name, "--cwd", str(world.tmp / "work"))
    for name in names:
        world.wait_status(name, "idle")
    world.tmux("kill-server")
    before = len(world.starts())
    # room for all at once and no stagger: only the account's gap spaces them
    done = world.roost("restore", "--json", "--concurrency", "4", "--stagger", "0")
    assert json.loads(done.stdout)["started"] == 4
    times = sorted(datetime.fromisoformat(s["time"]) for s in world.starts()[before:])
    assert len(times) == 4
    # After the canary held, roost launches the other three 2 s apart. Each CLI logs its start
    # once its own (Python) process is up, which under load adds from 0.3 to ~2 s, so the span
    # of the three is measured: 4 s +- that (before: 0.83 s, as fast as the wakes went).
    span = (times[3] - times[1]).total_seconds()
    assert span >= 3.0, times
