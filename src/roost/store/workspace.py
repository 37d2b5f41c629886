"""The workspace in SQLite: read it whole, or edit it inside one BEGIN IMMEDIATE transaction.

Every function taking `c` runs inside the caller's `store.write()` transaction. A tile is stored
once, as a leaf of its tab's layout: its agent row holds NULL placement and tab (store/agents.py
derives both when it reads), so moving a tile is a change of layouts alone. A parked or buried
agent's row holds its placement and tab. The tree edits themselves are the pure functions of
core/workspace.py.
"""

from __future__ import annotations

import json
import sqlite3
import uuid

from roost.core import workspace as ws
from roost.core.errors import RoostError
from roost.core.names import check_name
from roost.store import agents as agent_rows

DEFAULT_TAB = "main"


def load(conn: sqlite3.Connection) -> ws.Workspace:
    tabs = tuple(
        ws.Tab(id=r[0], name=r[1], layout=json.loads(r[2]) if r[2] else None, focus=r[3])
        for r in conn.execute("SELECT id, name, layout, focus FROM tabs ORDER BY position, name")
    )
    members = tuple(
        ws.Member(
            a.id,
            a.placement,
            a.tab_id,
            a.linked_parent,
            a.orchestration_parent,
            a.orchestration_root,
        )
        for a in agent_rows.read(conn)
    )
    pins = tuple(r[0] for r in conn.execute("SELECT agent_id FROM pins ORDER BY position"))
    return ws.Workspace(tabs=tabs, members=members, pins=pins)


# ---- tabs --------------------------------------------------------------------------------
def find_tab(c: sqlite3.Connection, name: str) -> ws.Tab | None:
    row = c.execute("SELECT id, name, layout, focus FROM tabs WHERE name = ?", (name,)).fetchone()
    return ws.Tab(row[0], row[1], json.loads(row[2]) if row[2] else None, row[3]) if row else None


def get_tab(c: sqlite3.Connection, tab_id: str) -> ws.Tab | None:
    row = c.execute("SELECT name FROM tabs WHERE id = ?", (tab_id,)).fetchone()
    return find_tab(c, row[0]) if row else None


def require_tab(c: sqlite3.Connection, name: str) -> ws.Tab:
    tab = find_tab(c, name)
    if tab is None:
        raise RoostError(f"no tab named {name!r} (see `roost tab ls`)", code=4)
    return tab


def create_tab(c: sqlite3.Connection, name: str) -> ws.Tab:
    check_name(name, "tab name")
    if find_tab(c, name) is not None:
        raise RoostError(f"tab {name!r} already exists")
    position = c.execute("SELECT COALESCE(MAX(position) + 1, 0) FROM tabs").fetchone()[0]
    tab = ws.Tab(id=str(uuid.uuid4()), name=name)
    c.execute("INSERT INTO tabs (id, name, position) VALUES (?, ?, ?)", (tab.id, name, position))
    return tab


def ensure_tab(c: sqlite3.Connection, name: str) -> ws.Tab:
    return find_tab(c, name) or create_tab(c, name)


def rename_tab(c: sqlite3.Connection, old: str, new: str) -> None:
    check_name(new, "tab name")
    tab = require_tab(c, old)
    if find_tab(c, new) is not None:
        raise RoostError(f"tab {new!r} already exists")
    c.execute("UPDATE tabs SET name = ? WHERE id = ?", (new, tab.id))


def close_tab(c: sqlite3.Connection, name: str) -> list[str]:
    """Delete the tab; its tiles are parked (with no project tab). Returns their ids."""
    tab = require_tab(c, name)
    tiles = ws.leaves(tab.layout)
    c.executemany(
        "UPDATE agents SET placement = 'detached', tab_id = NULL WHERE id = ?",
        [(agent_id,) for agent_id in tiles],
    )
    c.execute("DELETE FROM tabs WHERE id = ?", (tab.id,))
    return tiles


def balance_tab(c: sqlite3.Connection, name: str) -> list[str]:
    """Lay the tab out as an even grid, its tiles in order. Returns them."""
    tab = require_tab(c, name)
    save_tab(c, tab.id, ws.balance(tab.layout), tab.focus)
    return ws.leaves(tab.layout)


def save_tab(c: sqlite3.Connection, tab_id: str, layout: ws.Node | None, focus: str | None) -> None:
    if focus is not None and focus not in ws.leaves(layout):
        focus = ws.leaves(layout)[-1] if layout else None
    c.execute(
        "UPDATE tabs SET layout = ?, focus = ? WHERE id = ?",
        (json.dumps(layout) if layout else None, focus, tab_id),
    )


# ---- placement ---------------------------------------------------------------------------
def add_tile(
    c: sqlite3.Connection, agent_id: str, tab: ws.Tab, direction: str | None = None
) -> None:
    """Make the agent a tile of `tab` where the layout stays usable (ws.add: beside the tab's
    focus when a direction is asked for and fits, else where it stays balanced); focus it."""
    _make_tile(
        c, agent_id, tab, ws.add(tab.layout, agent_id, beside=tab.focus, direction=direction)
    )


def tile(
    c: sqlite3.Connection,
    agent_id: str,
    tab: ws.Tab,
    direction: str = "v",
    beside: str | None = None,
    after: bool = True,
    ratio: float = 0.5,
) -> None:
    """Make the agent a tile of `tab` exactly here: split `beside` (default: the tab's focus)
    `direction`-wise, the new tile after it (or before), with `ratio`; focus it."""
    _make_tile(
        c,
        agent_id,
        tab,
        ws.insert(
            tab.layout,
            agent_id,
            beside=beside or tab.focus,
            direction=direction,
            after=after,
            ratio=ratio,
        ),
    )


def _make_tile(c: sqlite3.Connection, agent_id: str, tab: ws.Tab, layout: ws.Node) -> None:
    """The layout now holds it: that is its placement, so its row holds none."""
    save_tab(c, tab.id, layout, agent_id)
    _clear_placement(c, agent_id)


def _clear_placement(c: sqlite3.Connection, agent_id: str) -> None:
    c.execute(
        "UPDATE agents SET placement = NULL, tab_id = NULL, buried_sibling = NULL, "
        "buried_side = NULL, buried_direction = NULL, buried_ratio = NULL WHERE id = ?",
        (agent_id,),
    )


def untile(c: sqlite3.Connection, agent_id: str) -> tuple[ws.Tab, ws.Removed] | None:
    """Close the agent's tile, if it has one. The caller sets its new placement."""
    tab_id = agent_rows.tab_of_tile(c, agent_id)
    tab = get_tab(c, tab_id) if tab_id else None
    if tab is None or agent_id not in ws.leaves(tab.layout):
        return None
    removed = ws.remove(tab.layout, agent_id)
    save_tab(c, tab.id, removed.tree, None if tab.focus == agent_id else tab.focus)
    return tab, removed


def park(c: sqlite3.Connection, agent_id: str, project_tab: ws.Tab | None = None) -> None:
    """Tile (or buried) -> detached; the agent remembers its project tab (a tile: the tab it
    leaves), or takes `project_tab` as its new one (a spawn with --detached)."""
    closed = untile(c, agent_id)
    left = closed[0].id if closed else None
    c.execute(
        "UPDATE agents SET placement = 'detached', tab_id = COALESCE(?, ?, tab_id), "
        "buried_sibling = NULL, buried_side = NULL, buried_direction = NULL, "
        "buried_ratio = NULL WHERE id = ?",
        (project_tab.id if project_tab else None, left, agent_id),
    )


def bury(c: sqlite3.Connection, agent_id: str) -> None:
    """Close the tile, keep where it was (tab, sibling, side) for revival."""
    closed = untile(c, agent_id)
    if closed is None:
        c.execute("UPDATE agents SET placement = 'buried' WHERE id = ?", (agent_id,))
        return
    tab, removed = closed
    c.execute(
        "UPDATE agents SET placement = 'buried', tab_id = ?, buried_sibling = ?, "
        "buried_side = ?, buried_direction = ?, buried_ratio = ? WHERE id = ?",
        (tab.id, removed.sibling, removed.side, removed.direction, removed.ratio, agent_id),
    )


def unbury(c: sqlite3.Connection, agent_id: str) -> ws.Tab | None:
    """Back to its old place if its tab still exists (returns that tab), else parked."""
    row = c.execute(
        "SELECT tab_id, buried_sibling, buried_side, buried_direction, buried_ratio "
        "FROM agents WHERE id = ?",
        (agent_id,),
    ).fetchone()
    tab = get_tab(c, row[0]) if row and row[0] else None
    if tab is None:
        park(c, agent_id)
        return None
    _make_tile(c, agent_id, tab, ws.restore_tile(tab.layout, agent_id, *row[1:]))
    return tab


def forget(c: sqlite3.Connection, agent_id: str) -> None:
    """Before deleting a record: close its tile. Pins cascade and links become NULL (FKs)."""
    untile(c, agent_id)


# ---- links -------------------------------------------------------------------------------
def link(c: sqlite3.Connection, child_id: str, parent_id: str) -> bool:
    """Link the child under the parent unless that would make a cycle (returns False, writes
    nothing). The check reads the links inside the caller's transaction, so two concurrent
    links (a under b, b under a) cannot both pass it."""
    if parent_id == child_id or parent_id in ws.descendants(load(c), child_id):
        return False
    c.execute("UPDATE agents SET linked_parent = ? WHERE id = ?", (parent_id, child_id))
    return True


# ---- pins and settings -------------------------------------------------------------------
def pin(c: sqlite3.Connection, agent_id: str) -> bool:
    if c.execute("SELECT 1 FROM pins WHERE agent_id = ?", (agent_id,)).fetchone():
        return False
    position = c.execute("SELECT COALESCE(MAX(position) + 1, 0) FROM pins").fetchone()[0]
    c.execute("INSERT INTO pins (agent_id, position) VALUES (?, ?)", (agent_id, position))
    return True


def unpin(c: sqlite3.Connection, agent_id: str) -> bool:
    return c.execute("DELETE FROM pins WHERE agent_id = ?", (agent_id,)).rowcount > 0


def is_pinned(conn: sqlite3.Connection, agent_id: str) -> bool:
    return conn.execute("SELECT 1 FROM pins WHERE agent_id = ?", (agent_id,)).fetchone() is not None


def get_setting(conn: sqlite3.Connection, key: str, default: str | None = None) -> str | None:
    row = conn.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
    return row[0] if row else default


def set_setting(c: sqlite3.Connection, key: str, value: str) -> None:
    c.execute(
        "INSERT INTO settings (key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def set_dangerous_mode(c: sqlite3.Connection, dangerous: bool) -> None:
    """The workspace's mode (`roost reload`): every agent takes it, and so do later spawns."""
    set_setting(c, "dangerous", "1" if dangerous else "0")
    c.execute("UPDATE agents SET dangerous = ?", (int(dangerous),))
