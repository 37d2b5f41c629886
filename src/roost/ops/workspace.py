"""Workspace commands: tabs, park/place/bury/unbury, pins, links, trees, reload, gc.

Each edit of the workspace is one `store.write()` transaction over wsdb; processes are started or
stopped through lifecycle.py afterwards (never inside a transaction).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from roost.core import gc, present
from roost.core import workspace as ws
from roost.core.errors import RoostError
from roost.core.model import Agent
from roost.core.names import check_name
from roost.core.reconcile import agent_panes
from roost.ops import lifecycle
from roost.ops.context import App
from roost.store import workspace as wsdb


# ---- tabs --------------------------------------------------------------------------------
def tab_new(app: App, name: str) -> None:
    with app.store.write() as c:
        wsdb.create_tab(c, name)


def tab_rename(app: App, old: str, new: str) -> None:
    with app.store.write() as c:
        wsdb.rename_tab(c, old, new)


def tab_close(app: App, name: str) -> list[str]:
    """Close a tab: its tiles are parked (they keep running). Returns their names."""
    with app.store.write() as c:
        parked = wsdb.close_tab(c, name)
    return [_name(app, a) for a in parked]


def tab_balance(app: App, name: str) -> list[str]:
    """Lay the tab out as an even grid (its tiles keep their order). Returns their names."""
    with app.store.write() as c:
        tiles = wsdb.balance_tab(c, name)
    return [_name(app, a) for a in tiles]


@dataclass(frozen=True, slots=True)
class TabRow:
    name: str
    tiles: list[str]
    focus: str | None


def tab_list(app: App) -> list[TabRow]:
    workspace = wsdb.load(app.store.conn)
    return [
        TabRow(
            t.name,
            [_name(app, a) for a in ws.leaves(t.layout)],
            _name(app, t.focus) if t.focus else None,
        )
        for t in workspace.tabs
    ]


# ---- placement ---------------------------------------------------------------------------
def park(app: App, name: str, tree: bool = False) -> list[str]:
    """Tile -> parked (detached): it keeps running now and hibernates at the next restore."""
    targets = _with_tree(app, name, tree)
    with app.store.write() as c:
        for agent in targets:
            if agent.placement != ws.DETACHED:
                wsdb.park(c, agent.id)
    return [a.name for a in targets]


@dataclass(frozen=True, slots=True)
class Placed:
    result: lifecycle.WakeResult
    was: str  # where it was before, in the user's words ("a tile of main", "parked", ...)
    moved: bool  # it was a tile already: it moved


def place(app: App, name: str, tab: str, split: str | None = None) -> Placed:
    """Parked or buried -> a tile of TAB (created if missing), then woken: tiles are live.
    A tile already is moved. `split`: right or below the tab's focused tile, else where the
    layout stays balanced."""
    check_name(tab, "tab name")
    direction = lifecycle.split_direction(split)
    agent = app.store.require(name)
    was = where(app, agent)
    with app.store.write() as c:
        if agent.placement == ws.TILE:
            wsdb.untile(c, agent.id)
        wsdb.add_tile(c, agent.id, wsdb.ensure_tab(c, tab), direction=direction)
    return Placed(lifecycle.wake(app, name), was, agent.placement == ws.TILE)


def bury(app: App, name: str) -> list[int]:
    """Close the agent's tile and keep it for revival; its process stops (a closed tile)."""
    agent = app.store.require(name)
    with app.store.write() as c:
        wsdb.bury(c, agent.id)
    return lifecycle.hibernate(app, name)


def unbury(app: App, name: str) -> str | None:
    """Back to its old tab and side (woken, since tiles are live), or parked if the tab is gone.
    Returns the tab's name, or None when it was parked."""
    agent = app.store.require(name)
    if agent.placement != ws.BURIED:
        raise RoostError(f"{name} is not buried: it is {where(app, agent)}")
    with app.store.write() as c:
        tab = wsdb.unbury(c, agent.id)
    if tab is not None:
        lifecycle.wake(app, name)
    return tab.name if tab else None


LAYOUT_EDITS = ("next", "prev", "split-v", "split-h", "grow", "shrink", "close")


def edit_layout(app: App, tab: str, name: str, edit: str) -> None:
    """The tab view's tile edits, stored: swap with the next/previous tile, turn the tile's
    split, grow/shrink it (the ratio, clamped), or close it (it is buried, kept for revival)."""
    if edit not in LAYOUT_EDITS:
        raise RoostError(f"unknown layout edit {edit!r}", code=2)
    agent = app.store.require(name)
    if edit == "close":
        bury(app, name)
        return
    with app.store.write() as c:
        t = wsdb.require_tab(c, tab)
        order = ws.leaves(t.layout)
        if t.layout is None or agent.id not in order:
            raise RoostError(f"{name} is not a tile of {tab}", code=2)
        layout = t.layout
        if edit in ("next", "prev"):
            i = order.index(agent.id)
            j = i + 1 if edit == "next" else i - 1
            if 0 <= j < len(order):
                layout = ws.swap(layout, agent.id, order[j])
        elif edit.startswith("split-"):
            layout = ws.set_direction(layout, agent.id, edit[-1])
        else:
            ratio = ws.ratio_of(layout, agent.id)
            if ratio is not None:
                is_a = _is_side_a(layout, agent.id)
                step = 0.1 if (edit == "grow") == is_a else -0.1
                layout = ws.set_ratio(layout, agent.id, ratio + step)
        wsdb.save_tab(c, t.id, layout, agent.id)


def _is_side_a(node: ws.Node, agent_id: str) -> bool:
    if "leaf" in node:
        return False
    if node["a"] == {"leaf": agent_id}:
        return True
    if node["b"] == {"leaf": agent_id}:
        return False
    return _is_side_a(node["a"], agent_id) or _is_side_a(node["b"], agent_id)


def pin(app: App, name: str) -> bool:
    """Pinning never makes an agent live."""
    agent = app.store.require(name)
    with app.store.write() as c:
        return wsdb.pin(c, agent.id)


def unpin(app: App, name: str) -> bool:
    agent = app.store.require(name)
    with app.store.write() as c:
        return wsdb.unpin(c, agent.id)


def link(app: App, child: str, parent: str | None) -> None:
    """Set (or with None, clear) the child's linked parent; cycles are refused."""
    kid = app.store.require(child)
    if parent is None:
        app.store.update(kid.id, linked_parent=None)
        return
    dad = app.store.require(parent)
    with app.store.write() as c:
        if not wsdb.link(c, kid.id, dad.id):
            raise RoostError(f"linking {child} under {parent} would make a cycle", code=2)


def kill_tree(app: App, name: str) -> list[str]:
    """Kill the agent and all its descendants (children first, so none respawns a parent)."""
    targets = _with_tree(app, name, True)
    for agent in reversed(targets):
        lifecycle.kill(app, agent.name)
    return [a.name for a in targets]


def _with_tree(app: App, name: str, tree: bool) -> list[Agent]:
    root = app.store.require(name)
    if not tree:
        return [root]
    ids = ws.descendants(wsdb.load(app.store.conn), root.id)
    return [root, *(a for a in (app.store.get_by_id(i) for i in ids) if a is not None)]


def where(app: App, agent: Agent) -> str:
    """The agent's place in the user's words: 'a tile of main', 'parked', 'buried'."""
    tab = wsdb.get_tab(app.store.conn, agent.tab_id) if agent.tab_id else None
    return present.placement_words(agent.placement, tab.name if tab else None)


def _name(app: App, agent_id: str) -> str:
    agent = app.store.get_by_id(agent_id)
    return agent.name if agent else agent_id


# ---- reload and gc -----------------------------------------------------------------------
def reload(app: App, dangerous: bool | None) -> list[str]:
    """Switch the workspace's mode and restart the live agents that run; parked and buried
    agents take the mode when they wake. Never starts a hibernated or stopped agent. When a
    restarted agent's CLI refuses the new mode (Claude Code refuses to skip permissions under
    root) and dies at once, the mode switch is undone: every agent gets its flag back, the
    restarted ones run again as before, and the CLI's words are the error."""
    previous_mode = wsdb.get_setting(app.store.conn, "dangerous")
    previous_flags = {a.id: a.dangerous for a in app.store.agents()}
    with app.store.write() as c:
        if dangerous is not None:
            wsdb.set_dangerous_mode(c, dangerous)
    names = _restart_live(app)
    failed = names[1]
    if not failed or dangerous is None:
        return names[0]
    with app.store.write() as c:
        wsdb.set_setting(c, "dangerous", previous_mode or "0")
    for agent_id, flag in previous_flags.items():
        app.store.update(agent_id, dangerous=flag)
    for name in names[0]:  # the same agents, in their previous mode
        if name not in failed:
            lifecycle.kill(app, name)
    from roost.ops.restore import start_all

    start_all(app, names[0])
    raise RoostError(present.reload_refused(failed))


def _restart_live(app: App) -> tuple[list[str], dict[str, str]]:
    """Restart the tiles that run: their names, and those whose start failed (with why)."""
    workspace = wsdb.load(app.store.conn)
    live_ids = ws.live(workspace)
    running = {a for a, p in agent_panes(app.tmux.list_panes()).items() if not p.dead}
    targets = [a for a in ws.tiled(workspace) if a in live_ids and a in running]
    names = [_name(app, a) for a in targets]
    for name in names:
        lifecycle.kill(app, name)
    from roost.ops.restore import start_all

    return names, start_all(app, names).failed


def parse_duration(text: str) -> timedelta:
    """'90s', '30m', '12h', '7d', '2w' -> timedelta."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
    try:
        value, unit = float(text[:-1]), text[-1]
        if unit not in units or value < 0:
            raise ValueError
    except (ValueError, IndexError):
        raise RoostError(f"not a duration: {text!r} (use e.g. 30m, 12h, 7d, 2w)", code=2) from None
    return timedelta(seconds=value * units[unit])


def gc_candidates(app: App, older_than: timedelta | None) -> list[tuple[Agent, str]]:
    """What `roost gc` would remove (core.gc): stale records and, with a duration, parked or
    buried agents idle that long; never a pinned, live or running one."""
    running, screens = _screens(app.tmux.list_pane_rows())
    cutoff = app.clock.now() - older_than if older_than is not None else None
    return gc.candidates(app.store.agents(), wsdb.load(app.store.conn), running, screens, cutoff)


def _screens(rows: list[dict[str, str]]) -> tuple[set[str], dict[str, datetime]]:
    """From one pane listing: the agents that run, and when each agent's window last changed."""
    running: set[str] = set()
    changed: dict[str, datetime] = {}
    for row in rows:
        agent_id = row["roost_id"]
        if not agent_id:
            continue
        if row["pane_dead"] != "1":
            running.add(agent_id)
        if row["window_activity"].isdigit():
            at = datetime.fromtimestamp(int(row["window_activity"]), UTC)
            changed[agent_id] = max(at, changed.get(agent_id, at))
    return running, changed


def gc_remove(
    app: App, found: list[tuple[Agent, str]]
) -> tuple[list[tuple[Agent, str]], list[Agent]]:
    """Remove the candidates, except any that started running since they were listed (checked
    under each agent's lock). Returns (removed with why, kept because they run now); one that
    another roost removed meanwhile is in neither."""
    removed, kept = [], []
    for agent, why in found:
        if lifecycle.rm_if_idle(app, agent):
            removed.append((agent, why))
        elif app.store.get_by_id(agent.id) is not None:
            kept.append(agent)
    return removed, kept
