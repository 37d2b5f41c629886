"""The event log (store/events.py) against a real SQLite file: append, read back, limits."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from roost.core.events import Event
from roost.core.model import Agent
from roost.store import events
from roost.store.db import Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(tmp_path / "r.db")
    yield s
    s.close()


def test_events_read_back_oldest_first_with_their_details_spread(store: Store) -> None:
    with store.write() as c:
        events.append(c, "id-a", "a", "2026-01-01T00:00:00", "spawned", {"cwd": "/w"})
        events.append(c, "id-b", "b", "2026-01-01T00:00:01", "started", {"pid": 7})
        events.append(c, "id-a", "a", "2026-01-01T00:00:02", "killed", {})
    assert [e.listed() for e in events.recent(store.conn)] == [
        {"id": 1, "agent": "a", "at": "2026-01-01T00:00:00", "kind": "spawned", "cwd": "/w"},
        {"id": 2, "agent": "b", "at": "2026-01-01T00:00:01", "kind": "started", "pid": 7},
        {"id": 3, "agent": "a", "at": "2026-01-01T00:00:02", "kind": "killed"},
    ]
    assert events.recent(store.conn)[1] == Event(
        2, "id-b", "b", "2026-01-01T00:00:01", "started", {"pid": 7}
    )
    assert [e.kind for e in events.recent(store.conn, "id-a")] == ["spawned", "killed"]


def test_a_limit_keeps_the_newest_events(store: Store) -> None:
    with store.write() as c:
        for i in range(5):
            events.append(c, "id-a", "a", f"2026-01-01T00:00:0{i}", "status", {"n": i})
    assert [e.data["n"] for e in events.recent(store.conn, "id-a", limit=2)] == [3, 4]


def test_an_event_rolls_back_with_its_transaction(store: Store) -> None:
    with pytest.raises(RuntimeError), store.write() as c:
        events.append(c, "id-a", "a", "2026-01-01T00:00:00", "spawned", {})
        raise RuntimeError("the change it records failed")
    assert events.recent(store.conn) == []


def test_store_log_stamps_the_time_and_keeps_the_name_after_rm(store: Store) -> None:
    a = Agent(id="id-a", name="a", provider="claude", cwd="/w", home="a")
    store.log(a, "sent", delivered=True, chars=3)
    [event] = store.events("id-a")
    assert event.agent == "a" and event.kind == "sent"
    assert (event.data["delivered"], event.data["chars"]) == (True, 3)
    assert event.at.endswith("+00:00")
    assert store.events("id-other") == []


def test_a_turn_begun_is_recorded_once_whoever_looks_first(store: Store) -> None:
    """A sent prompt's turn (store/status.record_turn_begun): recorded as working when no look
    saw it; not again when a look recorded it after the prompt went (its end would be told
    twice), nor over a stored working."""
    from roost.store import status

    a = Agent(id="id-a", name="a", provider="claude", cwd="/w", home="a", status="idle")
    store.insert(a)
    at = "2026-01-01T00:00:00+00:00"
    with store.write() as c:
        before = events.last_id(c)
        assert status.record_turn_begun(c, "id-a", "a", before, "send", at)
        assert not status.record_turn_begun(c, "id-a", "a", before, "send", at)  # working
    with store.write() as c:
        status.record_status(c, "id-a", "a", "idle", "hook", at)  # its Stop, seen
        assert status.record_turn_begun(c, "id-a", "a", events.last_id(c), "send", at)
    with store.write() as c:
        status.record_status(c, "id-a", "a", "idle", "hook", at)
        before = events.last_id(c)
        events.append(c, "id-a", "a", at, "status", {"status": "working", "previous": "idle"})
        events.append(c, "id-a", "a", at, "status", {"status": "idle", "previous": "working"})
        assert not status.record_turn_begun(c, "id-a", "a", before, "send", at)  # a look saw it
    changes = [(e.data["status"], e.data.get("previous")) for e in store.events("id-a")]
    assert changes == [
        ("working", "idle"),
        ("idle", None),
        ("working", "idle"),
        ("idle", None),
        ("working", "idle"),
        ("idle", "working"),
    ]
    assert store.require("a").status == "idle"


def test_the_two_outside_shapes_are_the_spread_dicts_byte_for_byte(store: Store) -> None:
    """`roost events --json` prints id, agent, at, kind and then the details; the stream
    (`roost watch --json`, the web's feed, the service's components' JSON) the details and then
    seq, agent_id, agent, at, kind: the keys in that order, as when readers spread the details
    into one dict (a detail named like a column kept its place and lost its value the same)."""
    import json

    with store.write() as c:
        events.append(c, "id-a", "a", "T1", "exited", {"exit_code": 2, "agent": "x"})
    [listed] = events.recent(store.conn)
    assert json.dumps(listed.listed()) == (
        '{"id": 1, "agent": "x", "at": "T1", "kind": "exited", "exit_code": 2}'
    )
    [streamed] = events.after(store.conn, 0)
    assert json.dumps(streamed.streamed()) == (
        '{"exit_code": 2, "agent": "a", "seq": 1, "agent_id": "id-a", "at": "T1", "kind": "exited"}'
    )
