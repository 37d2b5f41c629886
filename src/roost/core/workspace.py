"""The workspace, as pure functions over plain data: tile trees, placement, ownership, restore.

A tab's tile tree is a dict tree, stored as JSON:
    {"leaf": AGENT_ID}
    {"split": "v" | "h", "ratio": 0.1..0.9, "a": NODE, "b": NODE}
"v" (vertical divider) puts a left of b; "h" puts a above b. Leaves hold roost ids, never names
or provider session ids, so nothing is remapped when agents are renamed, restarted or restored.
(People say `right` and `below`; the stored letters stay, so old layouts read as they did.)

Layouts scale: a new tile splits the largest tile along its longer side (`add`), a split asked
for is kept only while every tile keeps MIN_TILE in a NOMINAL terminal, and `balance` lays a
tab out as an even grid, like tmux's `tiled` layout.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

Node = dict[str, Any]
TILE, DETACHED, BURIED = "tile", "detached", "buried"
PLACEMENTS = (TILE, DETACHED, BURIED)
DIRECTIONS = ("v", "h")
MIN_RATIO, MAX_RATIO = 0.1, 0.9
# How people name a split: the new tile to the right of the focused one, or below it. "v" and
# "h" are the stored letters, still read as before (v: side by side, h: one over the other).
SPLIT_WORDS = {"right": "v", "below": "h", "v": "v", "h": "h"}
AUTO = "auto"  # where the layout stays balanced
NOMINAL = (200.0, 49.0)  # the terminal a layout is sized for: `roost open`'s 200x50 less status
MIN_TILE = (30.0, 8.0)  # columns and rows a tile keeps, so an agent CLI can still draw
WIDE = 2.5  # columns per row from which a tile splits side by side (a cell is ~2x as tall)


class LayoutError(ValueError):
    pass


# ---- tile trees --------------------------------------------------------------------------
def clamp(ratio: float) -> float:
    return min(MAX_RATIO, max(MIN_RATIO, float(ratio)))


def leaf(agent_id: str) -> Node:
    return {"leaf": agent_id}


def split(direction: str, a: Node, b: Node, ratio: float = 0.5) -> Node:
    if direction not in DIRECTIONS:
        raise LayoutError(f"split direction must be 'v' or 'h', not {direction!r}")
    return {"split": direction, "ratio": clamp(ratio), "a": a, "b": b}


def leaves(node: Node | None) -> list[str]:
    """Agent ids in tile order: a before b, depth first."""
    if node is None:
        return []
    if "leaf" in node:
        return [node["leaf"]]
    return leaves(node["a"]) + leaves(node["b"])


def insert(
    node: Node | None,
    new_id: str,
    beside: str | None = None,
    direction: str = "v",
    after: bool = True,
    ratio: float = 0.5,
) -> Node:
    """Split the tile of `beside` (or the last tile) to add `new_id` after or before it."""
    if new_id in leaves(node):
        raise LayoutError(f"{new_id} is already a tile here")
    if node is None:
        return leaf(new_id)
    target = beside if beside in leaves(node) else leaves(node)[-1]

    def go(n: Node) -> Node:
        if "leaf" in n:
            if n["leaf"] != target:
                return n
            pair = (n, leaf(new_id)) if after else (leaf(new_id), n)
            return split(direction, *pair, ratio=ratio)
        return {**n, "a": go(n["a"]), "b": go(n["b"])}

    return go(node)


def direction_of(split_word: str | None) -> str | None:
    """'right' -> 'v', 'below' -> 'h' (the old letters as they were), None or 'auto' -> None."""
    if split_word is None or split_word == AUTO:
        return None
    if split_word not in SPLIT_WORDS:
        raise LayoutError(f"--split must be right, below or auto, not {split_word!r}")
    return SPLIT_WORDS[split_word]


def sizes(
    node: Node | None, width: float = NOMINAL[0], height: float = NOMINAL[1]
) -> dict[str, tuple[float, float]]:
    """Each tile's columns and rows when the tree fills width x height (a divider takes one).

    >>> sizes(split("v", leaf("a"), leaf("b")), 201, 50)
    {'a': (100.0, 50), 'b': (100.0, 50)}
    """
    if node is None:
        return {}
    if "leaf" in node:
        return {node["leaf"]: (width, height)}
    if node["split"] == "v":
        first = (width - 1) * node["ratio"]
        return {**sizes(node["a"], first, height), **sizes(node["b"], width - 1 - first, height)}
    first = (height - 1) * node["ratio"]
    return {**sizes(node["a"], width, first), **sizes(node["b"], width, height - 1 - first)}


def fits(node: Node | None, width: float = NOMINAL[0], height: float = NOMINAL[1]) -> bool:
    """Whether every tile keeps MIN_TILE."""
    return all(
        w >= MIN_TILE[0] and h >= MIN_TILE[1] for w, h in sizes(node, width, height).values()
    )


def _chain(direction: str, nodes: list[Node]) -> Node:
    """Nodes one after another in `direction`, each the same share (halving keeps ratios
    within 1/3..1/2, never clamped)."""
    if len(nodes) == 1:
        return nodes[0]
    half = len(nodes) // 2
    return split(
        direction,
        _chain(direction, nodes[:half]),
        _chain(direction, nodes[half:]),
        half / len(nodes),
    )


def grid(agent_ids: list[str]) -> Node | None:
    """The tiles in order as an even grid, row by row (tmux's `tiled`): ceil(sqrt(n)) columns.

    >>> leaves(grid(["a", "b", "c"])), sizes(grid(["a", "b", "c"]), 201, 51)["c"]
    (['a', 'b', 'c'], (201, 25.0))
    """
    if not agent_ids:
        return None
    columns = math.ceil(math.sqrt(len(agent_ids)))
    rows = [
        _chain("v", [leaf(a) for a in agent_ids[i : i + columns]])
        for i in range(0, len(agent_ids), columns)
    ]
    return _chain("h", rows)


def balance(node: Node | None) -> Node | None:
    """The same tiles, in the same order, as an even grid (`roost tab balance`)."""
    return grid(leaves(node))


def add(
    node: Node | None, new_id: str, beside: str | None = None, direction: str | None = None
) -> Node:
    """Add a tile so the layout stays usable: with a direction, split `beside` (or the last
    tile) that way, as asked; without one, or when that would leave a tile under MIN_TILE,
    split the largest tile along its longer side, the new tile after it. When no single split
    keeps MIN_TILE, the tab becomes an even grid."""
    if new_id in leaves(node):
        raise LayoutError(f"{new_id} is already a tile here")
    if node is None:
        return leaf(new_id)
    if direction is not None:
        asked = insert(node, new_id, beside=beside, direction=direction)
        if fits(asked):
            return asked
    candidates = []
    for index, (agent_id, (w, h)) in enumerate(sizes(node).items()):
        longer, other = ("v", "h") if w >= WIDE * h else ("h", "v")
        candidates += [
            (-round(w * h, 1), -index, rank, agent_id, d) for rank, d in enumerate((longer, other))
        ]
    # largest first; among equals the later tile (reading order); its longer side first
    for *_order, agent_id, d in sorted(candidates):
        tried = insert(node, new_id, beside=agent_id, direction=d)
        if fits(tried):
            return tried
    return grid([*leaves(node), new_id]) or leaf(new_id)


@dataclass(frozen=True, slots=True)
class Removed:
    """What closing a tile leaves behind, and where it was (for unbury)."""

    tree: Node | None
    sibling: str | None  # the tile it touched in the sibling subtree that took its space
    side: str | None  # "a" or "b": which side the closed tile was on
    direction: str | None
    ratio: float | None


def remove(node: Node | None, agent_id: str) -> Removed:
    """Close a tile: its split collapses into the sibling."""
    if agent_id not in leaves(node):
        raise LayoutError(f"{agent_id} is not a tile here")
    assert node is not None
    if "leaf" in node:
        return Removed(None, None, None, None, None)
    found: dict[str, Any] = {}

    def go(n: Node) -> Node:
        if "leaf" in n:
            return n
        for side, other in (("a", "b"), ("b", "a")):
            if n[side] == {"leaf": agent_id}:
                # the neighbour it touched: the sibling subtree's first leaf if it was before
                # it (side a), its last leaf if it was after it (side b)
                neighbour = leaves(n[other])[0] if side == "a" else leaves(n[other])[-1]
                found.update(sibling=neighbour, side=side, direction=n["split"], ratio=n["ratio"])
                kept: Node = n[other]
                return kept
        return {**n, "a": go(n["a"]), "b": go(n["b"])}

    tree = go(node)
    return Removed(tree, found["sibling"], found["side"], found["direction"], found["ratio"])


def restore_tile(
    node: Node | None,
    agent_id: str,
    sibling: str | None,
    side: str | None,
    direction: str | None,
    ratio: float | None,
) -> Node:
    """Put a buried tile back next to its old sibling, on its old side; after the last tile
    when that sibling is gone. (It gets the sibling tile's space, not a whole subtree's.)"""
    after = side != "a" or sibling not in leaves(node)
    return insert(
        node,
        agent_id,
        beside=sibling,
        direction=direction or "v",
        after=after,
        ratio=ratio if ratio is not None else 0.5,
    )


def set_ratio(node: Node, agent_id: str, ratio: float) -> Node:
    """Resize the split that directly holds `agent_id`'s tile (clamped)."""

    def go(n: Node) -> Node:
        if "leaf" in n:
            return n
        if {"leaf": agent_id} in (n["a"], n["b"]):
            return {**n, "ratio": clamp(ratio)}
        return {**n, "a": go(n["a"]), "b": go(n["b"])}

    return go(node)


def set_direction(node: Node, agent_id: str, direction: str) -> Node:
    """Turn the split that directly holds `agent_id`'s tile to `direction` ('v' or 'h')."""
    if direction not in DIRECTIONS:
        raise LayoutError(f"split direction must be 'v' or 'h', not {direction!r}")

    def go(n: Node) -> Node:
        if "leaf" in n:
            return n
        if {"leaf": agent_id} in (n["a"], n["b"]):
            return {**n, "split": direction}
        return {**n, "a": go(n["a"]), "b": go(n["b"])}

    return go(node)


def ratio_of(node: Node | None, agent_id: str) -> float | None:
    """The ratio of the split that directly holds `agent_id`'s tile."""
    if node is None or "leaf" in node:
        return None
    if {"leaf": agent_id} in (node["a"], node["b"]):
        return float(node["ratio"])
    return ratio_of(node["a"], agent_id) or ratio_of(node["b"], agent_id)


def swap(node: Node, first: str, second: str) -> Node:
    """Exchange two tiles of one tree (moving tiles in the tab view)."""

    def go(n: Node) -> Node:
        if "leaf" in n:
            here: str = n["leaf"]
            return leaf({first: second, second: first}.get(here, here))
        return {**n, "a": go(n["a"]), "b": go(n["b"])}

    return go(node)


def validate_tree(node: Any, where: str = "layout") -> None:
    """Reject anything that is not a well-formed tile tree (used when importing)."""
    seen: set[str] = set()

    def go(n: Any, path: str) -> None:
        if not isinstance(n, dict):
            raise LayoutError(f"{path}: a tile must be an object")
        if set(n) == {"leaf"}:
            if not isinstance(n["leaf"], str) or not n["leaf"]:
                raise LayoutError(f"{path}: a leaf needs an agent id")
            if n["leaf"] in seen:
                raise LayoutError(f"{path}: agent {n['leaf']} is tiled twice")
            seen.add(n["leaf"])
            return
        if set(n) != {"split", "ratio", "a", "b"} or n["split"] not in DIRECTIONS:
            raise LayoutError(f"{path}: a split needs split ('v'|'h'), ratio, a and b")
        if not isinstance(n["ratio"], (int, float)) or not MIN_RATIO <= n["ratio"] <= MAX_RATIO:
            raise LayoutError(f"{path}: ratio must be a number in [0.1, 0.9]")
        go(n["a"], path + ".a")
        go(n["b"], path + ".b")

    if node is not None:
        go(node, where)


# ---- the whole workspace -----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Tab:
    id: str
    name: str
    layout: Node | None = None
    focus: str | None = None


@dataclass(frozen=True, slots=True)
class Member:
    """An agent record as the workspace sees it."""

    id: str
    placement: str | None  # None: owned by nothing
    tab_id: str | None = None
    linked_parent: str | None = None
    orchestration_parent: str | None = None
    orchestration_root: str | None = None


@dataclass(frozen=True, slots=True)
class Workspace:
    tabs: tuple[Tab, ...] = ()
    members: tuple[Member, ...] = ()
    pins: tuple[str, ...] = ()

    def member(self, agent_id: str) -> Member | None:
        return next((m for m in self.members if m.id == agent_id), None)


def tiled(ws: Workspace) -> list[str]:
    """Every tile leaf, tab by tab in tab order, each tab in tile order."""
    return [agent_id for tab in ws.tabs for agent_id in leaves(tab.layout)]


def live(ws: Workspace) -> set[str]:
    """Agents that get processes on restore: the tile leaves, and only those."""
    known = {m.id for m in ws.members}
    return {a for a in tiled(ws) if a in known}


def owned(ws: Workspace) -> set[str]:
    """Records the workspace keeps: tile leaves, parked (detached) and buried agents."""
    return live(ws) | {m.id for m in ws.members if m.placement in (DETACHED, BURIED)}


def stale(ws: Workspace) -> set[str]:
    """Records no tab, park or burial owns: `roost gc` removes them."""
    return {m.id for m in ws.members} - owned(ws)


def children(ws: Workspace, agent_id: str) -> list[str]:
    return [
        m.id
        for m in ws.members
        if agent_id in (m.linked_parent, m.orchestration_parent) and m.id != agent_id
    ]


def descendants(ws: Workspace, agent_id: str) -> list[str]:
    """The agent's children, theirs, and so on (links of both kinds), parents before their
    children (so `kill --tree` can stop children first), cycle-safe."""
    reachable: list[str] = []
    todo = [agent_id]
    while todo:
        for child in children(ws, todo.pop(0)):
            if child != agent_id and child not in reachable:
                reachable.append(child)
                todo.append(child)
    parents = {
        a: {p for p in (m.linked_parent, m.orchestration_parent) if p in reachable}
        for a in reachable
        for m in ws.members
        if m.id == a
    }
    ordered: list[str] = []
    pending = list(reachable)
    while pending:  # Kahn's algorithm; inside a cycle, the earliest pending one goes first
        ready = next((a for a in pending if parents[a] <= set(ordered)), pending[0])
        ordered.append(ready)
        pending.remove(ready)
    return ordered


def problems(ws: Workspace) -> list[str]:
    """Faults of the tabs' layouts: a tile in two places, a focus that is no tile. (An agent's
    placement cannot disagree with them: a tile's is read from its layout, store/agents.py.)"""
    found = []
    where: dict[str, list[str]] = {}
    for tab in ws.tabs:
        for agent_id in leaves(tab.layout):
            where.setdefault(agent_id, []).append(tab.name)
        if tab.focus is not None and tab.focus not in leaves(tab.layout):
            found.append(f"tab {tab.name}: focus is not one of its tiles")
    for agent_id, tabs in where.items():
        if len(tabs) > 1:
            found.append(f"{agent_id} is a tile in {len(tabs)} places: {', '.join(tabs)}")
    return found


# ---- restore -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RestorePlan:
    start: tuple[str, ...]  # live and not running, in tab and tile order
    running: tuple[str, ...]  # live and already running: nothing to do
    hibernate: tuple[str, ...]  # owned, not live: no process, no home
    stray: tuple[str, ...] = field(default=())  # running but not live (parked now): left alone
    kept_stopped: tuple[str, ...] = field(default=())  # live, but stopped by the user: left so


def plan_restore(ws: Workspace, running: Iterable[str], stopped: Iterable[str] = ()) -> RestorePlan:
    """`stopped`: agents the user stopped; they stay stopped until the user wakes them."""
    is_running = set(running)
    kept = set(stopped)
    live_set = live(ws)
    order = [a for a in tiled(ws) if a in live_set]
    return RestorePlan(
        start=tuple(a for a in order if a not in is_running and a not in kept),
        kept_stopped=tuple(a for a in order if a not in is_running and a in kept),
        running=tuple(a for a in order if a in is_running),
        hibernate=tuple(sorted(owned(ws) - live_set - is_running)),
        stray=tuple(sorted((owned(ws) - live_set) & is_running)),
    )
