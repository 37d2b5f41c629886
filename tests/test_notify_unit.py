"""The parents' notification queue: the pure rule, the store's queue (order, exactly once,
survives a restart) and delivery through ops on the in-memory tmux. No real tmux, no sleeping."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest
from fake_app import PROMPT, fake_app, fake_tmux, manual_clock, with_table

from roost.core import notify as rule
from roost.core.model import Agent
from roost.ops import lifecycle, notify, observe
from roost.ops.context import App
from roost.store import orchestration as queue
from roost.store.db import Store
from roost.tmux.fake import FakeTmux


# ---- the rule ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("before", "after", "kind"),
    [
        ("working", "idle", "finished"),
        (None, "idle", None),
        ("waiting", "idle", None),
        ("idle", "working", None),
        ("working", "waiting", "waiting"),
        ("idle", "exited", "exited"),
        ("exited", "exited", None),
        ("exited", "failed", "failed"),
        ("idle", None, None),
    ],
)
def test_which_changes_a_parent_hears_of(
    before: str | None, after: str | None, kind: str | None
) -> None:
    assert rule.kind_of(before, after) == kind


def test_a_notice_is_one_bounded_line() -> None:
    long = "word " * 1000
    said = rule.text("kid", "finished", long)
    assert said.startswith("[roost] kid finished its turn: word word")
    assert len(said) < rule.MAX_NOTICE + 200 and "\n" not in said
    assert rule.text("kid", "exited", None) == "[roost] kid exited"


def test_nothing_a_child_writes_reaches_its_parent_as_keys() -> None:
    # Issue 18.3: a reply holding a paste's end marker (split so one pass of removal rebuilds
    # it), two Ctrl-C and a C1 CSI typed them into the parent, which exited.
    reply = "first\x1b[20\x1b[201~1~\x03\x03\r\x9b201~second\x7f\x00\x1b"
    said = rule.text("kid", "finished", reply)
    assert said == "[roost] kid finished its turn: first[20[201~1~ 201~second"
    assert all(ch.isprintable() for ch in said)


def test_a_message_holds_as_many_notices_as_fit_oldest_first() -> None:
    notices = ["x" * 4000, "y" * 4000, "z"]
    text, count = rule.message(notices)
    assert count == 1 and text == notices[0]
    assert rule.message(["a" * 9000]) == ("a" * 9000, 1)  # one always goes


# ---- the store's queue ---------------------------------------------------------------------
def two_agents(store: Store) -> None:
    with store.write() as c:
        for agent_id in ("p", "k"):
            c.execute(
                "INSERT INTO agents (id, name, provider, cwd, home, created_at, intent) "
                "VALUES (?, ?, 'command', '/', ?, '', 'running')",
                (agent_id, agent_id, agent_id),
            )


def test_queue_order_exactly_once_and_restart(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "roost.db")
    two_agents(store)
    with store.write() as c:
        for n in range(3):
            queue.enqueue(c, "p", "k", "k", "finished", f"notice {n}", f"t{n}")
    store.close()
    store = Store.open(tmp_path / "roost.db")  # a restart between queueing and delivery
    with store.write() as c:
        pending = queue.pending(c, "p")
        assert [n.text for n in pending] == ["notice 0", "notice 1", "notice 2"]
        assert queue.mark_delivered(c, [pending[0].id, pending[1].id], "now") == 2
        assert queue.mark_delivered(c, [pending[0].id], "again") == 0  # once
        assert [n.text for n in queue.pending(c)] == ["notice 2"]
    store.close()


def test_a_request_key_answers_a_retry_with_the_first_receipt(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "roost.db")
    with store.write() as c:

        def claim(caller: str = "p", target: str = "kid", digest: str = "d") -> queue.Claim:
            return queue.claim_request(c, caller, "key", "send", target, digest, "t")

        assert claim().state == "new"
        # no result yet: its process died (a live one holds the key's lock: ops decides)
        assert claim() == queue.Claim("abandoned", at="t")
        queue.finish_request(c, "p", "key", {"delivered": True})
        assert claim() == queue.Claim("done", {"delivered": True})
        assert claim(target="kid2").state == "other"  # bound to its child
        assert claim(digest="d2").state == "other"  # and to its text
        assert claim("other").state == "new"  # per caller
        queue.forget_request(c, "other", "key")
        assert claim("other").state == "new"
    store.close()


# ---- delivery on the in-memory tmux --------------------------------------------------------
@pytest.fixture
def fake() -> FakeTmux:
    return fake_tmux()


@pytest.fixture
def app(tmp_path: Path, fake: FakeTmux) -> Iterator[App]:
    settings = {"status": {"patterns": {"command": {"idle": [PROMPT], "working": ["busy"]}}}}
    app = fake_app(tmp_path, fake, manual_clock(), settings)
    yield app
    app.close()


def spawn(app: App, name: str, parent: str | None = None) -> Agent:
    return lifecycle.spawn(
        app,
        name,
        provider="command",
        cwd=str(app.paths.home),
        args=("sh",),
        place=lifecycle.Place(orchestrated_by=parent),
    ).agent


def test_a_finished_child_is_queued_once_and_delivered_when_the_parent_is_idle(
    app: App, fake: FakeTmux
) -> None:
    parent = spawn(app, "lead")
    child = spawn(app, "kid", parent="lead")
    observe.refresh(app)  # both idle: nothing to tell (no turn was finished)
    kid_pane, lead_pane = fake.pane_of(child.id), fake.pane_of(parent.id)
    fake.set_screen(kid_pane.id, "busy")
    fake.set_screen(lead_pane.id, "busy")
    observe.refresh(app)
    fake.set_screen(kid_pane.id, PROMPT)
    observe.refresh(app)
    observe.refresh(app)  # the same change seen again: not queued again
    with app.store.write() as c:
        assert [n.text for n in queue.pending(c)] == ["[roost] kid finished its turn"]
    assert notify.deliver(app) == []  # the parent is working: held
    fake.set_screen(lead_pane.id, PROMPT)
    fake.on_enter = lambda p: fake.set_screen(p.id, f"{PROMPT} got it")
    assert notify.deliver(app) == ["lead"]
    assert fake.calls_of("paste")[-1] == ("paste", lead_pane.id, "[roost] kid finished its turn")
    assert notify.deliver(app) == []  # once
    kinds = [e.kind for e in app.store.events()]
    assert "notice-queued" in kinds and "notified" in kinds, str(kinds)


def test_an_exited_child_wakes_a_stopped_parent_or_is_held(app: App, fake: FakeTmux) -> None:
    parent = spawn(app, "lead")
    child = spawn(app, "kid", parent="lead")
    observe.refresh(app)
    fake.exit(fake.pane_of(parent.id).id, 0)  # it exited on its own (a `roost kill` holds)
    app.settings = with_table(app.settings, orchestration={"notify_sleeping": "hold"})
    fake.exit(fake.pane_of(child.id).id, 3)
    assert notify.deliver(app) == []
    with app.store.write() as c:
        assert [n.status for n in queue.pending(c)] == ["exited"]
    app.settings = with_table(app.settings, orchestration={"notify_sleeping": "wake"})
    fake.on_enter = lambda p: fake.set_screen(p.id, f"{PROMPT} got it")
    assert notify.deliver(app) == ["lead"]
    assert "[roost] kid exited: exit code 3" in cast(str, fake.calls_of("paste")[-1][2])
    assert fake.pane_of(parent.id) is not None
