"""Issue 20, "stored once": a tile's placement lives only in its tab's layout (store/agents.py
derives an agent's `tile` and tab from it). An older store, its two copies drifted or not, is
converted losing nothing, the layout winning; an export of the old shape still imports."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from roost.core import workspace as ws
from roost.core.exchange import FORMAT, VERSION, validate
from roost.providers.traits import SESSION_IDS
from roost.store import exchange, schema
from roost.store import workspace as wsdb
from roost.store.db import Store

OLD = 7  # the last schema version that kept a tile's placement twice
MAIN, UI = "tab-main", "tab-ui"
NAMES = ("ok", "lost", "parked")


def old_store(path: Path, agents: list[tuple[str, str | None, str | None]], tabs: Any) -> None:
    """A store as the schema up to OLD wrote it: each agent (name, placement, tab_id) and each
    tab (id, name, position, layout, focus)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    schema.apply(conn, 0, OLD)
    conn.executemany("INSERT INTO tabs VALUES (?, ?, ?, ?, ?)", tabs)
    for i, (name, placement, tab_id) in enumerate(agents):
        conn.execute(
            "INSERT INTO agents (id, name, provider, cwd, home, created_at, intent, placement, "
            "tab_id, buried_sibling) VALUES (?, ?, 'claude', '/w', ?, ?, 'stopped', ?, ?, ?)",
            (
                f"id-{name}",
                name,
                name,
                f"2026-01-01T00:00:0{i}+00:00",
                placement,
                tab_id,
                "id-ok" if placement == "buried" else None,
            ),
        )
    conn.execute("COMMIT")
    conn.close()


def row(n: str) -> dict[str, Any]:
    return {"leaf": f"id-{n}"}


def pair(a: str, b: str) -> dict[str, Any]:
    return {"split": "v", "ratio": 0.5, "a": row(a), "b": row(b)}


def test_an_older_store_keeps_every_placement_once_and_drift_goes_to_the_layout(
    tmp_path: Path,
) -> None:
    path = tmp_path / "r.db"
    old_store(
        path,
        [
            ("ok", "tile", MAIN),  # the two copies agree
            ("lost", "tile", MAIN),  # its row says tile, no layout holds it
            ("held", "detached", MAIN),  # a layout holds it, its row says parked
            ("moved", "tile", MAIN),  # its row names one tab, the other tab's layout holds it
            ("twice", "tile", MAIN),  # two layouts hold it
            ("parked", "detached", UI),
            ("deep", "buried", MAIN),
        ],
        [
            (MAIN, "main", 0, json.dumps(pair("ok", "twice")), "id-twice"),
            (UI, "ui", 1, json.dumps(pair("held", "moved") | {"b": pair("moved", "twice")}), None),
        ],
    )
    store = Store.open(path)
    placed = {a.name: (a.placement, a.tab_id) for a in store.agents()}
    assert placed == {
        "ok": ("tile", MAIN),
        "lost": ("detached", MAIN),  # parked in the tab it named: nothing lost
        "held": ("tile", UI),
        "moved": ("tile", UI),
        "twice": ("tile", MAIN),  # the first tab keeps it
        "parked": ("detached", UI),
        "deep": ("buried", MAIN),
    }
    stored = dict(store.conn.execute("SELECT name, placement FROM agents").fetchall())
    assert "tile" not in stored.values() and stored["ok"] is None  # a tile: its layout alone
    workspace = wsdb.load(store.conn)
    assert ws.problems(workspace) == []
    assert [ws.leaves(t.layout) for t in workspace.tabs] == [
        ["id-ok", "id-twice"],
        ["id-held", "id-moved"],
    ]
    assert workspace.tabs[1].focus is None
    assert store.require("deep").buried_sibling == "id-ok"


def test_a_tile_moves_with_its_layout_alone(tmp_path: Path) -> None:
    """One write moves a tile: nothing else holds its tab to fall out of step."""
    path = tmp_path / "r.db"
    old_store(path, [("a", "tile", MAIN)], [(MAIN, "main", 0, json.dumps(row("a")), "id-a")])
    store = Store.open(path)
    with store.write() as c:
        ui = wsdb.create_tab(c, "ui")
        wsdb.untile(c, "id-a")
        wsdb.add_tile(c, "id-a", ui)
    assert (store.require("a").placement, store.require("a").tab_id) == ("tile", ui.id)
    with store.write() as c:
        wsdb.park(c, "id-a")
    assert (store.require("a").placement, store.require("a").tab_id) == ("detached", ui.id)


def test_an_export_of_the_old_shape_imports_its_layouts_winning(tmp_path: Path) -> None:
    """An export an earlier roost wrote (placement and tab_id on each agent, drifted for `lost`,
    whose record says tile while no layout holds it) imports; `roost export` writes the same
    shape, a tile's placement and tab read from its layout."""
    source = tmp_path / "old.db"
    old_store(
        source,
        [(n, p, MAIN) for n, p in zip(NAMES, ("tile", "tile", "detached"), strict=True)],
        [(MAIN, "main", 0, json.dumps(row("ok")), "id-ok")],
    )
    conn = sqlite3.connect(source)
    columns = [r[1] for r in conn.execute("PRAGMA table_info(agents)")]
    agents = [dict(zip(columns, r, strict=True)) for r in conn.execute("SELECT * FROM agents")]
    conn.close()
    ids = {f"id-{n}": f"00000000-0000-4000-8000-00000000000{i}" for i, n in enumerate(NAMES)}
    tab = "00000000-0000-4000-8000-000000000009"
    for a in agents:
        a.update(id=ids[a["id"]], args=[], dangerous=False, session_history=[], tab_id=tab)
        a.update(conversation_seen=False, mcp=True)
    export = tmp_path / "old-export.json"
    export.write_text(
        json.dumps(
            {
                "format": FORMAT,
                "version": VERSION,
                "settings": {},
                "tabs": [
                    {
                        "id": tab,
                        "name": "main",
                        "position": 0,
                        "layout": {"leaf": ids["id-ok"]},
                        "focus": ids["id-ok"],
                    }
                ],
                "agents": agents,
                "pins": [],
            }
        )
    )
    data = json.loads(export.read_text())
    target = Store.open(tmp_path / "new.db")
    with target.write() as c:
        validate(data, exchange.taken(c), SESSION_IDS)
        exchange.insert_tables(c, data, "2026-01-02T00:00:00+00:00")
    placed = {a.name: (a.placement, a.tab_id) for a in target.agents()}
    assert placed == {
        "ok": ("tile", tab),
        "lost": ("detached", tab),
        "parked": ("detached", tab),
    }
    again = exchange.export_tables(target)
    assert [(a["name"], a["placement"], a["tab_id"]) for a in again["agents"]] == [
        ("ok", "tile", tab),
        ("lost", "detached", tab),
        ("parked", "detached", tab),
    ]
