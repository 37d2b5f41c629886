"""One service after another (issue 36): a service that is stopping says so before it stops its
components (its run is closed first), and the next one waits for its lock rather than refusing.
Found by the real Claude Code after `tmux kill-server; roost restore`: the dying service still
read as running, so restore started none, and the restored agent was wired to an endpoint that
closed a moment later."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from typing import Any

import pytest

from roost.core.errors import RoostError
from roost.ops import service
from roost.ops.context import App
from roost.service import main
from roost.store import service as rows
from roost.system import locks


def hold_lock(app: App) -> int:
    app.paths.run.mkdir(parents=True, exist_ok=True)
    held = locks.claim(app.paths.run / main.LOCK)
    assert held is not None
    return held


def open_run(app: App, pid: int) -> None:
    with app.store.write() as c:
        rows.begin_run(c, pid, "%9", "2026-01-01T00:00:00+00:00", ["monitor"])


def on_sleep(app: App, happen: Callable[[int], None]) -> None:
    """Call `happen(n)` at the clock's n-th sleep (the manual clock moves only when slept on)."""
    clock: Any = app.clock
    slept = clock.sleep

    def sleep(seconds: float) -> None:
        slept(seconds)
        happen(len(clock.slept))

    clock.sleep = sleep


def test_the_next_service_waits_for_one_that_is_stopping(app: App) -> None:
    open_run(app, os.getpid())
    with app.store.write() as c:
        rows.end_run(c, os.getpid(), "2026-01-01T00:00:01+00:00", 0)  # closed: it is stopping
    held = hold_lock(app)
    on_sleep(app, lambda n: os.close(held) if n == 3 else None)  # its components stopped
    mine = main._claim(app)
    try:
        assert locks.claimant(app.paths.run / main.LOCK) == os.getpid()
        assert len(app.clock.slept) == 3  # type: ignore[attr-defined]
    finally:
        os.close(mine)


def test_a_running_service_refuses_a_second_at_once(app: App) -> None:
    held = hold_lock(app)
    try:
        open_run(app, os.getpid())
        with pytest.raises(RoostError, match="another roost service runs"):
            main._claim(app)
        assert app.clock.slept == []  # type: ignore[attr-defined]
    finally:
        os.close(held)


def test_a_holder_that_never_lets_go_is_refused_after_the_handover_wait(app: App) -> None:
    held = hold_lock(app)
    try:
        with pytest.raises(RoostError, match="another roost service runs"):
            main._claim(app)
        assert app.clock.monotonic() >= main.HANDOVER
    finally:
        os.close(held)


def test_a_stopping_service_closes_its_run_before_its_components_stop(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, object] = {}

    def start(own: App) -> service.Stop:
        def stop() -> None:
            seen["run while stopping"] = rows.last_run(app.store.conn)

        os.kill(os.getpid(), signal.SIGTERM)  # told to stop once it serves
        return stop

    comp = service.Component("probe", start=start)
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    try:
        assert threading.current_thread() is threading.main_thread()
        assert main._run(app, lambda: app, [comp]) == 0
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    run = seen["run while stopping"]
    assert isinstance(run, tuple) and run[5] is not None  # closed before the stop was called
