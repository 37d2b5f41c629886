"""The store's schema and its migrations. Import-light on purpose: `roost ls` reads it without
loading the rest of roost.

Each entry upgrades the schema by one version. Never edit a released entry; append a new one.
An entry is SQL, a function that gets the connection inside the migration's transaction, or a
list of those run in order.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

V1 = """
CREATE TABLE agents (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    provider TEXT NOT NULL,
    cwd TEXT NOT NULL,
    home TEXT NOT NULL,
    args TEXT NOT NULL DEFAULT '[]',
    dangerous INTEGER NOT NULL DEFAULT 0,
    provider_session_id TEXT UNIQUE,
    created_at TEXT NOT NULL,
    intent TEXT NOT NULL,
    started_at TEXT,
    launches INTEGER NOT NULL DEFAULT 0,
    last_exit INTEGER
);
-- Every provider session id an agent ever had (it changes on /clear): one owner each.
CREATE TABLE provider_sessions (
    provider_session_id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    seen_at TEXT NOT NULL
);
"""

# The workspace: tabs of tiles, parked (detached) and buried agents, pins, links.
V2 = """
CREATE TABLE tabs (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    position INTEGER NOT NULL,
    layout TEXT,  -- JSON tile tree of agent ids; NULL for an empty tab
    focus TEXT REFERENCES agents(id) ON DELETE SET NULL
);
ALTER TABLE agents ADD COLUMN placement TEXT
    CHECK (placement IN ('tile', 'detached', 'buried'));  -- NULL: owned by nothing (stale)
ALTER TABLE agents ADD COLUMN tab_id TEXT REFERENCES tabs(id) ON DELETE SET NULL;
ALTER TABLE agents ADD COLUMN buried_sibling TEXT REFERENCES agents(id) ON DELETE SET NULL;
ALTER TABLE agents ADD COLUMN buried_side TEXT;
ALTER TABLE agents ADD COLUMN buried_direction TEXT;
ALTER TABLE agents ADD COLUMN buried_ratio REAL;
ALTER TABLE agents ADD COLUMN linked_parent TEXT REFERENCES agents(id) ON DELETE SET NULL;
ALTER TABLE agents ADD COLUMN orchestration_parent TEXT REFERENCES agents(id) ON DELETE SET NULL;
ALTER TABLE agents ADD COLUMN orchestration_root TEXT REFERENCES agents(id) ON DELETE SET NULL;
ALTER TABLE agents ADD COLUMN last_active_at TEXT;
ALTER TABLE agents ADD COLUMN last_error TEXT;
CREATE TABLE pins (
    agent_id TEXT PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    position INTEGER NOT NULL
);
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def _v2_place_existing_agents(conn: sqlite3.Connection) -> None:
    """Agents from before workspaces were all on screen: make them tiles of a tab "main"."""
    import json
    import uuid

    ids = [r[0] for r in conn.execute("SELECT id FROM agents ORDER BY created_at, name")]
    conn.execute("UPDATE agents SET last_active_at = COALESCE(started_at, created_at)")
    if not ids:
        return
    tree: dict[str, object] | None = None
    for agent_id in ids:  # a row of side-by-side tiles
        leaf = {"leaf": agent_id}
        tree = leaf if tree is None else {"split": "v", "ratio": 0.5, "a": tree, "b": leaf}
    tab_id = str(uuid.uuid4())
    conn.execute("INSERT INTO tabs (id, name, position, layout, focus) VALUES (?, 'main', 0, ?, ?)",
                 (tab_id, json.dumps(tree), ids[-1]))
    conn.execute("UPDATE agents SET placement = 'tile', tab_id = ?", (tab_id,))


# Status, supervision and the event log.
V3 = """
ALTER TABLE agents ADD COLUMN status TEXT;
ALTER TABLE agents ADD COLUMN status_source TEXT;
ALTER TABLE agents ADD COLUMN status_since TEXT;
ALTER TABLE agents ADD COLUMN restart_policy TEXT NOT NULL DEFAULT 'never'
    CHECK (restart_policy IN ('never', 'on-failure'));
ALTER TABLE agents ADD COLUMN conversation_seen INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN transcript_path TEXT;
ALTER TABLE agents ADD COLUMN hook_offset INTEGER NOT NULL DEFAULT 0;
-- Append-only. Keyed by roost id (names can be reused after rm), with the name for reading.
CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id TEXT NOT NULL,
    agent_name TEXT NOT NULL,
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX events_by_agent ON events (agent_id, id);
"""

# Orchestration: retry-safe requests from `roost mcp` and the parents' notification queue.
V4 = """
-- A client-chosen idempotency key per caller: a retried send returns the first answer.
CREATE TABLE requests (
    caller TEXT NOT NULL,  -- roost id of the calling agent, '' for a person's client
    key TEXT NOT NULL,
    kind TEXT NOT NULL,
    at TEXT NOT NULL,
    result TEXT,  -- JSON; NULL while the first attempt is still under way
    PRIMARY KEY (caller, key)
);
-- What a parent is to be told about its children, delivered in id order, once.
CREATE TABLE notifications (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    parent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    child_id TEXT NOT NULL,
    child_name TEXT NOT NULL,
    status TEXT NOT NULL,
    text TEXT NOT NULL,
    created_at TEXT NOT NULL,
    delivered_at TEXT
);
CREATE INDEX notifications_pending ON notifications (parent_id, delivered_at, id);
"""

# Lineage (issue 13): every change of an agent's provider session id, with when, why and from
# which (provider_sessions stays the one-owner-per-id table), and the token of each agent's
# current launch, which its hooks write into every line of its hook log (providers/hooks.py).
V5 = """
CREATE TABLE session_history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    provider_session_id TEXT NOT NULL,
    previous TEXT,  -- the id it replaced; NULL for the first
    at TEXT NOT NULL,
    reason TEXT NOT NULL  -- spawn, clear, compact, resume, startup, discovered, fresh, chosen,
                          -- imported, or earlier-roost (recorded before roost kept reasons)
);
CREATE INDEX session_history_by_agent ON session_history (agent_id, id);
CREATE TABLE launches (
    agent_id TEXT PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    token TEXT NOT NULL,
    at REAL NOT NULL  -- epoch seconds, taken before the process started
);
"""


# Issue 18 (branch notify): a notice counts the deliveries its parent died on (no wake for it
# after one, given up after two), and an idempotency key is bound to what it was used for.
V6 = """
ALTER TABLE notifications ADD COLUMN tries INTEGER NOT NULL DEFAULT 0;
ALTER TABLE requests ADD COLUMN target TEXT NOT NULL DEFAULT '';
ALTER TABLE requests ADD COLUMN digest TEXT NOT NULL DEFAULT '';
"""


# Issue 20: `spawn --no-mcp` is a fact of the agent's record (export and import carry it), no
# longer a marker file beside the store; an earlier roost's markers become the column's value.
V7 = """
ALTER TABLE agents ADD COLUMN mcp INTEGER NOT NULL DEFAULT 1;
"""


def _v7_mcp_from_markers(conn: sqlite3.Connection) -> None:
    """Agents whose folder holds the `no-mcp` marker an earlier roost wrote: mcp = 0."""
    import os

    path = conn.execute("PRAGMA database_list").fetchone()[2]
    if not path:
        return  # an in-memory database (tests): no folders
    agents = os.path.join(os.path.dirname(path), "agents")
    for (agent_id,) in conn.execute("SELECT id FROM agents").fetchall():
        if os.path.lexists(os.path.join(agents, agent_id, "no-mcp")):
            conn.execute("UPDATE agents SET mcp = 0 WHERE id = ?", (agent_id,))


def _v5_history_from_lineage(conn: sqlite3.Connection) -> None:
    """The ids an earlier roost recorded, in their order, as changes: the reason is the source
    its `session` event gave (clear, compact...) when there is one."""
    previous: dict[str, str] = {}
    rows = conn.execute("SELECT agent_id, provider_session_id, seen_at FROM provider_sessions "
                        "ORDER BY seen_at, rowid").fetchall()
    for agent_id, sid, seen_at in rows:
        source = conn.execute(
            "SELECT json_extract(detail, '$.source') FROM events WHERE agent_id = ? AND "
            "kind = 'session' AND json_extract(detail, '$.session_id') = ? ORDER BY id LIMIT 1",
            (agent_id, sid)).fetchone()
        reason = source[0] if source and isinstance(source[0], str) else "earlier-roost"
        conn.execute("INSERT INTO session_history (agent_id, provider_session_id, previous, at, "
                     "reason) VALUES (?, ?, ?, ?, ?)",
                     (agent_id, sid, previous.get(agent_id), seen_at, reason))
        previous[agent_id] = sid


Step = str | Callable[[sqlite3.Connection], None]
MIGRATIONS: list[Step | list[Step]] = [
    V1,
    [V2, _v2_place_existing_agents],
    V3,
    V4,
    [V5, _v5_history_from_lineage],
    V6,
    [V7, _v7_mcp_from_markers],
]
SCHEMA_VERSION = len(MIGRATIONS)


def statements(script: str) -> list[str]:
    """Split SQL into statements (executescript would commit the caller's transaction)."""
    found, current = [], ""
    for line in script.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            found.append(current)
            current = ""
    return found


def apply(conn: sqlite3.Connection, from_version: int, to_version: int = SCHEMA_VERSION) -> None:
    """Run the migrations after `from_version` up to `to_version` (tests make older stores
    this way); the caller holds the write transaction."""
    for step in MIGRATIONS[from_version:to_version]:
        for part in step if isinstance(step, list) else [step]:
            if callable(part):
                part(conn)
            else:
                for statement in statements(part):
                    conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {to_version}")


# The append-only event log is left out: it grows with every status change (its quick check
# costs ~60 ms at 100,000 events), and no constraint depends on it.
UNCHECKED = ("events",)


def damage(conn: sqlite3.Connection) -> str | None:
    """SQLite's first complaint about the structure of roost's tables and their indexes (a
    zeroed page, a broken b-tree), or None. About 2 ms for 1,000 agents (docs/DECISIONS.md):
    cheap enough for every command, and run before anything is written, because a damaged
    UNIQUE index no longer stops a second agent of the same name."""
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
              if r[0] not in UNCHECKED]
    for table in tables:
        quoted = table.replace('"', '""')
        found = conn.execute(f'PRAGMA quick_check("{quoted}")').fetchone()[0]
        if found != "ok":  # "*** in database main ***\nPage 4: ..." -> "page 4: ..."
            lines = [line for line in str(found).splitlines() if not line.startswith("***")]
            return "; ".join(lines) or str(found).strip()
    return None
