"""The status pipeline's SQL: the listing every view of the agents starts from (store/agents.py's
SELECT, in `roost ls`'s order), and the writes that record status changes. Import-light (json only
when a change is written): `roost ls` reads the listing on its fast path.
"""

from __future__ import annotations

import os
import sqlite3
from typing import TYPE_CHECKING

from roost.core.observation import status_event
from roost.core.status import Status
from roost.store import agents, schema

if TYPE_CHECKING:
    from collections.abc import Sequence

    from roost.core.model import Agent
    from roost.core.observation import Observation

_WITH_DETAILS = agents.select(order=agents.LISTING_ORDER, history=True)
_WITHOUT_DETAILS = agents.select(order=agents.LISTING_ORDER, worktree=False)


# What the listing's readers catch: the store could not be read (locked, damaged, not a database).
Unreadable = sqlite3.DatabaseError


def open_current(path: str, shared: bool = False) -> sqlite3.Connection | None:
    """The store at `path` opened to read the listing, as `roost ls`'s fast path wants it; None
    when it is of another schema version or damaged (the full CLI opens it and says what to do).
    Raises Unreadable when SQLite cannot read it at all. `shared`: used from several threads,
    one at a time (the caller's lock)."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=30.0, check_same_thread=not shared)
    try:
        conn.execute("PRAGMA busy_timeout = 30000")
        current = conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
        if current and not schema.damage(conn, agents.LISTED_TABLES):  # it only reads those
            return conn
    except BaseException:
        conn.close()
        raise
    conn.close()
    return None


class KeptRecords:
    """The listing's rows for a long-lived reader (the roost service's `roost ls` answers): one
    connection kept, and the rows read again only when another connection committed (SQLite's
    data_version) or the file was replaced, so a store nobody changed costs two PRAGMAs and a
    stat per look. Agents are frozen: sharing the list is safe. Callers hold their own lock."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.conn: sqlite3.Connection | None = None
        self.seen: tuple[int, int] | None = None  # (inode, data_version)
        self.rows: dict[bool, list[Agent]] = {}
        self.generation = 0  # grows each time the rows may differ: what a caller's cache keys on

    def __call__(self, details: bool) -> list[Agent] | None:
        """`records(…, details)` as of now; None for a store of another version or damaged."""
        inode = os.stat(self.path).st_ino
        if self.conn is not None and self.seen is not None and self.seen[0] != inode:
            self.close()
        if self.conn is None:
            self.conn = open_current(self.path, shared=True)
            if self.conn is None:
                return None
        version = self.conn.execute("PRAGMA data_version").fetchone()[0]
        if self.seen != (inode, version):
            self.rows.clear()
            self.generation += 1
            self.seen = (inode, version)
            if self.conn.execute("PRAGMA user_version").fetchone()[0] != schema.SCHEMA_VERSION:
                self.close()  # migrated meanwhile: opened again (and checked) next time
                return None
        if details not in self.rows:
            self.rows[details] = records(self.conn, details)
        return self.rows[details]

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
        self.conn, self.seen = None, None
        self.rows.clear()
        self.generation += 1


def records(conn: sqlite3.Connection, details: bool = True) -> list[Agent]:
    """Every agent: the pinned ones first in pin order, then the rest in creation order.
    `details`: with each one's session history and worktree (only JSON shows them: `roost ls`'s
    table skips a thousand subqueries and JSON values)."""
    return [
        agents.agent(row) for row in conn.execute(_WITH_DETAILS if details else _WITHOUT_DETAILS)
    ]


def record_changes(
    conn: sqlite3.Connection, changed: Sequence[Observation], at: str
) -> list[Observation]:
    """Store each new status (since `at`) and log it as a `status` event; the ones recorded.
    Run inside a write transaction (Store.write), so a status and its event are recorded
    together. A change is recorded only over the status it was seen against: another roost
    (the service, an `ls`) that looked at the same moment and wrote first has recorded it, and
    logging it twice would show one change twice in the stream."""
    from roost.store import events  # the full path only: `roost ls`'s fast path never writes

    done = []
    for o in changed:
        cur = conn.execute(
            "UPDATE agents SET status = ?, status_source = ?, status_since = ? WHERE id = ? "
            "AND status IS ? AND status_source IS ?",
            (o.status, o.status_source, at, o.agent.id, o.agent.status, o.agent.status_source),
        )
        if cur.rowcount:
            events.append(conn, o.agent.id, o.agent.name, at, "status", status_event(o))
            done.append(o)
    return done


def known_names(db: str, what: str) -> list[str]:
    """The agents' ("agents") or tabs' ("tabs") names, sorted, read-only (shell completion);
    none when there is no database yet or it cannot be read."""
    import pathlib

    if not os.path.exists(db):
        return []
    sql = (
        "SELECT name FROM tabs ORDER BY name"
        if what == "tabs"
        else "SELECT name FROM agents ORDER BY name"
    )
    try:
        conn = sqlite3.connect(pathlib.Path(db).as_uri() + "?mode=ro", uri=True, timeout=2.0)
        try:
            return [str(row[0]) for row in conn.execute(sql)]
        finally:
            conn.close()
    except sqlite3.Error:
        return []


def record_status(
    conn: sqlite3.Connection, agent_id: str, name: str, status: str, source: str, at: str
) -> None:
    """One agent's status set by roost itself (source: who knows it), logged as a `status`
    event. Inside a write transaction."""
    from roost.store import events

    conn.execute(
        "UPDATE agents SET status = ?, status_source = ?, status_since = ? WHERE id = ?",
        (status, source, at, agent_id),
    )
    events.append(conn, agent_id, name, at, "status", {"status": status, "source": source})


def record_turn_begun(
    conn: sqlite3.Connection, agent_id: str, name: str, since: int, source: str, at: str
) -> bool:
    """A prompt the agent took began a turn: it is working, unless a look recorded that turn
    already (a `working` status event after event `since`, the last before the prompt went)
    or it is stored working. So a turn that begins and ends between two looks is still one
    working -> idle change (a parent's notice, a line of the host's stream), and never two.
    Whether it was recorded; inside a write transaction."""
    from roost.store import events

    row = conn.execute("SELECT status FROM agents WHERE id = ?", (agent_id,)).fetchone()
    if row is None or row[0] == "working":
        return False
    seen = conn.execute(
        "SELECT 1 FROM events WHERE agent_id = ? AND kind = 'status' AND id > ? "
        "AND json_extract(detail, '$.status') = 'working' LIMIT 1",
        (agent_id, since),
    ).fetchone()
    if seen is not None:
        return False
    conn.execute(
        "UPDATE agents SET status = 'working', status_source = ?, status_since = ? WHERE id = ?",
        (source, at, agent_id),
    )
    detail = {"status": Status.WORKING, "previous": row[0], "source": source}
    events.append(conn, agent_id, name, at, "status", detail)
    return True


def orchestration_parent_while(
    conn: sqlite3.Connection, child_id: str, status: str | None
) -> str | None:
    """The child's orchestration parent's id, while the child's stored status is still
    `status` (None: no parent any more, or another writer recorded a change first)."""
    row = conn.execute(
        "SELECT a.status, p.id FROM agents a JOIN agents p ON "
        "p.id = a.orchestration_parent WHERE a.id = ?",
        (child_id,),
    ).fetchone()
    return None if row is None or row[0] != status else str(row[1])
