"""Children on a host (docs/HOSTS.md "Children on a host"): which parent here created which
agent on which host, the child's last status heard of here, and how far this roost has read
each such host's event stream. The host's own store stays the truth about the child; these rows
are only what a parent here needs to hear of it. Functions taking a connection run inside the
caller's `store.write()` transaction (or read on the store's connection)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class HostChild:
    parent_id: str
    host: str
    name: str  # its name on the host
    remote_id: str
    status: str | None
    created_at: str


_COLUMNS = "parent_id, host, name, remote_id, status, created_at"


def insert(c: sqlite3.Connection, child: HostChild, seq: int) -> None:
    """Record the child, and start reading its host's stream after `seq` (the host's last event
    before the child was spawned) unless it is read already (from earlier: never later)."""
    c.execute(
        f"INSERT INTO host_children ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
        (child.parent_id, child.host, child.name, child.remote_id, child.status, child.created_at),
    )
    c.execute("INSERT OR IGNORE INTO host_cursors (host, seq) VALUES (?, ?)", (child.host, seq))


def of_parent(c: sqlite3.Connection, parent_id: str) -> list[HostChild]:
    rows = c.execute(
        f"SELECT {_COLUMNS} FROM host_children WHERE parent_id = ? ORDER BY created_at, name",
        (parent_id,),
    )
    return [HostChild(*r) for r in rows]


def on_host(c: sqlite3.Connection, host: str) -> dict[str, HostChild]:
    """The children on `host`, by their name there."""
    rows = c.execute(f"SELECT {_COLUMNS} FROM host_children WHERE host = ?", (host,))
    return {r[2]: HostChild(*r) for r in rows}


def get(c: sqlite3.Connection, host: str, name: str) -> HostChild | None:
    row = c.execute(
        f"SELECT {_COLUMNS} FROM host_children WHERE host = ? AND name = ?", (host, name)
    ).fetchone()
    return HostChild(*row) if row else None


def hosts(c: sqlite3.Connection) -> list[str]:
    """The hosts that have children of parents here (the service follows each)."""
    return [r[0] for r in c.execute("SELECT DISTINCT host FROM host_children ORDER BY host")]


def has_children(c: sqlite3.Connection, parent_id: str) -> bool:
    found = c.execute("SELECT 1 FROM host_children WHERE parent_id = ? LIMIT 1", (parent_id,))
    return found.fetchone() is not None


def delete(c: sqlite3.Connection, host: str, name: str) -> None:
    """Forget a child (removed on its host); its host's cursor goes with its last child."""
    c.execute("DELETE FROM host_children WHERE host = ? AND name = ?", (host, name))
    c.execute(
        "DELETE FROM host_cursors WHERE host = ? AND NOT EXISTS "
        "(SELECT 1 FROM host_children WHERE host = ?)",
        (host, host),
    )


def set_status(c: sqlite3.Connection, host: str, name: str, status: str | None) -> None:
    c.execute(
        "UPDATE host_children SET status = ? WHERE host = ? AND name = ?", (status, host, name)
    )


def cursor(c: sqlite3.Connection, host: str) -> int | None:
    row = c.execute("SELECT seq FROM host_cursors WHERE host = ?", (host,)).fetchone()
    return int(row[0]) if row else None


def set_cursor(c: sqlite3.Connection, host: str, seq: int) -> None:
    """Move the host's cursor forward (never back: a replayed line changes nothing)."""
    c.execute("UPDATE host_cursors SET seq = max(seq, ?) WHERE host = ?", (seq, host))
