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
from typing import cast

from roost.core.events import Event, EventKind

# The columns of an Event, in its fields' order (`_event` builds one of a row).
COLUMNS = "id, agent_id, agent_name, at, kind, detail"


def append(
    c: sqlite3.Connection,
    agent_id: str,
    agent_name: str,
    at: str,
    kind: EventKind,
    detail: Mapping[str, object],
) -> None:
    c.execute(
        "INSERT INTO events (agent_id, agent_name, at, kind, detail) VALUES (?, ?, ?, ?, ?)",
        (agent_id, agent_name, at, kind, json.dumps(detail)),
    )


def event(row: tuple[int, str, str, str, str, str]) -> Event:
    """One row of COLUMNS as an Event. Its kind is taken as written: a kind this version does
    not know (a newer roost's) matches no reader's."""
    data = json.loads(row[5])
    return Event(
        row[0],
        row[1],
        row[2],
        row[3],
        cast(EventKind, row[4]),
        data if isinstance(data, dict) else {},
    )


def recent(conn: sqlite3.Connection, agent_id: str | None = None, limit: int = 1000) -> list[Event]:
    """The last `limit` events (of one agent, or of all), oldest first."""
    where, args = ("WHERE agent_id = ?", (agent_id,)) if agent_id else ("", ())
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM (SELECT * FROM events {where} "
        f"ORDER BY id DESC LIMIT ?) ORDER BY id",
        (*args, limit),
    )
    return [event(r) for r in rows]


def since_launch(
    conn: sqlite3.Connection, agent_id: str, kinds: tuple[EventKind, ...]
) -> Generator[Event, None, None]:
    """The agent's last launch (its last `started` event, if it has one) and its events of
    `kinds` since, oldest first; read as they are taken (an agent that ran for months has many,
    and its reader may stop at the first)."""
    wanted = ("started", *kinds)
    marks = ",".join("?" * len(wanted))
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM events WHERE agent_id = ? AND kind IN ({marks}) AND id >= "
        "(SELECT coalesce(max(id), 0) FROM events WHERE agent_id = ? AND kind = 'started') "
        "ORDER BY id",
        (agent_id, *wanted, agent_id),
    )
    return (event(r) for r in rows)


def last_id(conn: sqlite3.Connection) -> int:
    """The newest event's id (0 with none): where a reader of what comes next starts."""
    return int(conn.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0])


def since(conn: sqlite3.Connection, after: int, kind: EventKind) -> list[Event]:
    """The events of `kind` after the event `after`, oldest first."""
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM events WHERE id > ? AND kind = ? ORDER BY id", (after, kind)
    )
    return [event(r) for r in rows]


def after(conn: sqlite3.Connection, seq: int, limit: int = 1000) -> list[Event]:
    """Every event after sequence `seq` (an event's id is its sequence), oldest first, at most
    `limit`: what a reader of the stream (`roost watch --json`, the service's components) gets
    next."""
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM events WHERE id > ? ORDER BY id LIMIT ?", (seq, limit)
    )
    return [event(r) for r in rows]


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


def status_changes(batch: Iterable[Event]) -> list[StatusChange]:
    """The status changes among events, in order; a row that is not a well-formed status change
    (another kind, an old version's shape) is not one."""
    found = []
    for e in batch:
        status = e.text("status")
        if e.kind != "status" or status is None or not e.agent_id:
            continue
        found.append(
            StatusChange(
                seq=e.seq,
                agent_id=e.agent_id,
                agent=e.agent,
                at=e.at,
                status=status,
                previous=e.text("previous"),
                source=e.text("source"),
            )
        )
    return found
