"""Issue 19, item 10: a tab with one tile shows that tile's whole height in the tab view (the
bottom of the screen, as tall as the tile), and a 64-character name (valid) is cut with an
ellipsis in the list so the provider and status columns stay on screen; the details panel
keeps the full name."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from test_tui import TallScreens, app_on, settle, shown_text
from textual.widgets import DataTable

from roost.core.names import MAX_NAME
from roost.tui.app import TabScreen
from roost.tui.demo import StaticSource, item


@pytest.mark.parametrize("size", [(120, 30), (80, 24)])
def test_a_tab_with_one_tile_shows_the_bottom_of_its_screen_at_full_height(
    size: tuple[int, int],
) -> None:
    source = TallScreens()
    source.snap = replace(
        source.snap, tab_tiles=[("main", ["api-fix"])], layouts={"main": {"leaf": "api-fix"}}
    )

    async def run() -> None:
        app = app_on(source)
        async with app.run_test(size=size) as pilot:
            await settle(pilot, app, lambda: app.rows)
            await pilot.press("t")
            await settle(
                pilot,
                app,
                lambda: (
                    isinstance(app.screen, TabScreen)
                    and "❯" in shown_text(app.screen.query_one("#tile-api-fix"))
                ),
            )
            tile = app.screen.query_one("#tile-api-fix")
            text = shown_text(tile).rstrip("\n")
            assert tile.outer_size.height >= size[1] - 4, tile.outer_size  # the whole tab
            assert text.endswith("❯ prompt of api-fix"), text[-80:]
            assert len(text.split("\n")) == tile.content_size.height  # every row used

    asyncio.run(run())


@pytest.mark.parametrize("size", [(120, 30), (80, 24)])
def test_a_64_character_name_leaves_the_other_columns_on_screen(size: tuple[int, int]) -> None:
    long = "n" * (MAX_NAME - 4) + "-end"
    source = StaticSource()
    items = [*source.snap.items, item(long, "waiting", provider="codex", tab="main")]
    source.snap = replace(
        source.snap,
        items=items,
        tab_tiles=[("main", ["api-fix", "api-tests", long]), *source.snap.tab_tiles[1:]],
    )

    async def run() -> None:
        app = app_on(source)
        async with app.run_test(size=size) as pilot:
            await settle(pilot, app, lambda: app.rows)
            table = app.query_one("#agents", DataTable)
            widths = [c.get_render_width(table) for c in table.columns.values()]
            assert sum(widths) <= table.scrollable_content_region.width, (widths, table.size)
            row = next(i for i, r in enumerate(app.rows) if r.item and r.item.agent.name == long)
            name_cell = str(table.get_row_at(row)[0])
            assert name_cell.endswith("…") and name_cell[:-1] in long, name_cell
            table.move_cursor(row=row)
            await settle(pilot, app)
            assert long in str(app.query_one("#details").render())  # the full name there

    asyncio.run(run())
