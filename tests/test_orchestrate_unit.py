"""Orchestration operations on the in-memory tmux: the limits hold against callers that race."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fake_app import fake_app, fake_tmux

from roost.core import scope
from roost.core.clock import ManualClock
from roost.core.errors import RoostError
from roost.ops import lifecycle, orchestrate
from roost.ops.context import App
from roost.store.db import Store
from roost.tmux.fake import FakeTmux

LIMITED = {"orchestration": {"max_children": 1}}
CODEX_ENV = {"ROOST_CODEX_BIN": str(Path(__file__).parent / "bin" / "codex")}


@pytest.fixture
def fake() -> FakeTmux:
    return fake_tmux()


def open_app(tmp_path: Path, fake: FakeTmux, monkeypatch: pytest.MonkeyPatch) -> App:
    return fake_app(tmp_path, fake, ManualClock(datetime.now(UTC)), monkeypatch, LIMITED)


def test_two_racing_creates_make_one_child_under_a_limit_of_one(
        tmp_path: Path, fake: FakeTmux, monkeypatch: pytest.MonkeyPatch):
    app = open_app(tmp_path, fake, monkeypatch)
    lead = lifecycle.spawn(app, "lead", provider="command", cwd=str(app.paths.home),
                           args=("sh",), place=lifecycle.Place(detached=True)).agent
    caller = scope.Caller(lead.id)
    both_checked = threading.Barrier(2)
    real_spawn = lifecycle.spawn

    def spawn_after_the_other_checked(*args: Any, **kwargs: Any) -> lifecycle.SpawnResult:
        # Where the race was: both calls past the limit check before either child is recorded.
        try:
            both_checked.wait(timeout=1.0)
        except threading.BrokenBarrierError:
            pass  # the other call is held back: what the fix is for
        return real_spawn(*args, **kwargs)

    monkeypatch.setattr(lifecycle, "spawn", spawn_after_the_other_checked)
    outcomes: list[str] = []

    def create(name: str) -> None:
        # Its own App (store connection) per call, as two MCP servers of one home have.
        other = App(paths=app.paths, store=Store.open(app.paths.db), tmux=fake,
                    environ=CODEX_ENV | app.environ, settings=app.settings, clock=app.clock)
        try:
            outcomes.append(orchestrate.create(other, caller, "codex", name=name)["name"])
        except RoostError as exc:
            outcomes.append(str(exc))
        finally:
            other.close()

    threads = [threading.Thread(target=create, args=(f"child{i}",)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    made = [o for o in outcomes if o.startswith("child")]
    assert len(made) == 1, outcomes
    assert any("orchestration.max_children = 1" in o for o in outcomes)
    assert [a.name for a in app.store.agents() if a.orchestration_parent == lead.id] == made
    app.close()
