"""What the roost service keeps between `roost ls` answers (store/status.KeptRecords,
ops/quicklist.Warm): never an answer older than the store at the moment of the call."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

from roost.core.model import Agent
from roost.store.db import Store
from roost.store.status import KeptRecords

CREATED = "2026-01-01T00:00:00.000+00:00"  # a fixed moment: nothing here reads the clock


def agent(name: str) -> Agent:
    return Agent(
        id=f"id-{name}", name=name, provider="command", cwd="/w", home=name, created_at=CREATED
    )


def store_with(path: Path, *names: str) -> None:
    store = Store.open(path)
    for name in names:
        store.insert(agent(name))
    store.close()


def names(rows: list[Agent] | None) -> list[str]:
    assert rows is not None
    return [a.name for a in rows]


def test_rows_are_read_again_when_another_connection_changed_the_store(tmp_path: Path) -> None:
    db = tmp_path / "roost.db"
    store_with(db, "a")
    kept = KeptRecords(str(db))
    first = kept(False)
    assert names(first) == ["a"]
    assert kept(False) is first  # nobody wrote: the same rows, not read again
    generation = kept.generation
    store_with(db, "b")  # another process's write
    assert names(kept(False)) == ["a", "b"]
    assert kept.generation > generation
    assert names(kept(True)) == ["a", "b"]  # with details: read on their own
    kept.close()


def test_a_replaced_file_and_a_migrated_store_are_not_read_from_the_old_connection(
    tmp_path: Path,
) -> None:
    db = tmp_path / "roost.db"
    store_with(db, "a")
    other = tmp_path / "other.db"
    store_with(other, "x", "y")
    kept = KeptRecords(str(db))
    assert names(kept(False)) == ["a"]
    shutil.copy(other, tmp_path / "swap.db")
    os.replace(tmp_path / "swap.db", db)  # e.g. restored from a backup while the service ran
    assert names(kept(False)) == ["x", "y"]
    with sqlite3.connect(db) as conn:  # a newer roost migrated it
        conn.execute("PRAGMA user_version = 9999")
    assert kept(False) is None
    assert kept.conn is None
    kept.close()


def test_the_last_text_is_reused_only_while_nothing_shown_differs(tmp_path: Path) -> None:
    from roost.core.observation import Observation
    from roost.ops.quicklist import Warm

    db = tmp_path / "roost.db"
    store_with(db, "a")
    warm = Warm(str(db))
    (row,) = warm.rows(False) or []

    def seen(reason: str | None, pid: int | None = 7) -> list[Observation]:
        return [
            Observation(row, None, True, "running", pid, None, "error", "screen", CREATED, reason)
        ]

    first = warm.render(seen("API Error: 500"), False, None)
    assert "API Error: 500" in first
    assert warm.render(seen("API Error: 500"), False, None) is first
    # a reason is read afresh at each look and never stored: the text follows it
    assert "Invalid API key" in warm.render(seen("Invalid API key"), False, None)
    assert " 8 " in warm.render(seen("Invalid API key", pid=8), False, None)
    as_json = warm.render(seen("Invalid API key", pid=8), True, {"m": (1.0, 2.0, 0.0, 0.0)})
    assert as_json.startswith("[{") and as_json != first
    table = warm.render(seen("Invalid API key", pid=8), False, None)
    # the table and the JSON are each kept (callers alternate)
    assert warm.render(seen("Invalid API key", pid=8), True, {"m": (1.0, 2.0, 0.0, 0.0)}) is as_json
    assert warm.render(seen("Invalid API key", pid=8), False, None) is table
    store_with(db, "b")  # the rows changed (as answer() reads them first): rendered again
    warm.rows(True)
    again = warm.render(seen("Invalid API key", pid=8), True, {"m": (1.0, 2.0, 0.0, 0.0)})
    assert again == as_json and again is not as_json
    warm.close()
