"""The one SELECT every reader of agents starts from (store/db.py's records, `roost ls` and its
fast path, the workspace), and how a row becomes a core.model.Agent. No json (an agent's argv
stays JSON text until read): `roost ls` reads it on its fast path.

A tile's placement is stored once, as a leaf of its tab's layout (tabs.layout); an agent's row
keeps only what no layout holds: parked (`detached`) or buried, with its project or old tab.
The SELECT derives a tile's placement and tab from the layouts, so no reader sees two copies
that could disagree. A row that still says `tile` while no layout holds it (written by code that
predates this rule) reads as parked: the layout is what a restore builds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.core import model
from roost.core.model import FIELDS, JOINED, Agent

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

# Each agent id that is a leaf of a tab's layout, with that tab (the first in tab order if a
# damaged store holds it twice).
TILES = """tiles AS MATERIALIZED (
    SELECT j.value AS agent_id, t.id AS tab_id, MIN(t.position) AS position
    FROM tabs t, json_tree(t.layout) j
    WHERE t.layout IS NOT NULL AND j.key = 'leaf'
    GROUP BY j.value
)"""

# The agents table's columns in Agent's order, the placement and tab derived (see above), then
# its JOINED values: its tab's name, whether it is pinned, its launch's token, its lineage, the
# names of the agents it is linked to, its git worktree, its usage, the texts held for it, the
# arguments an import kept aside for approval, the agents it collides with.
_SELECT = """
WITH {tiles}, {marks}
SELECT a.id, a.name, a.provider, a.cwd, a.home, a.args, a.dangerous, a.provider_session_id,
       a.created_at, a.intent, a.started_at, a.launches, a.last_exit,
       CASE WHEN tl.agent_id IS NOT NULL THEN 'tile'
            WHEN a.placement = 'tile' THEN 'detached' ELSE a.placement END,
       COALESCE(tl.tab_id, a.tab_id),
       a.buried_sibling, a.buried_side, a.buried_direction, a.buried_ratio, a.linked_parent,
       a.orchestration_parent, a.orchestration_root, a.last_active_at, a.last_error, a.status,
       a.status_source, a.status_since, a.restart_policy, a.conversation_seen,
       a.transcript_path, a.hook_offset, a.mcp,
       t.name, p.agent_id IS NOT NULL, lt.token, {history}, lp.name, op.name, oroot.name,
       {worktree}, {usage},
       (SELECT COUNT(*) FROM held_inputs h WHERE h.agent_id = a.id AND h.delivered_at IS NULL),
       (SELECT ap.args FROM approvals ap WHERE ap.agent_id = a.id),
       COALESCE(mk.names, '[]')
FROM agents a
LEFT JOIN tiles tl ON tl.agent_id = a.id
LEFT JOIN tabs t ON t.id = COALESCE(tl.tab_id, a.tab_id)
LEFT JOIN pins p ON p.agent_id = a.id
LEFT JOIN launches lt ON lt.agent_id = a.id
LEFT JOIN agents lp ON lp.id = a.linked_parent
LEFT JOIN agents op ON op.id = a.orchestration_parent
LEFT JOIN agents oroot ON oroot.id = a.orchestration_root
LEFT JOIN marks mk ON mk.agent_id = a.id
{where}
ORDER BY {order}
"""

_HISTORY = """(SELECT json_group_array(json_object('session_id', h.provider_session_id,
                                                 'previous', h.previous, 'at', h.at,
                                                 'reason', h.reason))
             FROM (SELECT * FROM session_history WHERE agent_id = a.id ORDER BY id) h)"""
# An agent's git worktree (issue 22) as JSON, for `ls --json` and the TUI's details.
_WORKTREE = """(SELECT json_object('repo', w.repo, 'branch', w.branch, 'path', w.path)
              FROM worktrees w WHERE w.agent_id = a.id)"""

# Its token usage per model (issue 23 part 4, store/usage.py), for `ls --json`.
_USAGE = """(SELECT json_group_array(json_array(u.model, u.input, u.output, u.cache_write,
                                            u.cache_read))
           FROM usage_models u WHERE u.agent_id = a.id)"""

# The names of the agents each agent's changes collide with (issue 38, store/merge.py), as
# JSON: made once for the listing (its cost grows with the marked pairs, not with the agents).
MARKS = """marks AS MATERIALIZED (
    SELECT x.me AS agent_id, json_group_array(o.name) AS names
    FROM (SELECT a_id AS me, b_id AS other FROM collisions WHERE active = 1
          UNION ALL SELECT b_id, a_id FROM collisions WHERE active = 1) x
    JOIN agents o ON o.id = x.other
    GROUP BY x.me
)"""


# Every table the listing's SELECT reads (with its details or not): what `roost ls`'s fast path
# checks for damage before it trusts its rows (tests/test_store_damage.py holds it to the SQL).
LISTED_TABLES = (
    "agents",
    "tabs",
    "pins",
    "launches",
    "held_inputs",
    "approvals",
    "collisions",
    "session_history",
    "worktrees",
    "usage_models",
)


def select(
    where: str = "",
    order: str = "a.created_at, a.name",
    history: bool = False,
    worktree: bool = True,
) -> str:
    """The SELECT of agents (`where`: a clause on `a`, with `?` parameters). `history`, `worktree`:
    with each one's session history and token usage, its worktree (without: '[]', NULL, read
    by no subquery)."""
    return _SELECT.format(
        tiles=TILES,
        history=_HISTORY if history else "'[]'",
        worktree=_WORKTREE if worktree else "NULL",
        usage=_USAGE if history else "'[]'",
        marks=MARKS,
        where=f"WHERE {where}" if where else "",
        order=order,
    )


# Pinned ones first in pin order, then the rest in creation order: how `roost ls` lists them.
LISTING_ORDER = "p.position IS NULL, p.position, a.created_at, a.name"


# The positions of the row's 0/1 flags, which the record holds as bools.
_FLAGS = tuple(
    i
    for i, f in enumerate(FIELDS + JOINED)
    if f in ("dangerous", "conversation_seen", "mcp", "pinned")
)


def agent(row: Sequence[object]) -> Agent:
    """An Agent from a row of `select`: its 0/1 flags as bools, its argv left JSON text until
    read (Agent.args)."""
    values = list(row)
    for i in _FLAGS:
        values[i] = values[i] == 1
    return model.from_row(values)


def read(conn: sqlite3.Connection, where: str = "", params: Sequence[object] = ()) -> list[Agent]:
    return [agent(row) for row in conn.execute(select(where), tuple(params))]


def tab_of_tile(conn: sqlite3.Connection, agent_id: str) -> str | None:
    """The id of the tab whose layout holds the agent, if any."""
    row = conn.execute(
        f"WITH {TILES} SELECT tab_id FROM tiles WHERE agent_id = ?", (agent_id,)
    ).fetchone()
    return None if row is None else str(row[0])


def orchestrates(conn: sqlite3.Connection, agent_id: str) -> bool:
    """The agent is some agent's orchestration parent."""
    found = conn.execute(
        "SELECT 1 FROM agents WHERE orchestration_parent = ? LIMIT 1", (agent_id,)
    ).fetchone()
    return found is not None
