"""An App on the in-memory tmux (roost.tmux.fake): the shared set-up of the fast operation tests.

Its world is injected, never patched: the test's manual clock, and a fake process table
(tests/fake_procs.py) in which an agent's process is its fake pane; stopping it ends the pane as
SIGTERM would.
"""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fake_procs import FakeProcesses

from roost.core.clock import ManualClock
from roost.core.settings import Settings, parse
from roost.ops.context import App
from roost.ops.root import ON_STATUS
from roost.store.db import Store
from roost.system import config as cfg
from roost.tmux.fake import FakeTmux

PROMPT = "ready>"  # what the fake agents' screens show when they wait for input
# When the fake world's clocks start: years from any day the suite runs on, so that a stamp
# or a deadline read from the real clock instead shows (tests/test_world_injected.py).
WORLD_START = datetime(2031, 3, 4, 5, 6, 7, tzinfo=UTC)


def manual_clock() -> ManualClock:
    return ManualClock(WORLD_START)


def fake_tmux() -> FakeTmux:
    tmux = FakeTmux()
    tmux.on_start = lambda pane: tmux.set_screen(pane.id, PROMPT)  # drawn at once
    return tmux


def fake_app(tmp_path: Path, fake: FakeTmux, clock: ManualClock, settings: dict[str, Any]) -> App:
    paths = cfg.Paths(tmp_path / "home")
    cfg.ensure_private_dir(paths.home)
    return App(
        paths=paths,
        store=Store.open(paths.db, clock=clock),
        tmux=fake,
        environ={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
        settings=parse(settings),
        clock=clock,
        procs=FakeProcesses(fake, str(paths.home), clock),
        on_status=ON_STATUS,  # the reactions every real App carries (ops/root.py)
    )


def procs_of(app: App) -> FakeProcesses:
    """The fake process table of an App fake_app made."""
    assert isinstance(app.procs, FakeProcesses)
    return app.procs


def clock_of(app: App) -> ManualClock:
    """The manual clock of an App fake_app made."""
    assert isinstance(app.clock, ManualClock)
    return app.clock


def with_table(settings: Settings, **tables: dict[str, Any]) -> Settings:
    """`settings` with some of config.toml's fixed tables given anew (the rest kept), as the
    service's reread makes them after an edit."""
    given = parse(tables)
    return replace(settings, **{name: getattr(given, name) for name in tables})
