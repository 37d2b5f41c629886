"""The status pipeline's SQL: the one SELECT every view of the agents starts from, and the writes
that record status changes. Import-light (json only when a change is written): `roost ls` reads
the listing on its fast path.
"""

from __future__ import annotations

import sqlite3

from roost.core.observation import Record, status_event

TYPE_CHECKING = False  # not typing's: the typing module is not imported at run time
if TYPE_CHECKING:
    from collections.abc import Sequence

    from roost.core.observation import Observation

# Columns in Record's order; the tab and the linked agents by name; the session id's changes as
# one JSON array (oldest first); the current launch's token.
_LISTING = """
SELECT a.id, a.name, a.provider, a.cwd, a.home, a.args, a.dangerous, a.provider_session_id,
       a.created_at, a.started_at, a.launches, a.last_exit, a.intent, a.placement, t.name,
       p.agent_id IS NOT NULL, lp.name, op.name, oroot.name, a.last_active_at, a.last_error,
       a.status, a.status_source, a.status_since, a.hook_offset, a.restart_policy,
       {history}, lt.token
FROM agents a
LEFT JOIN launches lt ON lt.agent_id = a.id
LEFT JOIN tabs t ON t.id = a.tab_id
LEFT JOIN pins p ON p.agent_id = a.id
LEFT JOIN agents lp ON lp.id = a.linked_parent
LEFT JOIN agents op ON op.id = a.orchestration_parent
LEFT JOIN agents oroot ON oroot.id = a.orchestration_root
ORDER BY p.position IS NULL, p.position, a.created_at, a.name
"""


_HISTORY = """(SELECT json_group_array(json_object('session_id', h.provider_session_id,
                                                 'previous', h.previous, 'at', h.at,
                                                 'reason', h.reason))
             FROM (SELECT * FROM session_history WHERE agent_id = a.id ORDER BY id) h)"""
_WITH_HISTORY = _LISTING.format(history=_HISTORY)
_WITHOUT_HISTORY = _LISTING.format(history="'[]'")


# What the listing's readers catch: the store could not be read (locked, damaged, not a database).
Unreadable = sqlite3.DatabaseError


def open_current(path: str) -> sqlite3.Connection | None:
    """The store at `path` opened to read the listing, as `roost ls`'s fast path wants it; None
    when it is of another schema version or damaged (the full CLI opens it and says what to do).
    Raises Unreadable when SQLite cannot read it at all."""
    from roost.store import schema

    conn = sqlite3.connect(path, isolation_level=None, timeout=30.0)
    try:
        conn.execute("PRAGMA busy_timeout = 30000")
        current = conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
        if current and not schema.damage(conn):
            return conn
    except BaseException:
        conn.close()
        raise
    conn.close()
    return None


def records(conn: sqlite3.Connection, history: bool = True) -> list[Record]:
    """Every agent: the pinned ones first in pin order, then the rest in creation order.
    `history`: with each one's session history (only JSON shows it: `roost ls`'s table skips
    building a thousand JSON arrays)."""
    return [Record(*row) for row in conn.execute(_WITH_HISTORY if history else _WITHOUT_HISTORY)]


def record_changes(conn: sqlite3.Connection, changed: Sequence[Observation], at: str) -> None:
    """Store each new status (since `at`) and log it as a `status` event. Run inside a write
    transaction (Store.write), so a status and its event are recorded together."""
    from roost.store import events  # the full path only: `roost ls`'s fast path never writes

    for o in changed:
        conn.execute("UPDATE agents SET status = ?, status_source = ?, status_since = ? "
                     "WHERE id = ?", (o.status, o.status_source, at, o.agent.id))
        events.append(conn, o.agent.id, o.agent.name, at, "status", status_event(o))


def known_names(db: str, what: str) -> list[str]:
    """The agents' ("agents") or tabs' ("tabs") names, sorted, read-only (shell completion);
    none when there is no database yet or it cannot be read."""
    import os
    import pathlib

    if not os.path.exists(db):
        return []
    sql = ("SELECT name FROM tabs ORDER BY name" if what == "tabs"
           else "SELECT name FROM agents ORDER BY name")
    try:
        conn = sqlite3.connect(pathlib.Path(db).as_uri() + "?mode=ro", uri=True, timeout=2.0)
        try:
            return [str(row[0]) for row in conn.execute(sql)]
        finally:
            conn.close()
    except sqlite3.Error:
        return []


def record_status(conn: sqlite3.Connection, agent_id: str, name: str, status: str, source: str,
                  at: str) -> None:
    """One agent's status set by roost itself (source: who knows it), logged as a `status`
    event. Inside a write transaction."""
    from roost.store import events

    conn.execute("UPDATE agents SET status = ?, status_source = ?, status_since = ? "
                 "WHERE id = ?", (status, source, at, agent_id))
    events.append(conn, agent_id, name, at, "status", {"status": status, "source": source})


def orchestration_parent_while(conn: sqlite3.Connection, child_id: str,
                               status: str | None) -> str | None:
    """The child's orchestration parent's id, while the child's stored status is still
    `status` (None: no parent any more, or another writer recorded a change first)."""
    row = conn.execute("SELECT a.status, p.id FROM agents a JOIN agents p ON "
                       "p.id = a.orchestration_parent WHERE a.id = ?", (child_id,)).fetchone()
    return None if row is None or row[0] != status else str(row[1])
