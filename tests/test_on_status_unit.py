"""The status pipeline's one extension point (context.OnStatus, assembled in ops/root.py): each
reaction the App carries hears the changes its writer stored, in the transaction that stores
them, and no other; an App cannot be made without its reactions (fake tmux, manual clock)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from fake_app import PROMPT

from roost.core.observation import Observation
from roost.ops import lifecycle, observe, root
from roost.ops.context import App, OnStatus
from roost.ops.service import Component
from roost.service.main import dispatch
from roost.store import events as event_log
from roost.store.db import Connection
from roost.store.events import StatusChange
from roost.tmux.fake import FakeTmux


def status_events(app: App) -> list[tuple[str | None, str | None]]:
    return [
        (e.text("previous"), e.text("status")) for e in app.store.events() if e.kind == "status"
    ]


def working_then_idle(app: App, fake: FakeTmux) -> None:
    """An agent stored working whose screen now shows its prompt: the next look changes it."""
    lifecycle.spawn(app, "a", provider="command", args=("sh",), cwd=str(app.paths.home))
    agent = app.store.require("a")
    app.clock.advance(120)  # type: ignore[attr-defined]  # past the start's grace
    pane = next(p for p in app.tmux.list_panes() if p.agent_id == agent.id)
    fake.set_screen(pane.pane_id, PROMPT)
    app.store.update(agent.id, status="working", status_source="screen")


class Probe:
    """A reaction that notes what it read before the transaction and what it heard in it."""

    def __init__(self, fail: bool = False) -> None:
        self.read_for: list[list[str]] = []
        self.heard: list[tuple[list[tuple[str, str | None]], str, Any]] = []
        self.fail = fail

    def read(self, app: App, changed: Sequence[Observation]) -> str:
        self.read_for.append([o.agent.name for o in changed])
        return "what the files said"

    def recorded(
        self, app: App, c: Connection, changed: Sequence[Observation], at: str, read: Any
    ) -> None:
        self.heard.append(([(o.agent.name, o.status) for o in changed], at, read))
        if self.fail:
            raise RuntimeError("a reaction failed")

    def reaction(self) -> OnStatus:
        return OnStatus("probe", self.recorded, read=self.read)


def with_probe(app: App, probe: Probe) -> App:
    return dataclasses.replace(app, on_status=(*app.on_status, probe.reaction()))


def test_a_reaction_hears_the_change_stored_with_what_it_read_first(
    app: App, fake: FakeTmux
) -> None:
    working_then_idle(app, fake)
    probe = Probe()
    observe.refresh(with_probe(app, probe))
    assert probe.read_for == [["a"]]
    [(changes, at, read)] = probe.heard
    assert changes == [("a", "idle")] and read == "what the files said"
    assert app.store.require("a").status == "idle"
    assert app.store.events()[-1].at == at  # one stamp: the change's event and the reaction's


def test_a_change_another_writer_stored_first_is_heard_once(app: App, fake: FakeTmux) -> None:
    working_then_idle(app, fake)
    one, other = Probe(), Probe()
    # Both looked before either wrote (the service's monitor and a `roost ls`, say).
    seen_by_one = observe._look(app, app.tmux.list_panes())
    seen_by_other = observe._look(app, app.tmux.list_panes())
    observe.record(with_probe(app, one), seen_by_one)
    observe.record(with_probe(app, other), seen_by_other)
    assert [c for c, _, _ in one.heard] == [[("a", "idle")]]
    assert other.heard == []  # its write was beaten: it reacts to nothing
    assert status_events(app)[-1] == ("working", "idle")


def test_a_reaction_that_fails_stores_nothing(app: App, fake: FakeTmux) -> None:
    working_then_idle(app, fake)
    before = status_events(app)
    with pytest.raises(RuntimeError, match="a reaction failed"):
        observe.refresh(with_probe(app, Probe(fail=True)))
    assert app.store.require("a").status == "working"  # the change and its event went together
    assert status_events(app) == before


def test_every_app_carries_the_root_reactions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert [r.name for r in root.ON_STATUS] == ["notify", "limits", "resume", "collisions"]
    monkeypatch.setenv("ROOST_HOME", str(tmp_path / "home"))
    opened = root.open_app()
    try:
        assert opened.on_status == root.ON_STATUS
    finally:
        opened.close()
    with pytest.raises(TypeError, match="on_status"):
        App(paths=opened.paths, store=opened.store, tmux=opened.tmux, environ={})  # type: ignore[call-arg]


def test_a_service_component_hears_the_status_changes_typed_whoever_stored_them(
    app: App, fake: FakeTmux
) -> None:
    """The service's components subscribe to the status pipeline through the event log: the
    changes any process stored reach `on_status` as StatusChange records, in order; the other
    kinds of event, and a row of another shape, are not changes."""
    heard: list[StatusChange] = []
    comp = Component(name="probe", on_status=lambda _app, changes: heard.extend(changes))
    assert dispatch(app, [comp]) == 0  # its first run starts at the log's end
    start = event_log.last_id(app.store.conn)
    working_then_idle(app, fake)
    observe.refresh(app)  # another process's look, say `roost ls`
    with app.store.write() as c:
        event_log.append(c, "x1", "x", app.store.now_iso(), "status", {"previous": "idle"})
        event_log.append(c, "x1", "x", app.store.now_iso(), "bell", {"status": "idle"})
    assert dispatch(app, [comp]) == event_log.last_id(app.store.conn) - start
    assert [(h.agent, h.previous, h.status) for h in heard] == [("a", "working", "idle")]
    assert dispatch(app, [comp]) == 0  # its cursor moved past them: each is heard once
