"""Starts under watch on the fake tmux and a manual clock (issue 19, item 5): restore's and
spawn's watch (ops.holding) keeps a CLI's start pending, past the old fixed 3 s, until it shows
it is ready or lived well past its slowest measured start; one that dies meanwhile is failed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_app import fake_app

from roost.core import status
from roost.core.clock import ManualClock
from roost.ops import holding, lifecycle
from roost.ops.context import App
from roost.providers import traits
from roost.tmux.fake import FakeTmux


@pytest.fixture
def app(tmp_path: Path, fake: FakeTmux, clock: ManualClock) -> Iterator[App]:
    app = fake_app(tmp_path, fake, clock, {})
    app.environ["ROOST_GEMINI_BIN"] = "/bin/sh"  # the fake tmux never runs it
    yield app
    app.close()


def test_a_slow_start_that_dies_of_a_bad_flag_is_failed(
    app: App, fake: FakeTmux, clock: ManualClock
) -> None:
    fake.on_start = lambda pane: fake.set_screen(pane.id, "loading")  # not ready yet
    agent = lifecycle.spawn(app, "gm", provider="gemini", cwd=str(app.paths.home)).agent
    pane = fake.pane_of(agent.id)
    watch = holding.Watch(app)  # its start, as restore watches it
    watch.add(agent)
    clock.advance(20.0)  # gemini's bad-flag death came after 19-26 s on a loaded machine
    watch.look()
    assert [s.agent.id for s in watch.starting()] == [agent.id]
    fake.set_screen(pane.id, "Unknown arguments: such-flag\nUsage: gemini [options]\n-h")
    fake.exit(pane.id, 1)
    died = watch.settle()
    assert died[agent.id].exit_status == 1
    assert died[agent.id].words.startswith("Unknown arguments: such-flag")
    assert app.store.require("gm").last_error == died[agent.id].reason


def test_a_start_that_shows_its_prompt_holds_at_once(
    app: App, fake: FakeTmux, clock: ManualClock
) -> None:
    fake.on_start = lambda pane: fake.set_screen(pane.id, "│ > Type your message or @path")
    lifecycle.spawn(app, "gm", provider="gemini", cwd=str(app.paths.home))
    assert clock.monotonic() < 1.0


def test_a_live_start_that_never_shows_ready_holds_after_its_window(
    app: App, fake: FakeTmux, clock: ManualClock
) -> None:
    fake.on_start = lambda pane: fake.set_screen(pane.id, "loading")
    lifecycle.spawn(app, "gm", provider="gemini", cwd=str(app.paths.home))  # held: no error
    window = status.start_window(traits.GEMINI.start_time)
    assert window <= clock.monotonic() < window + 1.0
