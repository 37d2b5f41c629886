"""Shared homes on a real tmux: a home is created and destroyed under its own lock, and never
destroyed while it holds anything but its keeper (another agent, or a window the user opened)."""

from __future__ import annotations

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux


def spawn_args(name: str, world: Env) -> tuple[str, ...]:
    return ("spawn", name, "--home", "team", "--cwd", str(world.tmp / "work"))


@pytest.mark.parametrize("how", ["rm", "hibernate"])
def test_a_window_the_user_opened_in_a_home_survives_its_last_agent(world: Env, how: str) -> None:
    world.roost(*spawn_args("a", world))
    world.tmux("new-window", "-d", "-t", "team:", "-n", "mine", "sleep", "1000")
    world.roost(how, "a")
    windows = [(p["session"], p["window"]) for p in world.panes()]
    assert windows == [("team", "home"), ("team", "mine")]
    # the home stays usable: the next agent moves in beside the user's window
    world.roost(*spawn_args("b", world))
    assert sorted(p["window"] for p in world.panes()) == ["b", "home", "mine"]
    assert {p["session"] for p in world.panes()} == {"team"}


def test_a_home_with_nothing_but_its_keeper_left_goes(world: Env) -> None:
    world.roost(*spawn_args("a", world))
    world.roost(*spawn_args("b", world))
    world.roost("rm", "a")
    assert [p["window"] for p in world.panes()] == ["home", "b"]
    world.roost("hibernate", "b")
    assert world.panes() == []


@pytest.mark.timeout(600)  # 20 rounds of three roost commands; slow on a loaded machine
def test_removing_the_last_agent_while_another_moves_in_never_kills_the_newcomer(
    world: Env,
) -> None:
    for round_ in range(20):
        world.roost(*spawn_args("a", world))
        leaving = world.roost_start("rm", "a")
        arriving = world.roost_start(*spawn_args("b", world))
        for proc in (leaving, arriving):
            _out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, (round_, err)
        agents = world.ls()
        assert set(agents) == {"b"}, round_
        assert agents["b"]["state"] == "running", (round_, world.panes())
        live = [p for p in world.panes() if p["window"] == "b" and p["dead"] == "0"]
        assert len(live) == 1, (round_, world.panes())
        world.roost("rm", "b")
        assert world.panes() == [], round_
