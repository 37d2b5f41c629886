"""The workspace in SQLite: wsdb edits inside real store.write() transactions, no tmux.

Every test opens a real Store (WAL, foreign keys on, migrated) and checks, besides what it is
about, the invariant: each agent has exactly one placement, consistent with the tabs, and no
link, pin, focus or tile points at a record that does not exist.
"""

from __future__ import annotations

import itertools
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_workspace import workspaces

from roost.core import workspace as ws
from roost.core.errors import RoostError
from roost.core.model import Agent
from roost.core.workspace import BURIED, DETACHED, TILE, leaf, leaves, split
from roost.ops import workspace as wsops
from roost.store import workspace as wsdb
from roost.store.db import Store

_clock = itertools.count()


def agent(agent_id: str, **fields: Any) -> Agent:
    """A record whose id is also its name (readable layouts); created in call order."""
    return Agent(
        id=agent_id,
        name=agent_id,
        provider="claude",
        cwd="/w",
        home=agent_id,
        created_at=f"2026-01-01T00:00:00.{next(_clock):06d}",
        **fields,
    )


def add(store: Store, *ids: str) -> None:
    for agent_id in ids:
        store.insert(agent(agent_id))


def open_store(path: Path) -> Store:
    store = Store.open(path)
    # Durability is not under test here (test_store.py covers kill -9): skip the fsyncs.
    store.conn.execute("PRAGMA synchronous = OFF")
    return store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = open_store(tmp_path / "r.db")
    yield s
    s.close()


def row(store: Store, agent_id: str) -> dict[str, Any]:
    """The agent's workspace fields as the store reads them (a tile's from its layout)."""
    agent = store.get_by_id(agent_id)
    assert agent is not None, f"{agent_id} has no record"
    fields = (
        "placement",
        "tab_id",
        "buried_sibling",
        "buried_side",
        "buried_direction",
        "buried_ratio",
        "linked_parent",
        "orchestration_parent",
        "orchestration_root",
    )
    return {f: getattr(agent, f) for f in fields}


def tab_of(store: Store, name: str) -> ws.Tab:
    tab = wsdb.find_tab(store.conn, name)
    assert tab is not None
    return tab


def tile(store: Store, agent_id: str, tab: str, **kw: Any) -> None:
    with store.write() as c:
        wsdb.tile(c, agent_id, wsdb.ensure_tab(c, tab), **kw)


def do(store: Store, fn: Any, *args: Any) -> Any:
    with store.write() as c:
        return fn(c, *args)


def check(store: Store) -> ws.Workspace:
    """The invariant, read back from the database."""
    w = wsdb.load(store.conn)
    assert ws.problems(w) == []
    ids = {m.id for m in w.members}
    tab_ids = {t.id for t in w.tabs}
    for tab in w.tabs:
        ws.validate_tree(tab.layout)
        for agent_id in leaves(tab.layout):
            assert agent_id in ids, f"tab {tab.name} holds {agent_id}, which has no record"
            member = w.member(agent_id)
            assert member is not None and member.tab_id == tab.id, (
                f"{agent_id}'s tab_id is not {tab.name}"
            )
    for m in w.members:
        assert m.placement in (TILE, DETACHED, BURIED, None)
        assert m.tab_id is None or m.tab_id in tab_ids
        for link in (
            m.linked_parent,
            m.orchestration_parent,
            m.orchestration_root,
            row(store, m.id)["buried_sibling"],
        ):
            assert link is None or link in ids, f"{m.id} links to a missing record {link}"
    assert len(set(w.pins)) == len(w.pins) and set(w.pins) <= ids
    assert store.conn.execute("PRAGMA foreign_key_check").fetchall() == []
    return w


def layout(store: Store, tab: str) -> Any:
    return tab_of(store, tab).layout


# ---- placement keeps the invariant -------------------------------------------------------
def test_tile_park_bury_unbury_move_keep_one_placement_each(store: Store) -> None:
    add(store, "a", "b", "c", "d", "e")
    check(store)
    tile(store, "a", "main")
    tile(store, "b", "main")  # beside the focus (a), after it
    tile(store, "c", "side", direction="h")
    w = check(store)
    assert layout(store, "main") == split("v", leaf("a"), leaf("b"))
    assert tab_of(store, "main").focus == "b"
    assert ws.live(w) == {"a", "b", "c"} and ws.stale(w) == {"d", "e"}

    do(store, wsdb.park, "b")
    check(store)
    assert layout(store, "main") == leaf("a")
    assert row(store, "b")["placement"] == DETACHED
    assert row(store, "b")["tab_id"] == tab_of(store, "main").id  # remembers its project tab
    assert tab_of(store, "main").focus is None  # the focused tile closed

    do(store, wsdb.bury, "a")
    check(store)
    assert layout(store, "main") is None and row(store, "a")["placement"] == BURIED

    assert do(store, wsdb.unbury, "a").name == "main"
    check(store)
    assert layout(store, "main") == leaf("a") and tab_of(store, "main").focus == "a"
    assert row(store, "a")["placement"] == TILE

    with store.write() as c:  # move c from side to main (what `roost place` does)
        wsdb.untile(c, "c")
        wsdb.tile(c, "c", wsdb.require_tab(c, "main"), direction="h", after=False)
    w = check(store)
    assert layout(store, "main") == split("h", leaf("c"), leaf("a"))
    assert layout(store, "side") is None and row(store, "c")["tab_id"] == tab_of(store, "main").id

    do(store, wsdb.park, "d")  # never placed: parked, no tab
    do(store, wsdb.bury, "e")  # never placed: buried, nowhere to go back to
    w = check(store)
    assert ws.owned(w) == {"a", "b", "c", "d", "e"} and ws.stale(w) == set()
    assert do(store, wsdb.unbury, "e") is None
    check(store)
    assert row(store, "e")["placement"] == DETACHED

    do(store, wsdb.park, "a")  # a parked tile can be buried, then comes back to its tab
    do(store, wsdb.bury, "a")
    check(store)
    assert do(store, wsdb.unbury, "a").name == "main"
    assert leaves(layout(store, "main")) == ["c", "a"]
    check(store)


def test_tiling_twice_in_one_tab_is_refused_and_rolled_back(store: Store) -> None:
    add(store, "a", "b")
    tile(store, "a", "main")
    tile(store, "b", "main")
    before = wsdb.load(store.conn)
    with pytest.raises(ws.LayoutError):
        tile(store, "a", "main", beside="b")
    assert wsdb.load(store.conn) == before
    check(store)


def test_bury_remembers_where_the_tile_was(store: Store) -> None:
    add(store, "a", "b")
    tile(store, "a", "main")
    tile(store, "b", "main", direction="h", ratio=0.3)
    do(store, wsdb.bury, "b")
    r = row(store, "b")
    assert (
        r["placement"],
        r["tab_id"],
        r["buried_sibling"],
        r["buried_side"],
        r["buried_direction"],
        r["buried_ratio"],
    ) == (BURIED, tab_of(store, "main").id, "a", "b", "h", 0.3)
    do(store, wsdb.unbury, "b")
    r = row(store, "b")  # a tile again: the burial record is cleared
    assert (r["buried_sibling"], r["buried_side"], r["buried_direction"], r["buried_ratio"]) == (
        None,
        None,
        None,
        None,
    )
    check(store)


# ---- unbury ------------------------------------------------------------------------------
def build(store: Store, tab: str, tree: dict[str, Any]) -> None:
    """Make `tree` the tab's layout through wsdb.tile calls only (top-down: split the first
    leaf of a, then grow both sides)."""
    for new, beside, direction, after, ratio in tile_steps(tree):
        tile(store, new, tab, beside=beside, direction=direction, after=after, ratio=ratio)
    assert layout(store, tab) == tree


def tile_steps(tree: dict[str, Any] | None) -> list[tuple[Any, ...]]:
    if tree is None:
        return []
    steps: list[tuple[Any, ...]] = [(leaves(tree)[0], None, "v", True, 0.5)]

    def go(n: dict[str, Any]) -> None:
        if "leaf" in n:
            return
        steps.append((leaves(n["b"])[0], leaves(n["a"])[0], n["split"], True, n["ratio"]))
        go(n["a"])
        go(n["b"])

    go(tree)
    return steps


EXACT = {
    "left of a tile": (split("v", leaf("x"), leaf("a"), 0.3), "x"),
    "right of a tile": (split("v", leaf("a"), leaf("x"), 0.7), "x"),
    "under a tile": (split("h", leaf("a"), leaf("x"), 0.25), "x"),
    "inside a column": (split("v", leaf("a"), split("h", leaf("b"), leaf("x"), 0.6)), "x"),
    "only tile": (leaf("x"), "x"),
}


@pytest.mark.parametrize("tree, gone", list(EXACT.values()), ids=list(EXACT))
def test_unbury_puts_a_tile_back_exactly_when_its_sibling_was_a_tile(
    store: Store, tree: dict[str, Any], gone: str
) -> None:
    add(store, *leaves(tree))
    build(store, "main", tree)
    do(store, wsdb.bury, gone)
    check(store)
    assert gone not in leaves(layout(store, "main"))
    back = do(store, wsdb.unbury, gone)
    assert back is not None and back.name == "main"
    assert layout(store, "main") == tree
    assert tab_of(store, "main").focus == gone
    check(store)


ORDER = {
    "left of a column": split("v", leaf("x"), split("h", leaf("a"), leaf("b"))),
    "above a row": split("h", leaf("x"), split("v", leaf("a"), leaf("b"))),
    # x sat right of the column (a over b). Fails today: bury records the column's *first*
    # leaf (a) as the sibling and unbury inserts after it, so x comes back between a and b.
    "right of a column": split("v", split("h", leaf("a"), leaf("b")), leaf("x")),
    "below a row": split("h", split("v", leaf("a"), leaf("b")), leaf("x")),
}


@pytest.mark.parametrize("tree", list(ORDER.values()), ids=list(ORDER))
def test_unbury_next_to_a_split_sibling_keeps_the_tile_order(
    store: Store, tree: dict[str, Any]
) -> None:
    add(store, *leaves(tree))
    build(store, "main", tree)
    do(store, wsdb.bury, "x")
    do(store, wsdb.unbury, "x")
    assert leaves(layout(store, "main")) == leaves(tree)
    check(store)


def test_unbury_goes_next_to_its_old_sibling_on_its_old_side_after_changes(store: Store) -> None:
    add(store, "a", "b", "c", "d", "e")
    build(store, "main", split("v", leaf("a"), leaf("b")))
    tile(store, "e", "other")
    do(store, wsdb.bury, "a")  # a was left of b
    tile(store, "c", "main", beside="b")  # main: b | c
    tile(store, "d", "main", beside="b", after=False)  # main: d | b | c
    back = do(store, wsdb.unbury, "a")
    assert back.name == "main"
    assert leaves(layout(store, "main")) == ["d", "a", "b", "c"]  # directly left of b
    assert leaves(layout(store, "other")) == ["e"]
    check(store)


def test_unbury_after_the_sibling_moved_away_goes_after_the_last_tile(store: Store) -> None:
    add(store, "a", "b", "c")
    build(store, "main", split("v", leaf("a"), leaf("b")))
    do(store, wsdb.bury, "b")  # b was right of a
    tile(store, "c", "main")  # main: a | c
    with store.write() as c:  # a moves to another tab
        wsdb.untile(c, "a")
        wsdb.tile(c, "a", wsdb.ensure_tab(c, "side"))
    do(store, wsdb.unbury, "b")
    assert leaves(layout(store, "main")) == ["c", "b"]
    check(store)


def test_unbury_after_the_sibling_was_deleted_goes_after_the_last_tile(store: Store) -> None:
    """restore_tile promises "(or after the last)". Fails today: the deleted sibling is NULLed
    (FK) but buried_side stays 'a', so insert() puts the tile *before* the last one."""
    add(store, "a", "b", "c")
    build(store, "main", split("v", leaf("a"), split("v", leaf("b"), leaf("c"))))
    do(store, wsdb.bury, "a")  # sibling b, side a
    store.delete("b")
    assert row(store, "a")["buried_sibling"] is None and row(store, "a")["buried_side"] == "a"
    do(store, wsdb.unbury, "a")
    assert leaves(layout(store, "main")) == ["c", "a"]
    check(store)


def test_unbury_parks_when_the_tab_was_deleted(store: Store) -> None:
    add(store, "a", "x")
    tile(store, "a", "main")
    tile(store, "x", "side")
    do(store, wsdb.bury, "x")
    side = tab_of(store, "side")
    with store.write() as c:
        c.execute("DELETE FROM tabs WHERE id = ?", (side.id,))
    assert row(store, "x")["tab_id"] is None  # ON DELETE SET NULL
    check(store)
    assert do(store, wsdb.unbury, "x") is None
    r = row(store, "x")
    assert (r["placement"], r["tab_id"], r["buried_sibling"], r["buried_side"]) == (
        DETACHED,
        None,
        None,
        None,
    )
    assert leaves(layout(store, "main")) == ["a"]
    w = check(store)
    assert ws.owned(w) == {"a", "x"} and ws.live(w) == {"a"}


def test_unbury_parks_when_the_tab_was_closed(store: Store) -> None:
    add(store, "a", "x", "y")
    tile(store, "a", "main")
    build(store, "side", split("v", leaf("x"), leaf("y")))
    do(store, wsdb.bury, "x")
    closed = wsops.tab_close(SimpleNamespace(store=store), "side")  # type: ignore[arg-type]
    assert closed == ["y"]
    w = check(store)
    assert [t.name for t in w.tabs] == ["main"]
    assert row(store, "y")["placement"] == DETACHED and row(store, "y")["tab_id"] is None
    assert do(store, wsdb.unbury, "x") is None
    assert row(store, "x")["placement"] == DETACHED
    w = check(store)
    assert ws.owned(w) == {"a", "x", "y"} and ws.live(w) == {"a"}


# ---- deleting a record -------------------------------------------------------------------
@pytest.mark.parametrize("placement", ["tile, focused", "tile", "detached", "buried", "stale"])
def test_deleting_a_record_leaves_nothing_pointing_at_it(store: Store, placement: str) -> None:
    add(store, "a", "b")
    store.insert(agent("x", provider_session_id="sess-x"))
    add(store, "k1", "k2", "k3", "bz")
    tile(store, "a", "main")
    if placement.startswith("tile"):
        tile(store, "x", "main")
    tile(store, "b", "main", beside="a", after=False)
    if placement == "tile, focused":
        do(store, wsdb.save_tab, tab_of(store, "main").id, layout(store, "main"), "x")
    elif placement == "detached":
        do(store, wsdb.park, "x")
    elif placement == "buried":
        tile(store, "x", "main")
        do(store, wsdb.bury, "x")
    tile(store, "bz", "main", beside="x" if placement.startswith("tile") else "a")
    do(store, wsdb.bury, "bz")
    if placement.startswith("tile"):
        assert row(store, "bz")["buried_sibling"] == "x"
    else:
        store.update("bz", buried_sibling="x")
    store.update("k1", linked_parent="x", orchestration_root="x")
    store.update("k2", orchestration_parent="x", linked_parent="a")
    store.update("k3", orchestration_root="x", orchestration_parent="k2")
    for pinned in ("a", "x", "k1"):
        do(store, wsdb.pin, pinned)
    check(store)

    store.delete("x")

    w = check(store)
    assert w.member("x") is None
    assert "x" not in ws.tiled(w) and all(t.focus != "x" for t in w.tabs)
    assert leaves(layout(store, "main")) == ["b", "a"]
    assert w.pins == ("a", "k1")
    assert (row(store, "k1")["linked_parent"], row(store, "k1")["orchestration_root"]) == (
        None,
        None,
    )
    assert (row(store, "k2")["orchestration_parent"], row(store, "k2")["linked_parent"]) == (
        None,
        "a",
    )
    assert (row(store, "k3")["orchestration_root"], row(store, "k3")["orchestration_parent"]) == (
        None,
        "k2",
    )
    assert row(store, "bz")["buried_sibling"] is None
    assert store.session_history("x") == []
    assert ws.descendants(w, "a") == ["k2", "k3"]


def test_deleting_the_last_tile_empties_the_tab(store: Store) -> None:
    add(store, "x")
    tile(store, "x", "main")
    store.delete("x")
    tab = tab_of(store, "main")
    assert (tab.layout, tab.focus) == (None, None)
    check(store)


def test_links_and_pins_to_missing_records_are_refused(store: Store) -> None:
    add(store, "a")
    with pytest.raises(sqlite3.IntegrityError):
        store.update("a", linked_parent="nobody")
    with pytest.raises(sqlite3.IntegrityError):
        do(store, wsdb.pin, "nobody")
    check(store)


def test_pins_keep_their_order_and_are_not_duplicated(store: Store) -> None:
    add(store, "a", "b", "c")
    assert [do(store, wsdb.pin, x) for x in ("c", "a", "c", "b")] == [True, True, False, True]
    assert wsdb.load(store.conn).pins == ("c", "a", "b")
    assert do(store, wsdb.unpin, "a") is True and do(store, wsdb.unpin, "a") is False
    assert wsdb.load(store.conn).pins == ("c", "b")
    w = wsdb.load(store.conn)
    assert ws.live(w) == set()  # pinning never makes an agent live


def test_is_pinned_reads_one_pin(store: Store) -> None:
    add(store, "a", "b")
    do(store, wsdb.pin, "a")
    assert wsdb.is_pinned(store.conn, "a") and not wsdb.is_pinned(store.conn, "b")
    do(store, wsdb.unpin, "a")
    assert not wsdb.is_pinned(store.conn, "a")


# ---- tabs, the spawn-time park, the mode --------------------------------------------------
def test_rename_tab_keeps_its_tiles_and_refuses_a_taken_or_bad_name(store: Store) -> None:
    add(store, "a")
    tile(store, "a", "main")
    do(store, wsdb.create_tab, "side")
    before = tab_of(store, "main")
    do(store, wsdb.rename_tab, "main", "work")
    assert wsdb.find_tab(store.conn, "main") is None
    assert tab_of(store, "work") == ws.Tab(before.id, "work", before.layout, before.focus)
    with pytest.raises(RoostError, match="already exists"):
        do(store, wsdb.rename_tab, "work", "side")
    with pytest.raises(RoostError, match="no tab named 'gone'"):
        do(store, wsdb.rename_tab, "gone", "other")
    with pytest.raises(RoostError):
        do(store, wsdb.rename_tab, "work", "bad name")
    assert [t.name for t in check(store).tabs] == ["work", "side"]


def test_close_tab_parks_its_tiles_and_leaves_other_tabs_alone(store: Store) -> None:
    add(store, "a", "b", "c", "d")
    tile(store, "a", "main")
    tile(store, "b", "main")
    tile(store, "c", "side")
    do(store, wsdb.park, "d", tab_of(store, "main"))  # a project of main, never a tile of it
    assert do(store, wsdb.close_tab, "main") == ["a", "b"]
    w = check(store)
    assert [t.name for t in w.tabs] == ["side"]
    for agent_id in ("a", "b", "d"):  # nothing points at the deleted tab
        assert (row(store, agent_id)["placement"], row(store, agent_id)["tab_id"]) == (
            DETACHED,
            None,
        )
    assert row(store, "c")["placement"] == TILE and ws.live(w) == {"c"}
    with pytest.raises(RoostError, match="no tab named 'main'"):
        do(store, wsdb.close_tab, "main")


def test_park_with_a_project_tab_remembers_it(store: Store) -> None:
    add(store, "new", "old")
    side = do(store, wsdb.create_tab, "side")
    do(store, wsdb.park, "new", side)  # `spawn --detached --tab side`
    assert (row(store, "new")["placement"], row(store, "new")["tab_id"]) == (DETACHED, side.id)
    tile(store, "old", "main")
    do(store, wsdb.park, "old")  # a plain park keeps the tab it had
    assert row(store, "old")["tab_id"] == tab_of(store, "main").id
    do(store, wsdb.park, "old", side)  # a park with a project tab moves it
    assert row(store, "old")["tab_id"] == side.id and layout(store, "main") is None
    check(store)


def test_the_dangerous_mode_goes_to_the_setting_and_every_agent(store: Store) -> None:
    add(store, "a")
    store.insert(agent("b", dangerous=True))
    assert wsdb.get_setting(store.conn, "dangerous") is None
    do(store, wsdb.set_dangerous_mode, True)
    assert wsdb.get_setting(store.conn, "dangerous") == "1"
    assert [a.dangerous for a in store.agents()] == [True, True]
    do(store, wsdb.set_dangerous_mode, False)
    assert wsdb.get_setting(store.conn, "dangerous") == "0"
    assert [a.dangerous for a in store.agents()] == [False, False]


# ---- random edit sequences ---------------------------------------------------------------
AGENTS = [f"g{i}" for i in range(6)]
TABS = ["t0", "t1", "t2"]
ops = st.lists(
    st.tuples(
        st.sampled_from(
            ["tile", "tile", "park", "bury", "unbury", "delete", "close", "pin", "link"]
        ),
        st.integers(0, len(AGENTS) - 1),
        st.integers(0, len(TABS) - 1),
        st.integers(0, len(AGENTS) - 1),
        st.sampled_from(ws.DIRECTIONS),
        st.booleans(),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(ops)
def test_random_edit_sequences_keep_the_invariant(steps: list[Any]) -> None:
    """Tile (moving if needed), park, bury, unbury, delete, close tabs, pin, link in any order;
    after each, the invariant holds and the tabs' tile order matches a list model."""
    with tempfile.TemporaryDirectory() as d:
        store = open_store(Path(d) / "r.db")
        try:
            run_steps(store, steps)
        finally:
            store.close()


def run_steps(store: Store, steps: list[Any]) -> None:
    add(store, *AGENTS)
    order: dict[str, list[str]] = {}  # tab name -> its leaves in tile order
    focus: dict[str, str | None] = {}
    alive = set(AGENTS)
    for op, i, t, j, direction, after in steps:
        x, tab, y = AGENTS[i], TABS[t], AGENTS[j]
        if x not in alive:
            continue
        before = row(store, x)
        home = next((n for n, tiles in order.items() if x in tiles), None)
        if op == "tile":
            with store.write() as c:
                if home is not None:
                    wsdb.untile(c, x)
                wsdb.tile(
                    c,
                    x,
                    wsdb.ensure_tab(c, tab),
                    direction=direction,
                    beside=y if y != x else None,
                    after=after,
                )
            if home is not None:
                order[home].remove(x)
                focus[home] = None if focus[home] == x else focus[home]
            tiles = order.setdefault(tab, [])
            wanted = y if y != x else focus.get(tab)  # wsdb.tile: beside, else the focus
            target = wanted if wanted in tiles else (tiles[-1] if tiles else None)
            tiles.insert(tiles.index(target) + (1 if after else 0) if target else 0, x)
            focus[tab] = x
            assert row(store, x)["placement"] == TILE
        elif op in ("park", "bury"):
            do(store, wsdb.park if op == "park" else wsdb.bury, x)
            if home is not None:
                order[home].remove(x)
                focus[home] = None if focus[home] == x else focus[home]
            after_row = row(store, x)
            assert after_row["placement"] == (DETACHED if op == "park" else BURIED)
            assert after_row["tab_id"] == before["tab_id"]  # its project tab / old tab
        elif op == "unbury":
            if before["placement"] != BURIED:
                continue
            back = do(store, wsdb.unbury, x)
            if before["tab_id"] is None:
                assert back is None and row(store, x)["placement"] == DETACHED
            else:
                assert back is not None and back.id == before["tab_id"]
                assert row(store, x)["placement"] == TILE
                now = leaves(layout(store, back.name))
                assert [a for a in now if a != x] == order[back.name] and x in now
                order[back.name] = now
                focus[back.name] = x
        elif op == "delete":
            store.delete(x)
            alive.discard(x)
            if home is not None:
                order[home].remove(x)
                focus[home] = None if focus[home] == x else focus[home]
        elif op == "close":
            if tab not in order:
                continue
            held = set(order.pop(tab))
            focus.pop(tab)
            tab_id = tab_of(store, tab).id
            was_there = {a for a in alive if row(store, a)["tab_id"] == tab_id}
            wsops.tab_close(SimpleNamespace(store=store), tab)  # type: ignore[arg-type]
            for a in held:
                assert row(store, a)["placement"] == DETACHED
            for a in was_there:
                assert row(store, a)["tab_id"] is None
        elif op == "pin":
            do(store, wsdb.pin if after else wsdb.unpin, x)
        elif op == "link" and y in alive:
            field = "linked_parent" if after else "orchestration_parent"
            store.update(x, **{field: y if y != x else None})
        w = check(store)
        assert {t.name: leaves(t.layout) for t in w.tabs} == order
        assert {t.name: t.focus for t in w.tabs} == focus
        assert {m.id for m in w.members} == alive


# ---- save and load -----------------------------------------------------------------------
def write(store: Store, w: ws.Workspace) -> dict[str, str]:
    """Write a pure workspace through wsdb (and Store for records and links); returns the
    database tab id -> the workspace's tab id."""
    with store.write() as c:
        made = {tab.id: wsdb.create_tab(c, tab.name) for tab in w.tabs}
    for m in w.members:
        store.insert(agent(m.id))
    names = {tab.id: tab.name for tab in w.tabs}
    with store.write() as c:
        for tab in w.tabs:
            for new, beside, direction, after, ratio in tile_steps(tab.layout):
                wsdb.tile(
                    c,
                    new,
                    wsdb.require_tab(c, tab.name),
                    direction=direction,
                    beside=beside,
                    after=after,
                    ratio=ratio,
                )
        for m in w.members:
            if m.placement in (DETACHED, BURIED) and m.tab_id is not None:
                wsdb.tile(c, m.id, wsdb.require_tab(c, names[m.tab_id]))  # its tab...
            if m.placement == DETACHED:
                wsdb.park(c, m.id)  # ...which a parked agent remembers as its project tab
            elif m.placement == BURIED:
                wsdb.bury(c, m.id)  # ...and a buried one as the place to come back to
        for tab in w.tabs:
            db_tab = wsdb.require_tab(c, tab.name)
            wsdb.save_tab(c, db_tab.id, db_tab.layout, tab.focus)
        for agent_id in w.pins:
            wsdb.pin(c, agent_id)
    for m in w.members:
        store.update(
            m.id,
            linked_parent=m.linked_parent,
            orchestration_parent=m.orchestration_parent,
            orchestration_root=m.orchestration_root,
        )
        if m.placement is None and m.tab_id is not None:
            store.update(m.id, tab_id=made[m.tab_id].id)
    return {made[k].id: k for k in made}


def normalized(w: ws.Workspace, back: dict[str, str]) -> ws.Workspace:
    return ws.Workspace(
        tabs=tuple(ws.Tab(back[t.id], t.name, t.layout, t.focus) for t in w.tabs),
        members=tuple(
            ws.Member(
                m.id,
                m.placement,
                back.get(m.tab_id) if m.tab_id else None,
                m.linked_parent,
                m.orchestration_parent,
                m.orchestration_root,
            )
            for m in w.members
        ),
        pins=w.pins,
    )


@settings(max_examples=30, deadline=None)
@given(workspaces(max_members=10))
def test_a_workspace_survives_a_save_and_load(w: ws.Workspace) -> None:
    with tempfile.TemporaryDirectory() as d:
        store = open_store(Path(d) / "r.db")
        try:
            back = write(store, w)
            check(store)
            assert normalized(wsdb.load(store.conn), back) == w
            store.close()
            store = open_store(Path(d) / "r.db")  # and from a fresh connection
            assert normalized(wsdb.load(store.conn), back) == w

            # gc: the stale records go; every link and pin between owned records survives
            for agent_id in ws.stale(w):
                store.delete(agent_id)
            kept = ws.owned(w)
            got = normalized(check(store), back)
            assert got.tabs == w.tabs
            assert got.pins == tuple(p for p in w.pins if p in kept)
            assert got.members == tuple(
                ws.Member(
                    m.id,
                    m.placement,
                    m.tab_id,
                    *(
                        link if link in kept else None
                        for link in (m.linked_parent, m.orchestration_parent, m.orchestration_root)
                    ),
                )
                for m in w.members
                if m.id in kept
            )
        finally:
            store.close()
