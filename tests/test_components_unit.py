"""The service's worker threads (ops/service.py `in_thread`, `in_passes`): the alerts and resume
components run their passes this way, as held and budget run their own work."""

from __future__ import annotations

import queue
import threading

import pytest

from roost.ops import service as svc
from roost.ops.context import App


def test_passes_run_at_once_on_news_and_again_after_a_failure(
    app: App, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pass at once (what came while the service was down), on a store connection of its own;
    a pass that fails is said and the next one runs; a wake brings the next pass before `every`
    is up; the stop ends the thread."""
    ran: queue.Queue[bool] = queue.Queue()
    wake = threading.Event()
    service_store = app.store

    passes: list[App] = []

    def one_pass(mine: App) -> None:
        passes.append(mine)
        ran.put(mine.store is not service_store)
        if len(passes) == 1:
            raise RuntimeError("the store is busy")

    stop = svc.in_passes(app, "probe", one_pass, every=600.0, wake=wake)
    try:
        assert ran.get(timeout=30) is True  # the first pass, at once, on its own connection
        wake.set()  # news: the next pass now, not in 600 s
        assert ran.get(timeout=30) is True
        wake.set()
        assert ran.get(timeout=30) is True
    finally:
        stop()
    assert "roost service: probe: RuntimeError: the store is busy" in capsys.readouterr().err
    threads = [t.name for t in threading.enumerate()]
    assert "roost-probe" not in threads  # the stop waited for it to end
