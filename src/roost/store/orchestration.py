"""The orchestration tables (schema v4): retry-safe requests and the parents' notification queue.

Every function runs inside the caller's `store.write()` transaction (BEGIN IMMEDIATE), so a
claim, an enqueue or a delivery is atomic with what it records.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

IN_PROGRESS = "in progress"


def claim_request(c: sqlite3.Connection, caller: str, key: str, kind: str,
                  at: str) -> dict[str, Any] | str | None:
    """Claim `key` for a first attempt: None when claimed now; the stored answer (a dict) when a
    previous attempt finished; IN_PROGRESS while one is still under way."""
    row = c.execute("SELECT result FROM requests WHERE caller = ? AND key = ?",
                    (caller, key)).fetchone()
    if row is None:
        c.execute("INSERT INTO requests (caller, key, kind, at) VALUES (?, ?, ?, ?)",
                  (caller, key, kind, at))
        return None
    if row[0] is None:
        return IN_PROGRESS
    answer: dict[str, Any] = json.loads(row[0])
    return answer


def finish_request(c: sqlite3.Connection, caller: str, key: str,
                   result: dict[str, Any]) -> None:
    c.execute("UPDATE requests SET result = ? WHERE caller = ? AND key = ?",
              (json.dumps(result), caller, key))


def forget_request(c: sqlite3.Connection, caller: str, key: str) -> None:
    """An attempt that failed before anything was typed: a retry may try again."""
    c.execute("DELETE FROM requests WHERE caller = ? AND key = ? AND result IS NULL",
              (caller, key))


@dataclass(frozen=True, slots=True)
class Notice:
    id: int
    parent_id: str
    child_id: str
    child_name: str
    status: str
    text: str
    created_at: str
    tries: int = 0  # deliveries its parent died on


def enqueue(c: sqlite3.Connection, parent_id: str, child_id: str, child_name: str,
            status: str, text: str, at: str) -> int:
    cur = c.execute("INSERT INTO notifications (parent_id, child_id, child_name, status, text, "
                    "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                    (parent_id, child_id, child_name, status, text, at))
    return int(cur.lastrowid or 0)


def pending(c: sqlite3.Connection, parent_id: str | None = None) -> list[Notice]:
    """Undelivered notices, oldest first (of one parent, or of all)."""
    where, args = ("AND parent_id = ?", (parent_id,)) if parent_id else ("", ())
    rows = c.execute("SELECT id, parent_id, child_id, child_name, status, text, created_at, "
                     f"tries FROM notifications WHERE delivered_at IS NULL {where} ORDER BY id", args)
    return [Notice(*row) for row in rows]


def mark_delivered(c: sqlite3.Connection, notice_ids: list[int], at: str) -> int:
    """Mark notices delivered; how many were still pending (0: someone else delivered them)."""
    done = 0
    for notice_id in notice_ids:
        done += c.execute("UPDATE notifications SET delivered_at = ? WHERE id = ? AND "
                          "delivered_at IS NULL", (at, notice_id)).rowcount
    return done


def mark_tried(c: sqlite3.Connection, notice_ids: list[int]) -> None:
    """Its parent died while these notices were being delivered to it."""
    for notice_id in notice_ids:
        c.execute("UPDATE notifications SET tries = tries + 1 WHERE id = ?", (notice_id,))
