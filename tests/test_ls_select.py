"""`roost ls`'s table reads only what it prints (branch lsfast): its SELECT skips the session
history and the worktree, which only `ls --json` shows, and a row becomes an Agent whose flags are
real bools without a per-row conversion pass; classifying a launched agent parses no date."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from roost.core import observation
from roost.core.model import Agent
from roost.store import status as listing
from roost.store.db import Store


def tables_read(conn: sqlite3.Connection, details: bool) -> set[str]:
    """The tables the listing's SELECT reads (SQLite's authorizer sees each column read)."""
    read: set[str] = set()

    def note(action: int, table: str | None, *_: object) -> int:
        if action == sqlite3.SQLITE_READ and table:
            read.add(table)
        return sqlite3.SQLITE_OK

    conn.set_authorizer(note)
    try:
        listing.records(conn, details=details)
    finally:
        conn.set_authorizer(None)
    return read


def stored(tmp_path: Path) -> Store:
    store = Store.open(tmp_path / "r.db")
    store.insert(
        Agent(id="a1", name="one", provider="claude", cwd="/w", home="one", dangerous=True)
    )
    return store


def test_the_table_reads_neither_history_nor_worktrees(tmp_path: Path) -> None:
    store = stored(tmp_path)
    table = tables_read(store.conn, details=False)
    assert "agents" in table
    assert not {"session_history", "worktrees"} & table


def test_the_json_listing_reads_history_and_worktrees(tmp_path: Path) -> None:
    store = stored(tmp_path)
    assert {"session_history", "worktrees"} <= tables_read(store.conn, details=True)


def test_a_listed_agents_flags_are_bools(tmp_path: Path) -> None:
    store = stored(tmp_path)
    (agent,) = listing.records(store.conn, details=False)
    flags = (agent.dangerous, agent.conversation_seen, agent.mcp, agent.pinned)
    assert flags == (True, False, True, False)
    assert all(type(f) is bool for f in flags)


def test_a_launched_agent_without_a_pane_has_no_date_parsed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`roost ls` classifies a thousand stopped agents: only a never-launched one (a spawn under
    way) needs its creation time read, so the others parse no date."""
    parsed: list[str | None] = []

    def counting(iso: str | None) -> float | None:
        parsed.append(iso)
        return 0.0

    monkeypatch.setattr(observation, "epoch", counting)
    launched = Agent(
        id="a1",
        name="one",
        provider="claude",
        cwd="/w",
        home="one",
        launches=3,
        created_at="2031-01-01T00:00:00.000+00:00",
    )
    seen = observation.sighted(launched, None)
    observation.classify(seen, None, None, {}, now=1.0)
    assert parsed == []
    fresh = launched.replace(launches=0)
    assert observation.spawning(fresh, now=5.0)
    assert parsed == ["2031-01-01T00:00:00.000+00:00"]
