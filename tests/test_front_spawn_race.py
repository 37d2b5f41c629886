"""Issue 19, item 9: a refresh that runs while a spawn is under way logs no stray status for
it. Both interleavings, made deterministic on the in-memory tmux: the spawn's record is in the
store before its window exists, or its launch ends between the pane listing and the store read."""

from __future__ import annotations

import pytest

from roost.ops import lifecycle, observe
from roost.ops.context import App
from roost.tmux.fake import FakeTmux


def _spawn(app: App, name: str) -> None:
    lifecycle.spawn(app, name, provider="command", cwd=str(app.paths.home), args=("sh",))


def _statuses(app: App, name: str) -> list[str]:
    agent = app.store.require(name)
    return [str(e.data.get("status")) for e in app.store.events(agent.id) if e.kind == "status"]


def test_a_refresh_before_the_window_exists_says_starting(
    app: App, fake: FakeTmux, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_new_window = fake.new_window

    def refresh_first(*args: object, **kw: object) -> object:
        observe.refresh(app)  # the record is stored, its window not made yet
        return real_new_window(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(fake, "new_window", refresh_first)
    _spawn(app, "a")
    monkeypatch.setattr(fake, "new_window", real_new_window)
    observe.refresh(app)
    assert "stopped" not in _statuses(app, "a") and "lost" not in _statuses(app, "a")
    assert _statuses(app, "a")[0] == "starting"


def test_a_launch_between_the_listing_and_the_store_read_logs_nothing(
    app: App, fake: FakeTmux, monkeypatch: pytest.MonkeyPatch
) -> None:
    _spawn(app, "first")
    real_list = fake.list_panes
    spawned: list[str] = []

    def spawn_meanwhile() -> object:
        listed = real_list()
        if not spawned:  # once: the spawn below lists panes too
            spawned.append("b")
            _spawn(app, "b")
        return listed  # the listing from before the spawn

    monkeypatch.setattr(fake, "list_panes", spawn_meanwhile)
    observe.refresh(app)
    monkeypatch.setattr(fake, "list_panes", real_list)
    observe.refresh(app)
    assert "stopped" not in _statuses(app, "b") and "lost" not in _statuses(app, "b"), _statuses(
        app, "b"
    )
