"""A launch records its start before the process runs (intent before effect): the status
pipeline may look at the new pane at once (the service's monitor is pushed its first output),
and what it records then must not be overwritten by the launch's own `starting` afterwards.
Found by test_stop_intent under load: a command agent that showed its prompt before `roost
spawn` recorded its start stayed `starting` for good (its screen never changed again)."""

from __future__ import annotations

from fake_app import PROMPT

from roost.ops import lifecycle, observe
from roost.ops.context import App
from roost.tmux.fake import FakeTmux


def test_what_the_monitor_saw_as_the_process_started_stands(app: App, fake: FakeTmux) -> None:
    def drawn_and_looked_at(pane: object) -> None:
        fake.set_screen(pane.id, PROMPT)  # type: ignore[attr-defined]
        observe.refresh(app)  # the monitor, between the process's start and the spawn's return

    fake.on_start = drawn_and_looked_at
    lifecycle.spawn(app, "quick", provider="command", cwd=str(app.paths.home), args=("sh",))
    assert app.store.require("quick").status == "idle"
    lifecycle.kill(app, "quick")
    observe.refresh(app)  # the monitor sees the process gone
    assert app.store.require("quick").status == "stopped"
    lifecycle.wake(app, "quick")
    assert app.store.require("quick").status == "idle"  # a wake's start too


def test_an_error_recorded_as_the_process_died_at_once_stands(app: App, fake: FakeTmux) -> None:
    """The launch cleared the last error after the process ran: a CLI that died at once, and
    whose death the supervisor recorded first ("unresumable: ..."), read as if nothing went
    wrong (test_status_send's unresumable claude, under load). It is cleared before now."""
    lifecycle.spawn(app, "quick", provider="command", cwd=str(app.paths.home), args=("sh",))
    lifecycle.kill(app, "quick")
    app.store.update(app.store.require("quick").id, last_error="an older failure")

    def died_and_recorded(pane: object) -> None:
        app.store.update(app.store.require("quick").id, last_error="unresumable: gone")

    fake.on_start = died_and_recorded
    lifecycle.wake(app, "quick")
    assert app.store.require("quick").last_error == "unresumable: gone"
