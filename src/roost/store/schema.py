"""The store's schema and its migrations. Import-light on purpose: `roost ls` reads it without
loading the rest of roost.

Each entry upgrades the schema by one version. Never edit a released entry; append a new one.
An entry is SQL, a function that gets the connection inside the migration's transaction, or a
list of those run in order.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from roost.store.service import SERVICE_PARTS, SERVICE_TABLES

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
    conn.execute(
        "INSERT INTO tabs (id, name, position, layout, focus) VALUES (?, 'main', 0, ?, ?)",
        (tab_id, json.dumps(tree), ids[-1]),
    )
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


# Issue 21, notifications to the person (branch notify): the event-log cursor, what was last
# alerted per agent, and the outbox (store/alerts.py).
# The cursor starts at the newest event: an upgraded store does not alert its whole history.
ALERTS = """
CREATE TABLE alert_cursor (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    after INTEGER NOT NULL  -- the last event id decided
);
INSERT INTO alert_cursor (one, after) SELECT 1, coalesce(max(id), 0) FROM events;
CREATE TABLE alert_seen (
    agent_id TEXT PRIMARY KEY,
    edge TEXT NOT NULL,
    at TEXT NOT NULL,
    armed INTEGER NOT NULL
);
CREATE TABLE alerts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id INTEGER NOT NULL,
    agent_id TEXT NOT NULL,
    agent_name TEXT NOT NULL,
    edge TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    tries INTEGER NOT NULL DEFAULT 0,
    done_at TEXT,
    outcome TEXT  -- JSON: channel -> "ok" or what went wrong
);
CREATE INDEX alerts_pending ON alerts (done_at, id);
"""

# Issue 23 (branch limits): usage limits as last seen, so they outlive their screen
# (store/limits.py).
USAGE_LIMITS = """
CREATE TABLE usage_limits (
    agent_id TEXT PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    provider TEXT NOT NULL,
    kind TEXT NOT NULL,
    resets_at REAL,  -- epoch seconds; NULL: the CLI gave no reset time
    words TEXT NOT NULL,  -- the CLI's own words
    seen_at REAL NOT NULL  -- epoch seconds, when roost first saw these words
);
"""

# Issue 23 parts 2-3 (branch limits2): resume at a limit's reset, opt-in (store/resumes.py):
# the on-limit policy of an agent or a tab, the last prompt roost sent each agent while its
# turn is open, and the durable schedule of resumes (it outlives the service, a tmux server's
# death and a reboot).
LIMIT_RESUMES = """
CREATE TABLE on_limit_policies (
    scope TEXT NOT NULL,  -- 'agent' or 'tab'
    target_id TEXT NOT NULL,  -- the agent's or the tab's id
    policy TEXT NOT NULL,  -- core/resuming.py ON_LIMIT
    PRIMARY KEY (scope, target_id)
);
CREATE TABLE open_prompts (
    agent_id TEXT PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    text TEXT NOT NULL,
    sent_at REAL NOT NULL
);
CREATE TABLE limit_resumes (
    agent_id TEXT PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    account TEXT NOT NULL,  -- provider and config folder: resumes of one are spaced
    due_at REAL NOT NULL,  -- epoch seconds
    state TEXT NOT NULL,  -- 'waiting' (to send) or 'sent' (to check at due_at)
    tries INTEGER NOT NULL DEFAULT 0,  -- resumes sent for an unknown reset (the backoff)
    prompt TEXT,  -- the prompt the limit cut, when roost sent it
    planned_at REAL NOT NULL  -- epoch seconds: a send begun after it cancels it
);
"""


# Issue 23 parts 4 and 5 (branch usage): where each agent's session file was last read, the
# token totals it gave per day and model, and budgets (store/usage.py).
USAGE = """
CREATE TABLE usage_cursors (
    agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    inode INTEGER NOT NULL,
    offset INTEGER NOT NULL,  -- bytes read: the end of the last complete line
    state TEXT NOT NULL,  -- JSON: the reader's memory (usage/rules.py)
    PRIMARY KEY (agent_id, path)
);
CREATE TABLE usage_totals (
    agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    day TEXT NOT NULL,  -- UTC, YYYY-MM-DD
    model TEXT NOT NULL,
    input INTEGER NOT NULL,
    output INTEGER NOT NULL,
    cache_write INTEGER NOT NULL,
    cache_read INTEGER NOT NULL,
    PRIMARY KEY (agent_id, path, day, model)
);
-- The same summed per agent and model, kept with them: what `ls --json` and the TUI read.
CREATE TABLE usage_models (
    agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    input INTEGER NOT NULL,
    output INTEGER NOT NULL,
    cache_write INTEGER NOT NULL,
    cache_read INTEGER NOT NULL,
    PRIMARY KEY (agent_id, model)
);
CREATE TABLE usage_budgets (
    agent_id TEXT PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    tokens INTEGER,
    dollars REAL,
    tree_tokens INTEGER,  -- for the orchestration tree under (and with) this agent
    tree_dollars REAL,
    parked TEXT  -- why the budget parked it, until it is woken
);
"""


def _v5_history_from_lineage(conn: sqlite3.Connection) -> None:
    """The ids an earlier roost recorded, in their order, as changes: the reason is the source
    its `session` event gave (clear, compact...) when there is one."""
    previous: dict[str, str] = {}
    rows = conn.execute(
        "SELECT agent_id, provider_session_id, seen_at FROM provider_sessions "
        "ORDER BY seen_at, rowid"
    ).fetchall()
    for agent_id, sid, seen_at in rows:
        source = conn.execute(
            "SELECT json_extract(detail, '$.source') FROM events WHERE agent_id = ? AND "
            "kind = 'session' AND json_extract(detail, '$.session_id') = ? ORDER BY id LIMIT 1",
            (agent_id, sid),
        ).fetchone()
        reason = source[0] if source and isinstance(source[0], str) else "earlier-roost"
        conn.execute(
            "INSERT INTO session_history (agent_id, provider_session_id, previous, at, "
            "reason) VALUES (?, ?, ?, ?, ?)",
            (agent_id, sid, previous.get(agent_id), seen_at, reason),
        )
        previous[agent_id] = sid


def tiles_stored_once(conn: sqlite3.Connection) -> None:
    """Issue 20 (branch model): a tile's placement lives only in its tab's layout; an agent's
    row keeps `detached` or `buried` (with its tab) and NULL for a tile (store/agents.py derives
    `tile` and its tab when it reads). Where an older store's two copies disagree, the layout
    wins: it is what the screen shows and what a restore rebuilds. A row that says `tile` while
    no layout holds it is parked in the tab it named (nothing is lost: `roost place` tiles it
    again); a leaf that two tabs hold stays in the first (tab order) only."""
    import json

    from roost.core import workspace as ws

    held: set[str] = set()
    tabs = conn.execute("SELECT id, layout, focus FROM tabs ORDER BY position, name").fetchall()
    for tab_id, text, focus in tabs:
        layout = json.loads(text) if text else None
        twice = [leaf for leaf in ws.leaves(layout) if leaf in held]
        for leaf in twice:
            layout = ws.remove(layout, leaf).tree
        held.update(ws.leaves(layout))
        if twice:
            kept = ws.leaves(layout)
            conn.execute(
                "UPDATE tabs SET layout = ?, focus = ? WHERE id = ?",
                (
                    json.dumps(layout) if layout else None,
                    focus if focus is None or focus in kept else (kept[-1] if kept else None),
                    tab_id,
                ),
            )
    conn.executemany(
        "UPDATE agents SET placement = NULL, tab_id = NULL, buried_sibling = NULL, "
        "buried_side = NULL, buried_direction = NULL, buried_ratio = NULL WHERE id = ?",
        [(agent_id,) for agent_id in sorted(held)],
    )
    conn.execute("UPDATE agents SET placement = 'detached' WHERE placement = 'tile'")


# Issue 22 (branch worktree): an agent's git worktree (its repository, branch and path) and the
# blocks of local ports leased to agents. A worktree row outlives its agent (`rm
# --keep-worktree`): it tells `roost worktree prune` which repositories to ask.
WORKTREES = """
CREATE TABLE worktrees (
    path TEXT PRIMARY KEY,
    agent_id TEXT,  -- NULL once the agent is gone and its worktree was kept
    agent_name TEXT NOT NULL,
    repo TEXT NOT NULL,  -- the main worktree's folder
    common_dir TEXT NOT NULL,
    branch TEXT NOT NULL,
    base TEXT,  -- the branch it was made from (its work counts as merged there)
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX worktrees_by_agent ON worktrees (agent_id);
CREATE TABLE setup_consents (  -- the person said yes to this exact setup script of this repo
    repo TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (repo, sha256)
);
CREATE TABLE port_leases (
    port INTEGER PRIMARY KEY,  -- the first of a block of ten
    agent_id TEXT NOT NULL UNIQUE  -- leased before its agent is stored: one with no agent is free
);
"""


# Remote hosts (issue 24, branch hosts): how to reach each; store/hosts.py reads and writes it.
HOSTS = """
CREATE TABLE hosts (
    name TEXT PRIMARY KEY,
    dest TEXT NOT NULL,            -- as ssh takes it: user@host, an alias of ~/.ssh/config
    roost TEXT NOT NULL,           -- the remote roost's absolute path ('roost': found by PATH)
    env TEXT NOT NULL DEFAULT '{}',  -- JSON {NAME: VALUE} set for the remote roost (env ...)
    added_at TEXT NOT NULL
);
"""


# Children on a host (issue 24 part 4, branch hostchild): a parent here, its child on a host;
# and where this roost's reading of each such host's event stream stands. store/hostchildren.py.
HOST_CHILDREN = """
CREATE TABLE host_children (
    parent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    host TEXT NOT NULL,
    name TEXT NOT NULL,            -- the child's name on its host
    remote_id TEXT NOT NULL,       -- its id there
    status TEXT,                   -- its last status heard of here (what a change is against)
    created_at TEXT NOT NULL,
    PRIMARY KEY (host, name)
);
CREATE INDEX host_children_parent ON host_children (parent_id);
CREATE TABLE host_cursors (
    host TEXT PRIMARY KEY,
    seq INTEGER NOT NULL           -- the host's last event read (its `roost watch --since`)
);
"""

# Texts roost types on its own and holds while the agent asks the person something (issue 34,
# store/held.py): a spawn's first prompt. Delivered once, in order.
HELD_INPUTS = """
CREATE TABLE held_inputs (
    id INTEGER PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    text TEXT NOT NULL,
    origin TEXT NOT NULL,          -- prompt (a spawn's first prompt)
    held_at TEXT NOT NULL,
    after_tools INTEGER NOT NULL DEFAULT 0,  -- 1: goes in once the CLI listed roost's tools
    claimed_until TEXT,            -- its spawn delivers it until then (the service waits)
    delivered_at TEXT,
    how TEXT                       -- what confirmed its delivery
);
CREATE INDEX held_inputs_pending ON held_inputs (agent_id, id) WHERE delivered_at IS NULL;
"""

# Issue 35: the arguments an import left off (no --allow-dangerous), kept aside until the person
# approves them (`roost approve`, store/exchange.py); while a row is here the agent never starts.
APPROVALS = """
CREATE TABLE approvals (
    agent_id TEXT PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    args TEXT NOT NULL,            -- JSON list of strings: the argv it would run with
    proposed_at TEXT NOT NULL,
    origin TEXT NOT NULL           -- where they came from: import
);
"""


# Issue 36 points 3 and 4: a stop's intent, recorded before its signal (store/intents.py), and
# the alerts' memory per agent and edge (store/alerts.py; the alert_seen it replaces had one row
# per agent, so an edge that came back after another one alerted again). A crash and an exit
# are one edge.
STOPS_AND_EDGES = """
CREATE TABLE stop_intents (
    agent_id TEXT PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    intent TEXT NOT NULL CHECK (intent IN ('stopped', 'hibernated')),
    why TEXT NOT NULL,          -- kill, hibernate, rm, budget, max-live
    launches INTEGER NOT NULL,  -- the launch it stops: a later start is none of its business
    at TEXT NOT NULL,
    until TEXT NOT NULL         -- its deadline: an exit seen after it is not this stop's
);
CREATE TABLE alert_edges (
    agent_id TEXT NOT NULL,
    edge TEXT NOT NULL,         -- alerts/rules.key: waiting, error, limited, exit, failed...
    at TEXT NOT NULL,           -- its last alert's event time (`stopping`: the stop's deadline)
    left_at TEXT,               -- since when the agent is out of that state (NULL: in it)
    PRIMARY KEY (agent_id, edge)
);
INSERT INTO alert_edges (agent_id, edge, at, left_at)
    SELECT agent_id, CASE WHEN edge IN ('crashed', 'exited') THEN 'exit' ELSE edge END, at,
           CASE WHEN armed THEN at END
    FROM alert_seen;
DROP TABLE alert_seen;
"""

# Issue 38 part 1 (branch review): comments on an agent's change, each with the revision it was
# made on (the checkout's HEAD and the file's SHA-256), its lines' text and a few lines either
# side (so it follows its lines when they move, and says "outdated" when they changed), and the
# revision it was sent to the agent on (store/review.py).
REVIEW_COMMENTS = """
CREATE TABLE review_comments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    path TEXT NOT NULL,            -- relative to the agent's checkout
    start_line INTEGER NOT NULL,   -- on the new side, as the file was then
    end_line INTEGER NOT NULL,
    lines TEXT NOT NULL,           -- JSON list: those lines' text
    before TEXT NOT NULL,          -- JSON lists: up to 3 lines either side
    after TEXT NOT NULL,
    body TEXT NOT NULL,
    head TEXT,                     -- the checkout's HEAD then (NULL: no commit yet)
    file_sha TEXT NOT NULL,        -- SHA-256 of the file's bytes then
    created_at TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'sending', 'sent')),
    sent_at TEXT,
    sent_head TEXT,                -- the revision it was sent on
    sent_sha TEXT,
    sent_start INTEGER,            -- where its lines were then, and their text
    sent_end INTEGER,
    sent_lines TEXT
);
CREATE INDEX review_comments_agent ON review_comments (agent_id, id);
"""

# Issue 38 points 3-5 (branch merge): the merges roost made (recorded before the branch moves),
# the base each agent's branch was made from as it moved since (a sibling's merge), and the
# pairs of worktree agents whose changes collide, with the one alert each pair gets
# (store/merge.py).
MERGES = """
CREATE TABLE merges (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id TEXT NOT NULL,        -- no foreign key: the record outlives its agent
    agent_name TEXT NOT NULL,
    repo TEXT NOT NULL,            -- the main worktree's folder
    branch TEXT NOT NULL,          -- the agent's branch
    target TEXT NOT NULL,          -- the branch merged into
    mode TEXT NOT NULL CHECK (mode IN ('merge', 'squash', 'rebase', 'files')),
    source TEXT NOT NULL,          -- the agent's commit taken
    before TEXT NOT NULL,          -- the target's commit before
    result TEXT NOT NULL,          -- the commit the target moves to
    state TEXT NOT NULL CHECK (state IN ('moving', 'done', 'failed')),
    at TEXT NOT NULL,
    done_at TEXT,
    error TEXT
);
CREATE TABLE base_moves (
    agent_id TEXT PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    repo TEXT NOT NULL,
    branch TEXT NOT NULL,          -- its base branch, which moved
    commit_id TEXT NOT NULL,       -- where that branch is now: its new base
    merge_id INTEGER NOT NULL REFERENCES merges(id),
    by_name TEXT NOT NULL,         -- the agent whose work was merged
    at TEXT NOT NULL
);
CREATE TABLE collisions (
    a_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,  -- a_id < b_id
    b_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    repo TEXT NOT NULL,
    detail TEXT NOT NULL,          -- JSON {"lines": {path: [[first, last]...]}, "conflicts": []}
    active INTEGER NOT NULL,       -- 0: they no longer collide (kept: alerted once a pair)
    found_at TEXT NOT NULL,
    seen_at TEXT NOT NULL,         -- when this was last judged
    alerted_at TEXT,               -- the pair's one alert (its collision event)
    PRIMARY KEY (a_id, b_id)
);
CREATE INDEX collisions_by_b ON collisions (b_id);
"""

# Issue 40: a phone's push (store/push.py): paired devices (their credential hashed), their
# Web Push subscriptions, one-time pairing codes and notification capabilities (hashed).
PUSH = """
CREATE TABLE push_devices (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    key_hash TEXT NOT NULL,     -- sha256 of the random part of the device's cookie
    paired_at TEXT NOT NULL,
    last_seen TEXT,
    revoked_at TEXT,
    viewing TEXT,               -- the agent id its page shows (quiet for that agent)
    viewing_at TEXT
);
CREATE TABLE push_subscriptions (
    device_id TEXT PRIMARY KEY REFERENCES push_devices(id) ON DELETE CASCADE,
    endpoint TEXT NOT NULL,
    p256dh TEXT NOT NULL,
    auth TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE TABLE push_pairings (
    code_hash TEXT PRIMARY KEY,
    expires_at TEXT NOT NULL,
    used_at TEXT
);
CREATE TABLE push_capabilities (
    hash TEXT PRIMARY KEY,      -- sha256 of the capability
    device_id TEXT NOT NULL,    -- '' : ntfy's buttons (no device)
    agent_id TEXT NOT NULL,
    agent TEXT NOT NULL,
    fingerprint TEXT NOT NULL,  -- the question it answers
    expires_at TEXT NOT NULL,
    used_at TEXT
);
"""

# Issue 40 point 5: how far this roost read each host's event stream for its agents' alerts
# (push/remote.py): a reconnect or a restart resumes after it, nothing pushed twice.
PUSH_HOSTS = """
CREATE TABLE push_host_cursors (
    host TEXT PRIMARY KEY,
    seq INTEGER NOT NULL
);
"""

Step = str | Callable[[sqlite3.Connection], None]
MIGRATIONS: list[Step | list[Step]] = [
    V1,
    [V2, _v2_place_existing_agents],
    V3,
    V4,
    [V5, _v5_history_from_lineage],
    V6,
    [V7, _v7_mcp_from_markers],
    tiles_stored_once,
    SERVICE_TABLES,
    ALERTS,
    WORKTREES,
    USAGE_LIMITS,  # issue 23 (branch limits): store/limits.py
    LIMIT_RESUMES,  # issue 23 parts 2-3 (branch limits2): store/resumes.py
    USAGE,  # issue 23 parts 4, 5 (branch usage): store/usage.py
    HOSTS,  # issue 24 (branch hosts): store/hosts.py
    HOST_CHILDREN,  # issue 24 part 4 (branch hostchild): store/hostchildren.py
    HELD_INPUTS,  # issue 34: store/held.py
    APPROVALS,  # issue 35: an import's arguments awaiting approval (store/exchange.py)
    SERVICE_PARTS,  # issue 36 point 6: what the service's components serve (store/service.py)
    STOPS_AND_EDGES,  # issue 36 points 3, 4: store/intents.py, store/alerts.py
    REVIEW_COMMENTS,  # issue 38 part 1 (branch review): store/review.py
    MERGES,  # issue 38 points 3-5 (branch merge): store/merge.py
    PUSH,  # issue 40 (branch phone): store/push.py
    PUSH_HOSTS,  # issue 40 point 5 (branch wt-phone): store/push.py
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


def damage(conn: sqlite3.Connection, only: Sequence[str] | None = None) -> str | None:
    """SQLite's first complaint about the structure of roost's tables and their indexes (a
    zeroed page, a broken b-tree), or None. About 2 ms for 1,000 agents (docs/DECISIONS.md):
    cheap enough for every command, and run before anything is written, because a damaged
    UNIQUE index no longer stops a second agent of the same name. `only`: these tables (a
    reader that writes nothing checks what it reads: `roost ls`'s fast path)."""
    tables = [
        r[0]
        for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if r[0] not in UNCHECKED and (only is None or r[0] in only)
    ]
    for table in tables:
        quoted = table.replace('"', '""')
        found = conn.execute(f'PRAGMA quick_check("{quoted}")').fetchone()[0]
        if found != "ok":  # "*** in database main ***\nPage 4: ..." -> "page 4: ..."
            lines = [line for line in str(found).splitlines() if not line.startswith("***")]
            return "; ".join(lines) or str(found).strip()
    return None
