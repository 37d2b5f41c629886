"""The world, injected: every operation reads time, sleeps and touches processes through its App.

A manual clock set to a date far from today and the fake tmux must be all an operation sees: a
stamp from the real clock, or a real sleep, fails here."""

from __future__ import annotations

import sqlite3
import time
from datetime import UTC, datetime, timedelta

import pytest
from fake_app import PROMPT

from roost.core.clock import ManualClock
from roost.core.model import Agent
from roost.core.scope import Caller
from roost.ops import lifecycle, notify, observe, orchestrate, restore, send, supervise
from roost.ops import workspace as ops_ws
from roost.ops.context import App
from roost.tmux.fake import FakeTmux

FIXED = datetime(2031, 3, 4, 5, 6, 7, tzinfo=UTC)  # years from any day this suite runs on


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(FIXED)


def spawn(
    app: App, name: str, prompt: str | None = None, orchestrated_by: str | None = None
) -> Agent:
    return lifecycle.spawn(
        app,
        name,
        provider="command",
        cwd=str(app.paths.home),
        args=("sh",),
        restart="on-failure",
        prompt=prompt,  # typed in once the screen is still: a wait loop on the clock
        place=lifecycle.Place(orchestrated_by=orchestrated_by),
    ).agent


def every_stamp(app: App) -> dict[str, list[object]]:
    """Each table's time columns (`at`, `*_at`, `*_since`) and their stored values."""
    conn = sqlite3.connect(app.paths.db)
    found: dict[str, list[object]] = {}
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            for column in [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]:
                if column == "at" or column.endswith(("_at", "_since")):
                    rows = conn.execute(f"SELECT {column} FROM {table} WHERE {column} NOT NULL")
                    found[f"{table}.{column}"] = [r[0] for r in rows]
    finally:
        conn.close()
    return found


def run_the_operations(app: App, fake: FakeTmux, clock: ManualClock) -> None:
    spawn(app, "w1", prompt="start")
    app.environ["ROOST_CLAUDE_BIN"] = "/bin/sh"  # never run: the fake tmux starts nothing
    claude = lifecycle.spawn(app, "cl", provider="claude", cwd=str(app.paths.home)).agent
    assert claude.provider_session_id  # its lineage is stamped too
    fake.on_enter = lambda p: fake.set_screen(p.id, f"{PROMPT} got it\nbusy")
    lead = spawn(app, "lead")
    kid = spawn(app, "kid", orchestrated_by="lead")
    observe.refresh(app)
    assert send.send(app, "w1", "hello").delivered
    receipt = orchestrate.send_to(app, Caller(lead.id), "kid", "do it", idempotency_key="k1")
    assert receipt["delivered"], receipt
    fake.set_screen(fake.pane_of(kid.id).id, PROMPT)  # the kid's turn ends: its parent hears
    observe.refresh(app)
    fake.set_screen(fake.pane_of(lead.id).id, PROMPT)
    assert notify.deliver(app) == ["lead"]
    # supervise's backoff: the crash loop sleeps on the clock
    w1 = app.store.require("w1")
    for _ in range(2):
        pane = fake.pane_of(w1.id)
        fake.exit(pane.id, 3)
        assert supervise.on_pane_died(app, pane.id) == "restarted"
    assert lifecycle.kill(app, "w1")
    assert lifecycle.wake(app, "w1").started
    assert ops_ws.park(app, "kid") == ["kid"]
    restore.restore(app)
    lifecycle.kill(app, "w1")
    assert ops_ws.park(app, "w1") == ["w1"]
    clock.advance(3 * 86400)
    removed, _kept = ops_ws.gc_remove(app, ops_ws.gc_candidates(app, timedelta(days=1)))
    assert [a.name for a, _why in removed] == ["w1"]


def test_the_store_stamps_the_clock_the_app_has_now(app: App, clock: ManualClock) -> None:
    agent = spawn(app, "w1")
    app.clock = ManualClock(datetime(2040, 1, 2, tzinfo=UTC))  # a test swaps the App's clock
    app.store.log(agent, "answered")
    assert app.store.events(agent.id)[-1].at == "2040-01-02T00:00:00.000+00:00"
    worker = app.with_own_store()  # a restore worker's: its own connection, the same world
    try:
        assert worker.store.now_iso() == "2040-01-02T00:00:00.000+00:00"
        assert worker.procs is app.procs and worker.tmux is app.tmux
    finally:
        worker.close()


def test_every_stamp_comes_from_the_injected_clock_and_nothing_sleeps_for_real(
    app: App, fake: FakeTmux, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []  # a witness, not the world: a real sleep is recorded, then taken
    real_sleep = time.sleep

    def witnessed_sleep(seconds: float) -> None:
        slept.append(seconds)
        real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", witnessed_sleep)
    began = time.monotonic()
    run_the_operations(app, fake, clock)
    took = time.monotonic() - began
    assert slept == []
    stamps = every_stamp(app)
    for column in ("agents.created_at", "events.at", "agents.status_since", "requests.at"):
        assert stamps[column], f"{column}: nothing stored, so nothing checked"
    for column in ("notifications.delivered_at", "session_history.at", "provider_sessions.seen_at"):
        assert stamps[column], f"{column}: nothing stored, so nothing checked"
    wrong = {
        column: [v for v in values if not str(v).startswith("2031-03-0")]
        for column, values in stamps.items()
        if column != "launches.at"  # epoch seconds
    }
    assert {c: v for c, v in wrong.items() if v} == {}
    window = (FIXED.timestamp(), (FIXED + timedelta(days=4)).timestamp())
    assert stamps["launches.at"] and all(
        isinstance(t, float) and window[0] <= t <= window[1] for t in stamps["launches.at"]
    )
    backoff = [s for s in clock.slept if s >= 1.0]
    assert backoff[:2] == [1.0, 2.0], clock.slept  # supervise's waits were the clock's
    # Slept for real, the clock's waits alone would have taken this long (a spy on time.sleep
    # above catches the rest); a bound on wall time alone would fail on a loaded machine.
    waits = sum(clock.slept)
    assert took < waits, f"the operations took {took:.2f} s, their waits {waits:.2f} s"


def test_restore_starts_its_agents_in_the_apps_world(app: App, fake: FakeTmux) -> None:
    agent = spawn(app, "w1")
    fake.kill_session(fake.windows[fake.pane_of(agent.id).window_id].session_id)  # server gone
    report = restore.restore(app)
    assert report.started == ["w1"] and report.failed == {}
    assert not fake.pane_of(agent.id).dead  # started on this App's tmux, not the real one
