"""Races: concurrent spawns and wakes of one agent end in exactly one home and one process."""

from __future__ import annotations

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux


def test_twenty_concurrent_spawns_of_one_name_make_one_agent(world: Env) -> None:
    results = world.roost_together(*[("spawn", "racer", "--cwd", str(world.tmp / "work"))] * 20)
    winners = [r for r in results if r.returncode == 0]
    losers = [r for r in results if r.returncode != 0]
    assert len(winners) == 1, [r.stderr for r in results]
    for r in losers:
        assert (
            r.stderr.strip() == "roost: agent 'racer' already exists and is running "
            "(roost attach racer)"
        ), r.stderr
    panes = world.panes()
    assert [(p["session"], p["window"]) for p in panes] == [("racer", "home"), ("racer", "racer")]
    assert len(world.ls()) == 1
    world.last_start(1)
    assert len(world.starts()) == 1  # one agent process ever started


def test_concurrent_wakes_start_one_process(world: Env) -> None:
    world.roost("spawn", "sleeper", "--cwd", str(world.tmp / "work"))
    world.last_start(1)
    world.roost("kill", "sleeper")
    results = world.roost_together(*[("wake", "sleeper")] * 10)
    assert all(r.returncode == 0 for r in results), [r.stderr for r in results]
    assert sum("woke sleeper" in r.stdout for r in results) == 1
    assert sum("already running" in r.stdout for r in results) == 9
    world.last_start(2)
    assert len(world.starts()) == 2
    live = [p for p in world.panes() if p["roost_id"] and p["dead"] == "0"]
    assert len(live) == 1


def test_concurrent_spawns_of_different_names_into_one_team_home(world: Env) -> None:
    names = [f"t{i}" for i in range(8)]
    work = str(world.tmp / "work")
    results = world.roost_together(*[("spawn", n, "--home", "team", "--cwd", work) for n in names])
    assert all(r.returncode == 0 for r in results), [r.stderr for r in results]
    panes = world.panes()
    assert {p["session"] for p in panes} == {"team"}
    assert sorted(p["window"] for p in panes if p["roost_id"]) == names
    assert sum(p["keeper"] == "1" for p in panes) == 1
