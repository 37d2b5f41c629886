"""The event log: append-only, one row per thing that happened to an agent (spawned, started,
exited, woke, killed, status, sent...). Keyed by roost id, since a name can be reused after `rm`.

`append` runs inside the caller's `store.write()` transaction, so an event can be written together
with the change it records.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Generator, Iterable, Mapping
from dataclasses import dataclass
from typing import Any


def append(
    c: sqlite3.Connection,
    agent_id: str,
    agent_name: str,
    at: str,
    kind: str,
    detail: Mapping[str, object],
) -> None:
    c.execute(
        "INSERT INTO events (agent_id, agent_name, at, kind, detail) VALUES (?, ?, ?, ?, ?)",
        (agent_id, agent_name, at, kind, json.dumps(detail)),
    )


def recent(
    conn: sqlite3.Connection, agent_id: str | None = None, limit: int = 1000
) -> list[dict[str, Any]]:
    """The last `limit` events (of one agent, or of all), oldest first, details spread in."""
    where, args = ("WHERE agent_id = ?", (agent_id,)) if agent_id else ("", ())
    rows = conn.execute(
        f"SELECT id, agent_name, at, kind, detail FROM (SELECT * FROM events {where} "
        f"ORDER BY id DESC LIMIT ?) ORDER BY id",
        (*args, limit),
    )
    return [{"id": r[0], "agent": r[1], "at": r[2], "kind": r[3], **json.loads(r[4])} for r in rows]


def since_launch(
    conn: sqlite3.Connection, agent_id: str, kinds: tuple[str, ...]
) -> Generator[dict[str, Any], None, None]:
    """The agent's last launch (its last `started` event, if it has one) and its events of
    `kinds` since, oldest first, details spread in; read as they are taken (an agent that ran
    for months has many, and its reader may stop at the first)."""
    wanted = ("started", *kinds)
    marks = ",".join("?" * len(wanted))
    rows = conn.execute(
        f"SELECT kind, detail FROM events WHERE agent_id = ? AND kind IN ({marks}) AND id >= "
        "(SELECT coalesce(max(id), 0) FROM events WHERE agent_id = ? AND kind = 'started') "
        "ORDER BY id",
        (agent_id, *wanted, agent_id),
    )
    return ({"kind": r[0], **json.loads(r[1])} for r in rows)


def last_id(conn: sqlite3.Connection) -> int:
    """The newest event's id (0 with none): where a reader of what comes next starts."""
    return int(conn.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0])


def since(conn: sqlite3.Connection, after: int, kind: str) -> list[dict[str, Any]]:
    """The events of `kind` after the event `after`, oldest first, with their agent's id."""
    rows = conn.execute(
        "SELECT id, agent_id, agent_name, at, kind, detail FROM events "
        "WHERE id > ? AND kind = ? ORDER BY id",
        (after, kind),
    )
    return [
        {"id": r[0], "agent_id": r[1], "agent": r[2], "at": r[3], "kind": r[4], **json.loads(r[5])}
        for r in rows
    ]


def after(conn: sqlite3.Connection, seq: int, limit: int = 1000) -> list[dict[str, Any]]:
    """Every event after sequence `seq` (an event's id is its sequence), oldest first, at most
    `limit`: what a reader of the stream (`roost watch --json`, the service's components) gets
    next. Each has `seq`, `agent_id`, `agent`, `at`, `kind` and its details spread in."""
    rows = conn.execute(
        "SELECT id, agent_id, agent_name, at, kind, detail FROM events WHERE id > ? "
        "ORDER BY id LIMIT ?",
        (seq, limit),
    )
    return [
        {
            **json.loads(r[5]),
            "seq": r[0],
            "agent_id": r[1],
            "agent": r[2],
            "at": r[3],
            "kind": r[4],
        }
        for r in rows
    ]


@dataclass(frozen=True, slots=True)
class StatusChange:
    """A status change the status pipeline stored (a `status` event), as the service's
    components hear of it (ops/service.Component.on_status), whichever process recorded it."""

    seq: int
    agent_id: str
    agent: str
    at: str
    status: str
    previous: str | None
    source: str | None


def status_changes(batch: Iterable[Mapping[str, Any]]) -> list[StatusChange]:
    """The status changes among events as `after` gives them, in order; a row that is not a
    well-formed status change (another kind, an old version's shape) is not one."""
    found = []
    for e in batch:
        status, agent_id = e.get("status"), e.get("agent_id")
        if e.get("kind") != "status" or not isinstance(status, str) or not agent_id:
            continue
        previous, source = e.get("previous"), e.get("source")
        found.append(
            StatusChange(
                seq=int(e["seq"]),
                agent_id=str(agent_id),
                agent=str(e.get("agent") or ""),
                at=str(e.get("at") or ""),
                status=status,
                previous=previous if isinstance(previous, str) else None,
                source=source if isinstance(source, str) else None,
            )
        )
    return found
