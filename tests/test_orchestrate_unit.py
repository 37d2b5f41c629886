"""Orchestration operations on the in-memory tmux: the limits hold against callers that race."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any

import pytest
from fake_app import fake_app, fake_tmux, manual_clock

from roost.core import scope
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


def open_app(tmp_path: Path, fake: FakeTmux) -> App:
    return fake_app(tmp_path, fake, manual_clock(), LIMITED)


def test_two_racing_creates_make_one_child_under_a_limit_of_one(
    tmp_path: Path, fake: FakeTmux, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = open_app(tmp_path, fake)
    lead = lifecycle.spawn(
        app,
        "lead",
        provider="command",
        cwd=str(app.paths.home),
        args=("sh",),
        place=lifecycle.Place(detached=True),
    ).agent
    caller = scope.Caller(lead.id)
    both_checked = threading.Barrier(2)
    real_spawn = lifecycle.spawn

    def spawn_after_the_other_checked(*args: Any, **kwargs: Any) -> lifecycle.WakeResult:
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
        other = App(
            paths=app.paths,
            store=Store.open(app.paths.db),
            tmux=fake,
            environ=CODEX_ENV | app.environ,
            settings=app.settings,
            clock=app.clock,
            procs=app.procs,
            on_status=app.on_status,
        )
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


def test_a_key_held_by_a_live_attempt_is_under_way_and_freed_when_it_ends(
    tmp_path: Path, fake: FakeTmux, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 18.7: "under way" only while a process holds the key (its lock); after that the
    # key expires even though no result was stored (the claimer was killed).
    from roost.ops import send
    from roost.store import orchestration as queue
    from roost.system import locks

    app = open_app(tmp_path, fake)
    lead = lifecycle.spawn(
        app,
        "lead",
        provider="command",
        cwd=str(app.paths.home),
        args=("sh",),
        place=lifecycle.Place(detached=True),
    ).agent
    lifecycle.spawn(
        app,
        "kid",
        provider="command",
        cwd=str(app.paths.home),
        args=("sh",),
        place=lifecycle.Place(detached=True, orchestrated_by="lead"),
    )
    sent: list[str] = []

    def sending(app: Any, name: str, text: str, **kw: Any) -> send.Sent:
        sent.append(text)
        return send.Sent(True, "screen")

    monkeypatch.setattr(send, "send", sending)
    caller = scope.Caller(lead.id)
    with app.store.write() as c:  # the claim a killed `roost mcp` left
        queue.claim_request(
            c,
            lead.id,
            "k",
            "send",
            app.store.require("kid").id,
            hashlib.sha256(b"hi").hexdigest(),
            c.now_iso(),
        )
    with locks.hold(app.paths.locks, orchestrate._key_lock(lead.id, "k")):  # still alive
        busy = orchestrate.send_to(app, caller, "kid", "hi", idempotency_key="k")
    assert "still under way" in busy["how"] and sent == []
    done = orchestrate.send_to(app, caller, "kid", "hi", idempotency_key="k")
    assert done["delivered"] is True and done["duplicate"] is False and sent == ["hi"]
    again = orchestrate.send_to(app, caller, "kid", "hi", idempotency_key="k")
    assert again["duplicate"] is True and sent == ["hi"]
    with pytest.raises(RoostError, match="used for another message"):
        orchestrate.send_to(app, caller, "kid", "other text", idempotency_key="k")
    app.close()


def test_a_childs_relative_folder_is_the_parents(tmp_path: Path, fake: FakeTmux) -> None:
    """`create_agent(cwd="sub")` through the service's one MCP endpoint resolved against the
    service's folder (`/`), not the calling agent's."""
    app = open_app(tmp_path, fake)
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    lead = lifecycle.spawn(
        app,
        "lead",
        provider="command",
        cwd=str(project),
        args=("sh",),
        place=lifecycle.Place(detached=True),
    ).agent
    app.environ.update(CODEX_ENV)
    made = orchestrate.create(app, scope.Caller(lead.id), "codex", cwd="sub", name="kid")
    assert made["cwd"] == str(project / "sub")
