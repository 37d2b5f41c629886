"""Layouts that scale: adding tiles keeps every tile usable, `balance` makes an even grid, and a
tab of 16 agents opens in a 200x50 terminal (pure properties, then a real tmux)."""

from __future__ import annotations

import os
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roost.core import workspace as ws

from conftest import Env

# one add: which tile it goes beside (an index into the tiles so far), and the direction asked
ADDS = st.lists(
    st.tuples(st.integers(0, 15), st.sampled_from([None, "v", "h"])), min_size=1, max_size=16
)


def build(adds: list[tuple[int, str | None]]) -> ws.Node | None:
    node: ws.Node | None = None
    for n, (beside, direction) in enumerate(adds):
        tiles = ws.leaves(node)
        node = ws.add(
            node, f"t{n}", beside=tiles[beside % len(tiles)] if tiles else None, direction=direction
        )
    return node


@settings(max_examples=300, deadline=None)
@given(ADDS)
def test_up_to_16_tiles_added_anyhow_all_keep_the_minimum_size(
    adds: list[tuple[int, str | None]],
) -> None:
    node = build(adds)
    ws.validate_tree(node)
    assert sorted(ws.leaves(node)) == sorted(f"t{n}" for n in range(len(adds)))
    for w, h in ws.sizes(node).values():
        assert w >= ws.MIN_TILE[0] and h >= ws.MIN_TILE[1], ws.sizes(node)


@settings(max_examples=300, deadline=None)
@given(ADDS)
def test_balance_keeps_the_order_and_makes_even_rows_and_columns(
    adds: list[tuple[int, str | None]],
) -> None:
    node = build(adds)
    even = ws.balance(node)
    ws.validate_tree(even)
    assert ws.leaves(even) == ws.leaves(node)
    sizes = ws.sizes(even)
    heights = [h for _w, h in sizes.values()]
    assert max(heights) - min(heights) <= 1
    columns = int(len(sizes) ** 0.5 + 0.999999)
    full = (ws.NOMINAL[0] - (columns - 1)) / columns
    assert all(w >= full - 1 for w, _h in sizes.values())
    assert ws.fits(even)  # 16 tiles in 200x50: a 4x4 grid of about 49x11


def test_without_a_direction_tiles_go_where_the_layout_stays_balanced() -> None:
    node = build([(0, None)] * 16)
    assert {(int(w), int(h)) for w, h in ws.sizes(node).values()} == {(49, 11)}
    two = build([(0, None)] * 2)
    assert two is not None and two["split"] == "v"  # the first split: side by side


def test_split_words_cannot_be_misread_and_old_letters_read_as_before() -> None:
    assert ws.direction_of("right") == "v" == ws.direction_of("v")
    assert ws.direction_of("below") == "h" == ws.direction_of("h")
    assert ws.direction_of("auto") is None and ws.direction_of(None) is None
    with pytest.raises(ws.LayoutError, match="right, below or auto"):
        ws.direction_of("left")


def test_an_asked_split_is_kept_while_it_fits() -> None:
    node = build([(0, None), (0, None), (0, "h")])  # t0 | t1, then t2 below t0
    assert node == ws.split("v", ws.split("h", ws.leaf("t0"), ws.leaf("t2")), ws.leaf("t1"))


@pytest.mark.tmux
def test_a_tab_of_16_agents_opens_in_200x50_and_can_be_balanced(world: Env) -> None:
    from roost.ops import tabview
    from roost.ops.root import open_app
    from roost.store import workspace as wsdb

    for i in range(16):
        world.roost(
            "spawn",
            f"a{i:02}",
            "--cwd",
            str(world.tmp / "work"),
            *(("--split", "below") if i % 3 == 0 else ()),
        )
    view_server = f"{world.socket}-view"
    try:
        with mock.patch.dict(os.environ, world.env, clear=True):
            app = open_app()
            try:
                tabview.open_tab(app, "main", width=200, height=50)
            finally:
                app.close()
        panes = world_view_panes(world, view_server)
        assert len(panes) == 16 and all(int(w) >= 30 and int(h) >= 8 for w, h in panes), panes
    finally:
        world_view(world, view_server, "kill-server")
    out = world.roost("tab", "balance", "main").stdout
    assert "16 tiles" in out
    with mock.patch.dict(os.environ, world.env, clear=True):
        app = open_app()
        try:
            tab: Any = wsdb.require_tab(app.store.conn, "main")
        finally:
            app.close()
    assert tab.layout == ws.grid(ws.leaves(tab.layout))


def world_view(world: Env, socket: str, *args: str) -> str:
    import subprocess

    return subprocess.run(
        ["tmux", "-L", socket, "-f", "/dev/null", *args],
        env=world.env,
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout


def world_view_panes(world: Env, socket: str) -> list[tuple[str, str]]:
    out = world_view(
        world, socket, "list-panes", "-t", "=view-main", "-F", "#{pane_width} #{pane_height}"
    )
    return [tuple(line.split()) for line in out.splitlines()]  # type: ignore[misc]
