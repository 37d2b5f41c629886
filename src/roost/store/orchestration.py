"""The orchestration tables (schema v4): retry-safe requests and the parents' notification queue.

Every function runs inside the caller's `store.write()` transaction (BEGIN IMMEDIATE), so a
claim, an enqueue or a delivery is atomic with what it records.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Claim:
    """What a claim of an idempotency key found: "new" (claimed now), "abandoned" (an earlier
    claim whose process died: claimed again now; `at` is when it was first claimed), "done"
    (`answer` is the earlier attempt's result) or "other" (the key was used for another
    target or text: nothing claimed)."""

    state: str
    answer: dict[str, object] | None = None
    at: str | None = None


def claim_request(
    c: sqlite3.Connection, caller: str, key: str, kind: str, target: str, digest: str, at: str
) -> Claim:
    """Claim `key` for an attempt at `kind` on `target` with a text whose hash is `digest`.
    The caller holds the key's lock (ops/orchestrate.py), which a live attempt keeps until it
    has stored its result: a claim found without a result is one whose process died."""
    row = c.execute(
        "SELECT result, target, digest, at FROM requests WHERE caller = ? AND key = ?",
        (caller, key),
    ).fetchone()
    if row is None:
        c.execute(
            "INSERT INTO requests (caller, key, kind, at, target, digest) VALUES "
            "(?, ?, ?, ?, ?, ?)",
            (caller, key, kind, at, target, digest),
        )
        return Claim("new")
    result, was_target, was_digest, was_at = row
    if was_target and (was_target, was_digest) != (target, digest):
        return Claim("other")  # (a key of a roost before v6 is bound to nothing)
    if result is None:
        c.execute(
            "UPDATE requests SET target = ?, digest = ? WHERE caller = ? AND key = ?",
            (target, digest, caller, key),
        )
        return Claim("abandoned", at=was_at)
    answer: dict[str, object] = json.loads(result)
    return Claim("done", answer)


def finish_request(
    c: sqlite3.Connection, caller: str, key: str, result: Mapping[str, object]
) -> None:
    c.execute(
        "UPDATE requests SET result = ? WHERE caller = ? AND key = ?",
        (json.dumps(result), caller, key),
    )


def forget_request(c: sqlite3.Connection, caller: str, key: str) -> None:
    """An attempt that failed before anything was typed: a retry may try again."""
    c.execute("DELETE FROM requests WHERE caller = ? AND key = ? AND result IS NULL", (caller, key))


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


def enqueue(
    c: sqlite3.Connection,
    parent_id: str,
    child_id: str,
    child_name: str,
    status: str,
    text: str,
    at: str,
) -> int:
    cur = c.execute(
        "INSERT INTO notifications (parent_id, child_id, child_name, status, text, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?)",
        (parent_id, child_id, child_name, status, text, at),
    )
    return int(cur.lastrowid or 0)


def pending(c: sqlite3.Connection, parent_id: str | None = None) -> list[Notice]:
    """Undelivered notices, oldest first (of one parent, or of all)."""
    where, args = ("AND parent_id = ?", (parent_id,)) if parent_id else ("", ())
    rows = c.execute(
        "SELECT id, parent_id, child_id, child_name, status, text, created_at, "
        f"tries FROM notifications WHERE delivered_at IS NULL {where} "
        "ORDER BY id",
        args,
    )
    return [Notice(*row) for row in rows]


def mark_delivered(c: sqlite3.Connection, notice_ids: list[int], at: str) -> int:
    """Mark notices delivered; how many were still pending (0: someone else delivered them)."""
    done = 0
    for notice_id in notice_ids:
        done += c.execute(
            "UPDATE notifications SET delivered_at = ? WHERE id = ? AND delivered_at IS NULL",
            (at, notice_id),
        ).rowcount
    return done


def mark_tried(c: sqlite3.Connection, notice_ids: list[int]) -> None:
    """Its parent died while these notices were being delivered to it."""
    for notice_id in notice_ids:
        c.execute("UPDATE notifications SET tries = tries + 1 WHERE id = ?", (notice_id,))
