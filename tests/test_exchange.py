"""`roost export` / `roost import` without tmux: the pure check of a file (core/exchange.py), and
the rows read and written by store/exchange.py against a real SQLite file."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from roost.core.errors import RoostError
from roost.core.exchange import AGENT_FIELDS, FORMAT, VERSION, Taken, validate
from roost.core.model import Agent
from roost.core.workspace import leaf, split
from roost.ops import transfer
from roost.ops.context import App
from roost.providers.base import NAMES as PROVIDERS
from roost.store import db, exchange
from roost.store import workspace as wsdb
from roost.store.db import Store
from roost.system.config import Paths
from roost.tmux.client import Tmux

Doc = dict[str, Any]


def record(name: str, **fields: Any) -> dict[str, Any]:
    agent = Agent(id=f"id-{name}", name=name, provider="claude", cwd="/w", home=name,
                  created_at="2026-01-01T00:00:00+00:00", **fields)
    row = {f: getattr(agent, f) for f in AGENT_FIELDS}
    row["args"] = list(agent.args)
    row["session_history"] = [agent.provider_session_id] if agent.provider_session_id else []
    return row


def doc() -> Doc:
    """A valid export: a and b tiled in tab t, c parked under a, c pinned."""
    return {
        "format": FORMAT, "version": VERSION, "settings": {"dangerous": "0"},
        "tabs": [{"id": "tab-t", "name": "t", "position": 0,
                  "layout": split("v", leaf("id-a"), leaf("id-b")), "focus": "id-b"}],
        "agents": [record("a", placement="tile", tab_id="tab-t", provider_session_id="s-a"),
                   record("b", placement="tile", tab_id="tab-t"),
                   record("c", placement="detached", linked_parent="id-a")],
        "pins": ["id-c"],
    }


def test_the_format_carries_every_stored_field() -> None:
    assert AGENT_FIELDS == db.AGENT_FIELDS


def test_a_valid_export_passes() -> None:
    validate(doc(), Taken(), PROVIDERS)


def edit(change: Callable[[Doc], object]) -> Doc:
    d = copy.deepcopy(doc())
    change(d)
    return d


REFUSALS = [
    pytest.param(["not", "a", "dict"], "not a roost workspace export", id="not-an-object"),
    pytest.param(edit(lambda d: d.update(format="other")), "not a roost workspace", id="format"),
    pytest.param(edit(lambda d: d.update(version=2)), "unsupported export version 2",
                 id="version"),
    pytest.param(edit(lambda d: d.update(settings=[])), "'settings' must be a dict",
                 id="settings-type"),
    pytest.param(edit(lambda d: d["agents"][0].pop("status")), "must have exactly the fields",
                 id="missing-field"),
    pytest.param(edit(lambda d: d["agents"][0].update(extra=1)), "must have exactly the fields",
                 id="extra-field"),
    pytest.param(edit(lambda d: d["agents"][1].update(id="id-a")), "id 'id-a' is missing or "
                 "already used", id="duplicate-id"),
    pytest.param(edit(lambda d: d["agents"][0].update(name="a b")), "agents[0]: bad name",
                 id="bad-name"),
    pytest.param(edit(lambda d: d["agents"][1].update(name="a")), "agent name 'a' already exists",
                 id="duplicate-name"),
    pytest.param(edit(lambda d: d["agents"][0].update(provider="vim")), "unknown provider 'vim'",
                 id="provider"),
    pytest.param(edit(lambda d: d["agents"][2].update(placement="floating")),
                 "placement must be tile, detached, buried or null", id="placement"),
    pytest.param(edit(lambda d: d["agents"][0].update(args="--x")),
                 "args must be a list of strings", id="args"),
    pytest.param(edit(lambda d: d["agents"][1].update(provider_session_id="s-a")),
                 "provider session s-a already belongs to another agent", id="shared-session"),
    pytest.param(edit(lambda d: d["tabs"][0].update(name="")), "bad or existing tab name",
                 id="tab-name"),
    pytest.param(edit(lambda d: d["tabs"][0].update(position="0")),
                 "position must be an integer", id="tab-position"),
    pytest.param(edit(lambda d: d["tabs"][0].update(layout={"leaf": 3})), "tabs[0].layout",
                 id="tab-layout"),
    pytest.param(edit(lambda d: d["tabs"][0].update(layout=leaf("id-zz"), focus=None)),
                 "tile id-zz is not an agent of this file", id="tile-unknown"),
    pytest.param(edit(lambda d: d["tabs"][0].update(focus="id-c")),
                 "focus must be one of its tiles", id="focus"),
    pytest.param(edit(lambda d: d["agents"][2].update(placement="tile")),
                 "agents[2] (c): placement tile must match", id="tile-without-tab"),
    pytest.param(edit(lambda d: d["agents"][2].update(tab_id="tab-zz")),
                 "tab_id tab-zz is not a tab of this file", id="tab-unknown"),
    pytest.param(edit(lambda d: d["agents"][2].update(orchestration_root="id-zz")),
                 "orchestration_root id-zz is not an agent of this file", id="link-outside"),
    pytest.param(edit(lambda d: d.update(pins=["id-zz"])), "pin 'id-zz' is not an agent",
                 id="pin-unknown"),
    pytest.param(edit(lambda d: d.update(pins=["id-c", "id-c"])), "pinned twice",
                 id="pin-twice"),
]


@pytest.mark.parametrize(("data", "says"), REFUSALS)
def test_a_bad_export_is_refused_with_the_first_problem(data: Any, says: str) -> None:
    with pytest.raises(RoostError) as refused:
        validate(data, Taken(), PROVIDERS)
    assert str(refused.value).startswith("import refused, nothing changed: ")
    assert says in str(refused.value) and refused.value.code == 2


@pytest.mark.parametrize(("taken", "says"), [
    pytest.param(Taken(ids=frozenset({"id-b"})), "id 'id-b' is missing or already used",
                 id="id"),
    pytest.param(Taken(names=frozenset({"c"})), "agent name 'c' already exists", id="name"),
    pytest.param(Taken(tabs=frozenset({"t"})), "bad or existing tab name 't'", id="tab"),
    pytest.param(Taken(sessions=frozenset({"s-a"})), "provider session s-a already belongs",
                 id="session"),
])
def test_what_the_database_holds_is_not_reused(taken: Taken, says: str) -> None:
    with pytest.raises(RoostError, match="import refused") as refused:
        validate(doc(), taken, PROVIDERS)
    assert says in str(refused.value)


def test_an_agent_may_list_its_own_current_session_in_its_lineage() -> None:
    data = edit(lambda d: d["agents"][0].update(session_history=["s-old", "s-a"]))
    validate(data, Taken(), PROVIDERS)


# ---- the rows, against a real SQLite file -------------------------------------------------
def populated(path: Path) -> Store:
    store = Store.open(path)
    store.insert(Agent(id="id-a", name="a", provider="claude", cwd="/w", home="a",
                       args=("--x", "y z"), dangerous=True, provider_session_id="s1",
                       created_at="2026-01-01T00:00:00+00:00", conversation_seen=True))
    store.set_provider_session_id("id-a", "s2")  # lineage s1, s2
    store.insert(Agent(id="id-b", name="b", provider="codex", cwd="/w", home="b",
                       created_at="2026-01-01T00:00:01+00:00", linked_parent="id-a"))
    with store.write() as c:
        wsdb.tile(c, "id-a", wsdb.ensure_tab(c, "main"))
        wsdb.tile(c, "id-b", wsdb.ensure_tab(c, "side"), direction="h")
        wsdb.bury(c, "id-b")
        wsdb.pin(c, "id-b")
        wsdb.set_setting(c, "dangerous", "1")
    return store


def import_into(store: Store, data: Doc) -> None:
    with store.write() as c:
        validate(data, exchange.taken(c), PROVIDERS)
        exchange.insert_tables(c, data, "2026-01-02T00:00:00+00:00")


def test_export_then_import_into_a_fresh_database_gives_the_same_rows(tmp_path: Path) -> None:
    source = populated(tmp_path / "a.db")
    data = {"format": FORMAT, "version": VERSION, **exchange.export_tables(source)}
    assert [a["session_history"] for a in data["agents"]] == [["s1", "s2"], []]
    assert data["pins"] == ["id-b"] and data["settings"] == {"dangerous": "1"}
    target = Store.open(tmp_path / "b.db")
    import_into(target, data)
    assert exchange.export_tables(target) == exchange.export_tables(source)
    assert target.agents() == source.agents()
    assert wsdb.load(target.conn) == wsdb.load(source.conn)
    assert target.integrity() == "ok"
    assert target.conn.execute("PRAGMA foreign_key_check").fetchall() == []


def test_taken_reads_ids_names_tab_names_and_every_session(tmp_path: Path) -> None:
    store = populated(tmp_path / "r.db")
    assert exchange.taken(store.conn) == Taken(
        ids=frozenset({"id-a", "id-b"}), names=frozenset({"a", "b"}),
        tabs=frozenset({"main", "side"}), sessions=frozenset({"s1", "s2"}))


def test_a_refused_import_writes_nothing(tmp_path: Path) -> None:
    store = populated(tmp_path / "r.db")
    app = App(paths=Paths(tmp_path), store=store, tmux=Tmux("unused"), environ={})
    data = {"format": FORMAT, "version": VERSION, **exchange.export_tables(store)}
    before = exchange.export_tables(store)
    with pytest.raises(RoostError, match="already used"):
        transfer.import_(app, data)  # the same agents twice
    assert exchange.export_tables(store) == before
    fresh = App(paths=Paths(tmp_path), store=Store.open(tmp_path / "new.db"),
                tmux=Tmux("unused"), environ={})
    assert transfer.import_(fresh, transfer.export(app)) == 2
    assert transfer.export(fresh) == transfer.export(app)
