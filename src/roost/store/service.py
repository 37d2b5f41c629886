"""The roost service's rows (ops/service.py): its runs (pid, pane, start, end, exit status, what
it serves), whether the user wants it (`roost service stop` says no until the next start), and
each component's place in the event log (the sequence it has handled up to), and when the
monitor last heard each pane change. The service keeps no state of its own anywhere else.

The event log itself is store/events.py's: `after` reads it by sequence.
"""

from __future__ import annotations

import sqlite3

# json is imported where used: store/schema.py imports this module on `roost ls`'s fast path.

# One migration step (store/schema.py appends it): the service's own tables.
SERVICE_TABLES = """
CREATE TABLE service_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    pid INTEGER NOT NULL,
    pane_id TEXT NOT NULL,
    started_at TEXT NOT NULL,
    serves TEXT NOT NULL DEFAULT '[]',
    ended_at TEXT,
    exit_code INTEGER
);
CREATE TABLE service_intent (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    wanted INTEGER NOT NULL
);
CREATE TABLE service_cursors (
    component TEXT PRIMARY KEY,
    seq INTEGER NOT NULL
);
-- When the monitor last heard a pane's screen change (the TUI recaptures only then).
CREATE TABLE service_panes (
    pane_id TEXT PRIMARY KEY,
    changed_at TEXT NOT NULL
);
"""

# A later step (issue 36 point 6): each component's state in a run, what `roost service status`
# reports as served (a run's `serves` column keeps the names it was started with).
SERVICE_PARTS = """
CREATE TABLE service_parts (
    run_id INTEGER NOT NULL REFERENCES service_runs(id) ON DELETE CASCADE,
    component TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('starting', 'serving', 'off', 'failed')),
    address TEXT,               -- where it serves: a socket's path, a URL
    error TEXT,                 -- its last failure: its start, or a batch of events
    at TEXT NOT NULL,           -- when its state or error last changed
    PRIMARY KEY (run_id, component)
);
"""

Run = tuple[int, int, str, str, list[str], str | None, int | None]
PartRow = tuple[str, str, str | None, str | None, str]


def begin_run(c: sqlite3.Connection, pid: int, pane_id: str, at: str, serves: list[str]) -> int:
    """A run starts (inside the caller's transaction); its row id."""
    import json

    cur = c.execute(
        "INSERT INTO service_runs (pid, pane_id, started_at, serves) VALUES (?, ?, ?, ?)",
        (pid, pane_id, at, json.dumps(serves)),
    )
    return int(cur.lastrowid or 0)


def end_stale_runs(c: sqlite3.Connection, at: str) -> None:
    """Close every open run: called by a run about to begin, which holds the service's lock, so
    no process of theirs lives (one killed -9, its pane respawned before its hook closed it)."""
    c.execute("UPDATE service_runs SET ended_at = ? WHERE ended_at IS NULL", (at,))


def begin_parts(c: sqlite3.Connection, run_id: int, states: dict[str, str], at: str) -> None:
    """The components of run `run_id` and their first states; earlier runs' parts go (only the
    newest run's are ever read)."""
    c.execute("DELETE FROM service_parts WHERE run_id <> ?", (run_id,))
    c.executemany(
        "INSERT INTO service_parts (run_id, component, state, at) VALUES (?, ?, ?, ?)",
        [(run_id, name, state, at) for name, state in states.items()],
    )


def set_part(
    c: sqlite3.Connection,
    run_id: int,
    component: str,
    state: str,
    at: str,
    address: str | None = None,
    error: str | None = None,
) -> None:
    """A component's start returned (serving or off, with where) or failed (with why)."""
    c.execute(
        "UPDATE service_parts SET state = ?, address = ?, error = ?, at = ? "
        "WHERE run_id = ? AND component = ?",
        (state, address, error, at, run_id, component),
    )


def part_failed(c: sqlite3.Connection, run_id: int, component: str, error: str, at: str) -> None:
    """A serving component failed on something (a batch of events): its state stays."""
    c.execute(
        "UPDATE service_parts SET error = ?, at = ? WHERE run_id = ? AND component = ?",
        (error, at, run_id, component),
    )


def parts(conn: sqlite3.Connection, run_id: int) -> list[PartRow]:
    """(component, state, address, error, at) of run `run_id`, in the order they were listed."""
    return conn.execute(
        "SELECT component, state, address, error, at FROM service_parts WHERE run_id = ? "
        "ORDER BY rowid",
        (run_id,),
    ).fetchall()


def end_run(c: sqlite3.Connection, pid: int, at: str, exit_code: int | None) -> None:
    """The run of process `pid` ended (its last open run: pids are reused)."""
    c.execute(
        "UPDATE service_runs SET ended_at = ?, exit_code = ? WHERE id = (SELECT max(id) FROM "
        "service_runs WHERE pid = ? AND ended_at IS NULL)",
        (at, exit_code, pid),
    )


def last_run(conn: sqlite3.Connection) -> Run | None:
    """(id, pid, pane id, started at, serves, ended at, exit code) of the newest run."""
    row = conn.execute(
        "SELECT id, pid, pane_id, started_at, serves, ended_at, exit_code FROM service_runs "
        "ORDER BY id DESC LIMIT 1"
    ).fetchone()
    if row is None:
        return None
    import json

    return (row[0], row[1], row[2], row[3], json.loads(row[4]), row[5], row[6])


def deaths(conn: sqlite3.Connection, limit: int = 20) -> list[str]:
    """When the last `limit` runs that ended did, newest first."""
    rows = conn.execute(
        "SELECT ended_at FROM service_runs WHERE ended_at IS NOT NULL ORDER BY id DESC LIMIT ?",
        (limit,),
    )
    return [r[0] for r in rows]


def set_wanted(c: sqlite3.Connection, wanted: bool) -> None:
    c.execute(
        "INSERT INTO service_intent (id, wanted) VALUES (1, ?) "
        "ON CONFLICT (id) DO UPDATE SET wanted = excluded.wanted",
        (int(wanted),),
    )


def wanted(conn: sqlite3.Connection) -> bool:
    """Whether the user wants the service (yes unless `roost service stop` said no since)."""
    row = conn.execute("SELECT wanted FROM service_intent WHERE id = 1").fetchone()
    return row is None or bool(row[0])


def cursor(conn: sqlite3.Connection, component: str) -> int | None:
    """The last event sequence `component` handled; None when it never ran."""
    row = conn.execute(
        "SELECT seq FROM service_cursors WHERE component = ?", (component,)
    ).fetchone()
    return None if row is None else int(row[0])


def set_cursor(c: sqlite3.Connection, component: str, seq: int) -> None:
    c.execute(
        "INSERT INTO service_cursors (component, seq) VALUES (?, ?) "
        "ON CONFLICT (component) DO UPDATE SET seq = excluded.seq",
        (component, seq),
    )


def heard(c: sqlite3.Connection, pane_ids: list[str], at: str) -> None:
    """The monitor heard these panes change (their screen, title or liveness)."""
    c.executemany(
        "INSERT INTO service_panes (pane_id, changed_at) VALUES (?, ?) "
        "ON CONFLICT (pane_id) DO UPDATE SET changed_at = excluded.changed_at",
        [(p, at) for p in pane_ids],
    )


def forget_panes(c: sqlite3.Connection, pane_ids: list[str]) -> None:
    c.executemany("DELETE FROM service_panes WHERE pane_id = ?", [(p,) for p in pane_ids])
