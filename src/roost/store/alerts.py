"""Alerts to the person (alerts/rules.py; the tables: schema.ALERTS and ALERT_EDGES): the
cursor into the event log, what is remembered per agent and edge, and the outbox of alerts with
their delivery tries. The cursor, the edges and the outbox move in one transaction, so a
restart neither decides an event twice nor loses one, nor alerts an edge again.

Every function runs inside the caller's `store.write()` transaction unless it only reads.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import TypedDict

from roost.alerts.rules import Seen


@dataclass(frozen=True, slots=True)
class Pending:
    id: int
    agent_id: str
    agent: str
    edge: str
    title: str
    body: str
    done: tuple[str, ...]  # the channels it went through already (or failed on): not again


def cursor(c: sqlite3.Connection) -> int:
    return int(c.execute("SELECT after FROM alert_cursor WHERE one = 1").fetchone()[0])


def seen(c: sqlite3.Connection) -> dict[tuple[str, str], Seen]:
    """What is remembered of each agent's edges."""
    return {
        (str(r[0]), str(r[1])): Seen(str(r[2]), None if r[3] is None else str(r[3]))
        for r in c.execute("SELECT agent_id, edge, at, left_at FROM alert_edges")
    }


def forget(c: sqlite3.Connection, agent_id: str) -> None:
    """Before deleting an agent's record: its remembered edges go with it (no foreign key:
    the alerts decide from events, which outlive their agent)."""
    c.execute("DELETE FROM alert_edges WHERE agent_id = ?", (agent_id,))


def person_children(c: sqlite3.Connection) -> set[str]:
    """Agents whose orchestration parent is a person's agent: one with no parent of its own."""
    rows = c.execute(
        "SELECT a.id FROM agents a JOIN agents p ON p.id = a.orchestration_parent "
        "WHERE p.orchestration_parent IS NULL"
    )
    return {str(r[0]) for r in rows}


def advance(
    c: sqlite3.Connection, expected: int, after: int, state: dict[tuple[str, str], Seen]
) -> bool:
    """Move the cursor from `expected` to `after` and store the edges in `state`; False (nothing
    written) when another reader moved the cursor first: it decided these events already."""
    moved = c.execute(
        "UPDATE alert_cursor SET after = ? WHERE one = 1 AND after = ?", (after, expected)
    ).rowcount
    if not moved:
        return False
    c.executemany(
        "INSERT INTO alert_edges (agent_id, edge, at, left_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (agent_id, edge) DO UPDATE SET at = excluded.at, left_at = excluded.left_at",
        [(agent_id, edge, s.at, s.left) for (agent_id, edge), s in state.items()],
    )
    return True


def enqueue(
    c: sqlite3.Connection,
    event_id: int,
    agent_id: str,
    agent: str,
    edge: str,
    title: str,
    body: str,
    at: str,
) -> None:
    c.execute(
        "INSERT INTO alerts (event_id, agent_id, agent_name, edge, title, body, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (event_id, agent_id, agent, edge, title, body, at),
    )


def has_pending(c: sqlite3.Connection) -> bool:
    """Whether any alert waits for delivery (read-only)."""
    return c.execute("SELECT 1 FROM alerts WHERE done_at IS NULL LIMIT 1").fetchone() is not None


def claim(c: sqlite3.Connection, max_tries: int, limit: int = 50) -> list[Pending]:
    """The undelivered alerts tried fewer than `max_tries` times, oldest first, each counted as
    tried now (before its delivery: a process killed while delivering counts that try, so an
    alert is never retried forever). Alerts out of tries are closed as given up."""
    c.execute(
        "UPDATE alerts SET done_at = created_at, outcome = "
        "json_set(coalesce(outcome, '{}'), '$.given_up', 'cut off ' || tries || ' times') "
        "WHERE done_at IS NULL AND tries >= ?",
        (max_tries,),
    )
    rows = c.execute(
        "SELECT id, agent_id, agent_name, edge, title, body, outcome FROM alerts "
        "WHERE done_at IS NULL ORDER BY id LIMIT ?",
        (limit,),
    ).fetchall()
    c.executemany("UPDATE alerts SET tries = tries + 1 WHERE id = ?", [(r[0],) for r in rows])
    return [
        Pending(
            int(r[0]),
            str(r[1]),
            str(r[2]),
            str(r[3]),
            str(r[4]),
            str(r[5]),
            tuple(sorted(json.loads(r[6]))) if r[6] else (),
        )
        for r in rows
    ]


def channel_done(c: sqlite3.Connection, alert_id: int, channel: str, said: str) -> None:
    """One channel's outcome ("ok" or what went wrong), stored as soon as it is known."""
    row = c.execute("SELECT outcome FROM alerts WHERE id = ?", (alert_id,)).fetchone()
    outcome = json.loads(row[0]) if row and row[0] else {}
    outcome[channel] = said
    c.execute("UPDATE alerts SET outcome = ? WHERE id = ?", (json.dumps(outcome), alert_id))


def finish(c: sqlite3.Connection, alert_id: int, at: str) -> None:
    c.execute("UPDATE alerts SET done_at = ? WHERE id = ?", (at, alert_id))


class Sent(TypedDict):
    """An alert as stored, with how each channel took it (`outcome`: channel -> "ok" or what
    went wrong; None while none did)."""

    id: int
    agent: str
    edge: str
    title: str
    body: str
    tries: int
    done_at: str | None
    outcome: dict[str, str] | None


def delivered(c: sqlite3.Connection) -> list[Sent]:
    """Every alert, oldest first (tests and `roost notify` read them)."""
    rows = c.execute(
        "SELECT id, agent_name, edge, title, body, tries, done_at, outcome FROM alerts ORDER BY id"
    )
    return [
        {
            "id": r[0],
            "agent": r[1],
            "edge": r[2],
            "title": r[3],
            "body": r[4],
            "tries": r[5],
            "done_at": r[6],
            "outcome": json.loads(r[7]) if r[7] else None,
        }
        for r in rows
    ]
