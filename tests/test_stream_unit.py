"""The stream's decisions without tmux (fake tmux, manual clock): two refreshers that looked at
the same moment record a status change once (the service's monitor and a `roost ls` may look
together), and a reader drains the log by sequence in batches without a gap or a repeat."""

from __future__ import annotations

import pytest
from fake_app import PROMPT

from roost.ops import lifecycle, observe, stream
from roost.ops.context import App
from roost.store import events as event_log
from roost.tmux.fake import FakeTmux


def status_events(app: App) -> list[tuple[str | None, str | None]]:
    return [
        (e.text("previous"), e.text("status")) for e in app.store.events() if e.kind == "status"
    ]


def test_two_looks_at_the_same_moment_record_a_change_once(app: App, fake: FakeTmux) -> None:
    lifecycle.spawn(app, "a", provider="command", args=("sh",), cwd=str(app.paths.home))
    observe.refresh(app)
    pane = next(p for p in app.tmux.list_panes() if p.agent_id)
    fake.set_screen(pane.pane_id, "busy, no prompt")
    observe.refresh(app)
    before = len(status_events(app))
    fake.set_screen(pane.pane_id, PROMPT)
    # Both looked before either wrote: each saw the stored status and the new screen.
    seen_by_one = observe._look(app, app.tmux.list_panes())
    seen_by_other = observe._look(app, app.tmux.list_panes())
    observe.record(app, seen_by_one)
    observe.record(app, seen_by_other)
    news = status_events(app)[before:]
    assert len(news) == 1, news


def test_drain_hands_every_event_once_in_order_across_batches(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stream, "BATCH", 7)
    with app.store.write() as c:
        for i in range(30):
            event_log.append(c, "x", "x", f"T{i:02d}", "status", {"status": "idle"})
    got: list[int] = []
    last = stream.drain(app, 0, lambda e: got.append(e.seq))
    assert got == list(range(1, 31)) and last == 30
    assert stream.drain(app, 12, lambda e: got.append(e.seq)) == 30
    assert got[30:] == list(range(13, 31))
