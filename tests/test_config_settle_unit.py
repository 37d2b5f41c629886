"""config.toml as the service reads it while a person (or a program) writes it: a file written
by truncating and then writing was read in between, empty, and its defaults applied for a
moment (max_live gone; a second "config-applied" event). A change is read once its file has
been still for SETTLE seconds; a stamp from the future (another clock) counts as still."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from fake_app import fake_app, fake_tmux

from roost.core.clock import ManualClock
from roost.ops.context import SETTLE, UNREAD, reread_settings


def _at(path: Path, clock: ManualClock, seconds_after_write: float) -> None:
    """The clock `seconds_after_write` past the file's mtime."""
    mtime = datetime.fromtimestamp(os.stat(path).st_mtime_ns / 1e9, UTC)
    clock.start = mtime
    clock.elapsed = seconds_after_write


def test_a_file_still_being_written_is_read_once_it_is_still(tmp_path: Path) -> None:
    clock = ManualClock(datetime(2031, 1, 1, tzinfo=UTC))
    app = fake_app(tmp_path, fake_tmux(), clock, {})
    config = app.paths.config_file
    config.write_text("[budget]\nmax_live = 3\n")
    applied: list[str | None] = []
    seen = reread_settings(app, UNREAD, "service", applied.append)
    assert app.settings.budget.max_live == 3

    config.write_text("")  # the truncation, seen at once: not read yet
    _at(config, clock, SETTLE / 10)
    seen = reread_settings(app, seen, "service", applied.append)
    assert app.settings.budget.max_live == 3 and applied == []

    config.write_text("[budget]\nmax_live = 1\n")  # the rest written: read once still
    _at(config, clock, SETTLE / 10)
    seen = reread_settings(app, seen, "service", applied.append)
    assert app.settings.budget.max_live == 3 and applied == []
    _at(config, clock, SETTLE * 2)
    seen = reread_settings(app, seen, "service", applied.append)
    assert app.settings.budget.max_live == 1 and applied == [None]  # one change, applied once
    assert reread_settings(app, seen, "service", applied.append) == seen
    assert applied == [None]


def test_a_stamp_from_another_clock_is_read_at_once(tmp_path: Path) -> None:
    clock = ManualClock(datetime(2001, 1, 1, tzinfo=UTC))  # the file's mtime is far ahead
    app = fake_app(tmp_path, fake_tmux(), clock, {})
    app.paths.config_file.write_text("[budget]\nmax_live = 2\n")
    reread_settings(app, UNREAD, "service")
    assert app.settings.budget.max_live == 2
