"""The TUI's search mode (issue 39: `F`): a query's hits in an OptionList (agent@turn, who and
when, the match bold), Enter goes to the hit's agent in the list, `f` forks at that turn
through a form; by Pilot on canned data, a snapshot, and LiveSource over real records."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC
from typing import Any

import pytest
from test_tui import SIZE, selected_name, settle, shown
from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from roost.tui.app import FormScreen, RoostApp
from roost.tui.demo import HITS, NOW, StaticSource
from roost.tui.live import LiveSource
from roost.tui.searchview import SearchScreen, hit_text

from conftest import Env


def app_on(source: StaticSource) -> RoostApp:
    return RoostApp(
        source=source, attacher=lambda argv: None, refresh_every=0, clock=lambda: NOW, zone=UTC
    )


def test_a_hit_shows_its_agent_turn_and_the_match_bold() -> None:
    text = hit_text(HITS[0])
    assert text.plain.splitlines() == [
        "api@12  user · claude · 2026-11-29T12:00:00Z",
        "  retry the flaky login redirect test",
    ]
    bold = [text.plain[s.start : s.end] for s in text.spans if "yellow" in str(s.style)]
    assert bold == ["flaky"]


def test_f_searches_enter_goes_to_the_agent_and_f_forks_at_the_turn() -> None:
    source = StaticSource()

    async def run() -> None:
        app = app_on(source)
        async with app.run_test(size=(120, 32)) as pilot:
            await settle(pilot, app, lambda: app.rows)
            await pilot.press("F")
            await settle(pilot, app, lambda: isinstance(app.screen, SearchScreen))
            screen = app.screen
            assert isinstance(screen, SearchScreen)
            screen.query_one(Input).value = "flaky"
            await pilot.press("enter")
            await settle(pilot, app, lambda: len(screen.hits) == 2)
            assert ("search", "flaky") in source.calls
            await pilot.press("f")
            await settle(pilot, app, lambda: isinstance(app.screen, FormScreen))
            app.screen.query_one(Input).value = "api-again"
            await pilot.press("enter")
            await settle(pilot, app, lambda: ("fork_at", "api@12", "api-again") in source.calls)
            await settle(pilot, app, lambda: app.screen is screen)
            screen.query_one("#hits", OptionList).highlighted = 1
            await pilot.press("enter")  # the second hit: frontend's turn
            await settle(pilot, app, lambda: not isinstance(app.screen, SearchScreen))
            assert selected_name(app) == "frontend"
            assert "forked api-again from api@12 (claude)" in [
                str(n.message) for n in app._notifications
            ]

    asyncio.run(run())


def test_snapshot_search_mode(snap_compare: Callable[..., bool]) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await shown(pilot)
        await pilot.press("F")
        await pilot.pause(0.2)
        pilot.app.screen.query_one(Input).value = "flaky"
        await pilot.press("enter")
        await shown(pilot)
        await pilot.pause(0.3)

    assert snap_compare(app_on(StaticSource()), terminal_size=SIZE, run_before=before)


@pytest.mark.tmux
def test_the_live_source_finds_a_turn_and_forks_at_an_earlier_one(
    world: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.roost("spawn", "cl", "--cwd", str(world.tmp / "work"))
    world.wait_status("cl", "idle")
    world.roost("send", "cl", "the longan cache")
    world.roost("send", "cl", "and the tests")
    for key, value in world.env.items():
        monkeypatch.setenv(key, value)
    source = LiveSource()
    hits = world.wait_for(lambda: source.search("longan"), what="the turn indexed")
    assert {h.ref for h in hits} == {"cl@1"}
    assert source.fork_at("cl@1", "cl-two") == "forked cl-two from cl@1 (claude)"
    world.wait_status("cl-two", "idle")
    with pytest.raises(Exception, match="agent 'cl-two' already exists"):
        source.fork_at("cl@1", "cl-two")
