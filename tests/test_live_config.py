"""Live config (issue 36 point 5, begun): the running service reads config.toml again when it
changes and tells the components that react to it. A `[budget] max_live` written while
agents idle is applied at once; before, it waited for the next turn's end (or a restart)."""

from __future__ import annotations

import pytest
from test_stop_intent import IDLE, configure, spawn, statuses

from conftest import Env

pytestmark = pytest.mark.tmux


def test_a_max_live_written_while_the_service_runs_is_applied_without_a_turn(world: Env) -> None:
    configure(world)
    world.start_service()
    names = ["a", "b", "c"]
    spawn(world, names, IDLE)
    world.wait_for(
        lambda: all(statuses(world).get(n) == "idle" for n in names), 60, "every agent idle"
    )
    configure(world, max_live=1)
    hibernated = world.wait_for(
        lambda: (
            (found := [n for n, s in statuses(world).items() if s == "hibernated"])
            and len(found) == 2
            and found
        ),
        30,
        "two agents hibernated by the new max_live",
    )
    assert len(set(hibernated)) == 2
    assert sum(statuses(world)[n] == "idle" for n in names) == 1
