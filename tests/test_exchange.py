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
from roost.ops.root import ON_STATUS
from roost.providers.traits import SESSION_IDS as PROVIDERS
from roost.store import db, exchange, resumes
from roost.store import usage as usage
from roost.store import workspace as wsdb
from roost.store.db import Store
from roost.system.config import Paths
from roost.tmux.client import Tmux

Doc = dict[str, Any]


def uid(n: int) -> str:
    """A roost id (a UUID), readable in failures by its last digits."""
    return f"00000000-0000-4000-8000-{n:012d}"


# agents a, b, c; tab t; an id nobody has; claude session ids
A, B, C, T, ZZ = uid(1), uid(2), uid(3), uid(20), uid(99)
SA, S1, S2, S_OLD = uid(101), uid(102), uid(103), uid(104)
NAMES = {"a": A, "b": B, "c": C}


def record(name: str, **fields: Any) -> dict[str, Any]:
    agent = Agent(
        id=NAMES[name],
        name=name,
        provider="claude",
        cwd="/w",
        home=name,
        created_at="2026-01-01T00:00:00+00:00",
        **fields,
    )
    row = {f: getattr(agent, f) for f in AGENT_FIELDS}
    row["args"] = list(agent.args)
    row["session_history"] = [agent.provider_session_id] if agent.provider_session_id else []
    return row


def doc() -> Doc:
    """A valid export: a and b tiled in tab t, c parked under a, c pinned."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "settings": {"dangerous": "0"},
        "tabs": [
            {
                "id": T,
                "name": "t",
                "position": 0,
                "layout": split("v", leaf(A), leaf(B)),
                "focus": B,
            }
        ],
        "agents": [
            record("a", placement="tile", tab_id=T, provider_session_id=SA),
            record("b", placement="tile", tab_id=T),
            record("c", placement="detached", linked_parent=A),
        ],
        "pins": [C],
    }


def test_the_format_carries_every_stored_field() -> None:
    assert AGENT_FIELDS == db.AGENT_FIELDS


def test_a_valid_export_passes() -> None:
    validate(doc(), Taken(), PROVIDERS)


@pytest.mark.parametrize(
    "source", ["hook", "screen", "title", "process", "store", "send", "parent"]
)
def test_every_status_source_roost_stores_imports(source: str) -> None:
    """An export made right after a send (source `send` until the next look), or while a
    title showed the work, imports (it was refused before)."""
    validate(agent_field(1, status="working", status_source=source), Taken(), PROVIDERS)


def edit(change: Callable[[Doc], object]) -> Doc:
    d = copy.deepcopy(doc())
    change(d)
    return d


REFUSALS = [
    pytest.param(["not", "a", "dict"], "not a roost workspace export", id="not-an-object"),
    pytest.param(edit(lambda d: d.update(format="other")), "not a roost workspace", id="format"),
    pytest.param(edit(lambda d: d.update(version=2)), "unsupported export version 2", id="version"),
    pytest.param(
        edit(lambda d: d.update(settings=[])), "'settings' must be a dict", id="settings-type"
    ),
    pytest.param(
        edit(lambda d: d["agents"][0].pop("status")),
        "must have exactly the fields",
        id="missing-field",
    ),
    pytest.param(
        edit(lambda d: d["agents"][0].update(extra=1)),
        "must have exactly the fields",
        id="extra-field",
    ),
    pytest.param(
        edit(lambda d: d["agents"][1].update(id=A)),
        f"agents[1].id: {A!r} is already used",
        id="duplicate-id",
    ),
    pytest.param(
        edit(lambda d: d["agents"][0].update(name="a b")),
        "agents[0].name: 'a b' has ' ': a name has only ASCII",
        id="bad-name",
    ),
    pytest.param(
        edit(lambda d: d["agents"][1].update(name="a")),
        "agent name 'a' already exists",
        id="duplicate-name",
    ),
    pytest.param(
        edit(lambda d: d["agents"][0].update(provider="vim")),
        "unknown provider 'vim'",
        id="provider",
    ),
    pytest.param(
        edit(lambda d: d["agents"][2].update(placement="floating")),
        "agents[2].placement: must be one of tile, detached, buried",
        id="placement",
    ),
    pytest.param(
        edit(lambda d: d["agents"][0].update(args="--x")),
        "args must be a list of strings",
        id="args",
    ),
    pytest.param(
        edit(lambda d: d["agents"][1].update(provider_session_id=SA)),
        f"provider session {SA} already belongs to another agent",
        id="shared-session",
    ),
    pytest.param(
        edit(lambda d: d["tabs"][0].update(name="")), "bad or existing tab name", id="tab-name"
    ),
    pytest.param(
        edit(lambda d: d["tabs"][0].update(position="0")),
        "tabs[0].position: must be a whole number",
        id="tab-position",
    ),
    pytest.param(
        edit(lambda d: d["tabs"][0].update(layout={"leaf": 3})), "tabs[0].layout", id="tab-layout"
    ),
    pytest.param(
        edit(lambda d: d["tabs"][0].update(layout=leaf(ZZ), focus=None)),
        f"tile {ZZ} is not an agent of this file",
        id="tile-unknown",
    ),
    pytest.param(
        edit(lambda d: d["tabs"][0].update(focus=C)), "focus must be one of its tiles", id="focus"
    ),
    pytest.param(
        edit(lambda d: d["agents"][2].update(tab_id=ZZ)),
        f"tab_id {ZZ} is not a tab of this file",
        id="tab-unknown",
    ),
    pytest.param(
        edit(lambda d: d["agents"][2].update(orchestration_root=ZZ)),
        f"orchestration_root {ZZ} is not an agent of this file",
        id="link-outside",
    ),
    pytest.param(
        edit(lambda d: d.update(pins=[ZZ])), f"pin {ZZ!r} is not an agent", id="pin-unknown"
    ),
    pytest.param(edit(lambda d: d.update(pins=[C, C])), "pinned twice", id="pin-twice"),
]


def nested(depth: int) -> dict[str, Any]:
    """A tile tree `depth` splits deep (its leaves need not be agents: depth is checked first)."""
    tree: dict[str, Any] = {"leaf": A}
    for n in range(depth):
        tree = {"split": "v", "ratio": 0.5, "a": tree, "b": {"leaf": uid(1000 + n)}}
    return tree


def agent_field(i: int, **change: Any) -> Doc:
    return edit(lambda d: d["agents"][i].update(change))


# Hostile files (issue 9, item 4): every field is checked with the CLI's rules, and the refusal
# names the field. The first rows are the attacks that worked.
HOSTILE = [
    pytest.param(
        agent_field(2, id="../../victim"),
        "agents[2].id: '../../victim' is not a roost id (a UUID)",
        id="id-path",
    ),
    pytest.param(
        agent_field(0, provider_session_id="--dangerously-skip-permissions"),
        "agents[0].provider_session_id: '--dangerously-skip-permissions' starts with '-'",
        id="session-flag",
    ),
    pytest.param(
        edit(lambda d: d.update(settings={"dangerous": 1})),
        'settings.dangerous: must be "0" or "1"',
        id="settings-number",
    ),
    pytest.param(
        edit(lambda d: d.update(settings={"dangerous": True})),
        'settings.dangerous: must be "0" or "1"',
        id="settings-bool",
    ),
    pytest.param(
        edit(lambda d: d.update(settings={"dangerous": "yes"})),
        'settings.dangerous: must be "0" or "1"',
        id="settings-word",
    ),
    pytest.param(
        edit(lambda d: d.update(settings={"editor": "vim"})),
        "settings.editor: is not a setting roost knows",
        id="settings-unknown",
    ),
    pytest.param(
        agent_field(1, restart_policy="always"),
        "agents[1].restart_policy: must be one of never, on-failure",
        id="restart-policy",
    ),
    pytest.param(
        agent_field(0, dangerous="1"),
        "agents[0].dangerous: must be true or false",
        id="dangerous-string",
    ),
    pytest.param(
        agent_field(0, dangerous=1),
        "agents[0].dangerous: must be true or false",
        id="dangerous-number",
    ),
    pytest.param(
        agent_field(0, conversation_seen=None),
        "agents[0].conversation_seen: must be true or false",
        id="seen-null",
    ),
    pytest.param(agent_field(0, home="../x"), "agents[0].home: '../x' has '.'", id="home-path"),
    pytest.param(agent_field(0, home="w#(touch x)"), "agents[0].home:", id="home-format"),
    pytest.param(agent_field(0, name=7), "agents[0].name: must be a string", id="name-number"),
    pytest.param(
        agent_field(0, cwd="w"), "agents[0].cwd: 'w' is not an absolute path", id="cwd-relative"
    ),
    pytest.param(
        agent_field(0, cwd="/w\nx"), "agents[0].cwd: has a newline or NUL", id="cwd-newline"
    ),
    pytest.param(agent_field(0, cwd="/w\x00"), "agents[0].cwd: has a newline or NUL", id="cwd-nul"),
    pytest.param(agent_field(0, cwd=["/w"]), "agents[0].cwd: must be a string", id="cwd-list"),
    pytest.param(
        agent_field(0, cwd="/w/../etc"),
        "agents[0].cwd: '/w/../etc' is not a normalized",
        id="cwd-dots",
    ),
    # POSIX keeps a leading `//` (normpath too): no path spawn stores starts with it
    pytest.param(
        agent_field(0, cwd="//w"), "agents[0].cwd: '//w' is not a normalized", id="cwd-double-slash"
    ),
    pytest.param(
        agent_field(0, transcript_path="t.jsonl"),
        "agents[0].transcript_path: 't.jsonl' is not an absolute path",
        id="transcript-relative",
    ),
    pytest.param(
        agent_field(0, provider_session_id="s1"),
        "agents[0].provider_session_id: 's1' is not a claude session id (a UUID)",
        id="claude-session-shape",
    ),
    pytest.param(
        edit(lambda d: d["agents"][1].update(provider="codex", provider_session_id="-c x")),
        "agents[1].provider_session_id: '-c x' starts with '-'",
        id="codex-flag",
    ),
    pytest.param(
        edit(lambda d: d["agents"][1].update(provider="gemini", provider_session_id="a b")),
        "agents[1].provider_session_id: 'a b' has a character",
        id="gemini-space",
    ),
    pytest.param(
        edit(
            lambda d: d["agents"][1].update(
                provider="aider", provider_session_id=SA, session_history=[SA]
            )
        ),
        "agents[1].provider_session_id: aider has no session ids",
        id="aider-session",
    ),
    pytest.param(
        agent_field(0, session_history=[SA, "--x"]),
        "agents[0].session_history[1]: '--x' starts with '-'",
        id="lineage-flag",
    ),
    pytest.param(
        agent_field(0, provider_session_id=7),
        "agents[0].provider_session_id: a session id must be a string",
        id="session-number",
    ),
    pytest.param(
        agent_field(1, intent="zombie"),
        "agents[1].intent: must be one of running, stopped, hibernated",
        id="intent",
    ),
    pytest.param(
        agent_field(1, status="\x1b[2Jpwned"),
        "agents[1].status: must be one of",
        id="status-escape",
    ),
    pytest.param(
        agent_field(1, status_source="gut"),
        "agents[1].status_source: must be one of",
        id="status-source",
    ),
    pytest.param(
        agent_field(2, placement="buried", buried_side="c"),
        "agents[2].buried_side: must be one of a, b",
        id="buried-side",
    ),
    pytest.param(
        agent_field(2, placement="buried", buried_direction="x"),
        "agents[2].buried_direction: must be one of v, h",
        id="buried-direction",
    ),
    pytest.param(
        agent_field(2, buried_ratio="0.5"),
        "agents[2].buried_ratio: must be a number in [0.1, 0.9]",
        id="ratio-string",
    ),
    pytest.param(
        agent_field(2, buried_ratio=float("nan")),
        "agents[2].buried_ratio: must be a number in [0.1, 0.9]",
        id="ratio-nan",
    ),
    pytest.param(
        agent_field(2, buried_ratio=True),
        "agents[2].buried_ratio: must be a number",
        id="ratio-bool",
    ),
    pytest.param(
        agent_field(0, launches=True),
        "agents[0].launches: must be a whole number",
        id="launches-bool",
    ),
    pytest.param(
        agent_field(0, launches="3"),
        "agents[0].launches: must be a whole number",
        id="launches-string",
    ),
    pytest.param(
        agent_field(0, launches=-1),
        "agents[0].launches: must be a whole number",
        id="launches-negative",
    ),
    pytest.param(
        agent_field(0, hook_offset=2**70),
        "agents[0].hook_offset: must be a whole number",
        id="offset-huge",
    ),
    pytest.param(
        agent_field(0, last_exit=1.5),
        "agents[0].last_exit: must be a whole number",
        id="exit-float",
    ),
    pytest.param(
        agent_field(0, created_at="yesterday"),
        "agents[0].created_at: 'yesterday' is not an ISO 8601 time",
        id="date-word",
    ),
    pytest.param(
        agent_field(0, started_at="2026-01-01T00:00:00"),
        "agents[0].started_at: '2026-01-01T00:00:00' has no time zone",
        id="date-naive",
    ),
    pytest.param(
        agent_field(0, last_active_at=0),
        "agents[0].last_active_at: must be a string",
        id="date-number",
    ),
    pytest.param(
        agent_field(0, last_error="\x1b]52;c;cHduZWQ=\x07"),
        "agents[0].last_error: has a control character",
        id="error-escape",
    ),
    pytest.param(
        agent_field(0, args=["--x", "a\x00b"]), "agents[0].args[1]: has a NUL", id="args-nul"
    ),
    pytest.param(
        agent_field(2, linked_parent=["x"]),
        "agents[2].linked_parent: must be a string or null",
        id="link-list",
    ),
    pytest.param(
        agent_field(2, linked_parent="../a"),
        "agents[2].linked_parent: '../a' is not a roost id",
        id="link-shape",
    ),
    pytest.param(
        edit(lambda d: d["agents"].__setitem__(1, "b")),
        "agents[1]: must be an object",
        id="agent-not-object",
    ),
    pytest.param(
        edit(lambda d: d["tabs"][0].update(id="tab-t")),
        "tabs[0].id: 'tab-t' is not a roost id",
        id="tab-id",
    ),
    pytest.param(
        edit(lambda d: d["tabs"].append(dict(d["tabs"][0], layout=None, focus=None, name="u"))),
        f"tabs[1].id: {T!r} is already used",
        id="tab-id-twice",
    ),
    pytest.param(
        edit(
            lambda d: d["tabs"].append(
                {"id": ZZ, "name": "t", "position": 1, "layout": None, "focus": None}
            )
        ),
        "tabs[1].name: tab name 't' is used twice",
        id="tab-name-twice",
    ),
    pytest.param(
        edit(lambda d: d["tabs"][0].update(position=True)),
        "tabs[0].position: must be a whole number",
        id="tab-position-bool",
    ),
    pytest.param(
        edit(lambda d: d["tabs"][0].update(position=2**63)),
        "tabs[0].position: must be a whole number",
        id="tab-position-huge",
    ),
    pytest.param(
        edit(lambda d: d["tabs"][0].update(layout=nested(300), focus=None)),
        "tabs[0].layout: a tile tree is at most 255 splits deep",
        id="tree-deep",
    ),
    pytest.param(
        edit(lambda d: d["tabs"][0].update(focus=["x"])),
        "tabs[0].focus: must be a string or null",
        id="focus-list",
    ),
    pytest.param(
        edit(lambda d: d.update(pins=[{"id": C}])), "pins[0]: must be a roost id", id="pin-object"
    ),
    pytest.param(
        edit(lambda d: d.update(policies={"on_limit": [], "budgets": [], "extra": []})),
        "'policies' must be an object with on_limit and budgets",
        id="policies-extra-key",
    ),
    pytest.param(
        edit(
            lambda d: d.update(
                policies={"on_limit": [{"scope": "agent", "target": ZZ, "policy": "resume"}]}
            )
        ),
        "policies.on_limit[0]: " + repr(ZZ) + " is no agent of this file",
        id="policy-of-a-stranger",
    ),
    pytest.param(
        edit(
            lambda d: d.update(
                policies={"on_limit": [{"scope": "tab", "target": T, "policy": "now"}]}
            )
        ),
        "policies.on_limit[0].policy: must be one of off, resume",
        id="policy-unknown",
    ),
    pytest.param(
        edit(
            lambda d: d.update(
                policies={
                    "budgets": [
                        {
                            "agent": A,
                            "tokens": None,
                            "dollars": -1,
                            "tree_tokens": None,
                            "tree_dollars": None,
                            "parked": None,
                        }
                    ]
                }
            )
        ),
        "policies.budgets[0].dollars: must be a number of dollars from 0",
        id="budget-negative",
    ),
    pytest.param(
        edit(lambda d: d.update(policies={"budgets": [{"agent": A, "tokens": 5}]})),
        "policies.budgets[0] must have agent, tokens, dollars",
        id="budget-short",
    ),
]


@pytest.mark.parametrize(("data", "says"), HOSTILE)
def test_a_hostile_export_is_refused_naming_the_field(data: Any, says: str) -> None:
    with pytest.raises(RoostError) as refused:
        validate(data, Taken(), PROVIDERS)
    assert str(refused.value).startswith("import refused, nothing changed: ")
    assert says in str(refused.value) and refused.value.code == 2, str(refused.value)


def test_a_wide_tree_is_refused_by_its_size() -> None:
    """Depth is bounded, and so is the number of tiles a tab can hold."""

    def row(n: int) -> dict[str, Any]:  # a balanced tree of n leaves
        if n == 1:
            return {"leaf": uid(5000 + row.counter.__next__())}  # type: ignore[attr-defined]
        return {"split": "h", "ratio": 0.5, "a": row(n // 2), "b": row(n - n // 2)}

    row.counter = iter(range(10_000))  # type: ignore[attr-defined]
    data = edit(lambda d: d["tabs"][0].update(layout=row(300), focus=None))
    with pytest.raises(RoostError, match=r"tabs\[0\].layout: a tab holds at most 256 tiles"):
        validate(data, Taken(), PROVIDERS)


def test_every_agent_field_has_a_check() -> None:
    from roost.core.exchange import CHECKED_TOGETHER, FIELD_CHECKS

    assert set(FIELD_CHECKS) | set(CHECKED_TOGETHER) == set(AGENT_FIELDS)
    assert not set(FIELD_CHECKS) & set(CHECKED_TOGETHER)


def test_the_valid_shapes_of_each_provider_pass() -> None:
    data = edit(
        lambda d: d["agents"][1].update(
            provider="codex",
            provider_session_id="0199a1b2-c3d4-7e5f",
            session_history=["0199a1b2-c3d4-7e5f"],
        )
    )
    data["agents"][2].update(
        provider="command",
        args=["sh", "-c", "true"],
        last_exit=-15,
        started_at="2026-01-01T00:00:00Z",
        buried_ratio=0.5,
        last_error="crash loop: 4 failed starts\n\tlast exit 1",
    )
    validate(data, Taken(), PROVIDERS)


@pytest.mark.parametrize(("data", "says"), REFUSALS)
def test_a_bad_export_is_refused_with_the_first_problem(data: Any, says: str) -> None:
    with pytest.raises(RoostError) as refused:
        validate(data, Taken(), PROVIDERS)
    assert str(refused.value).startswith("import refused, nothing changed: ")
    assert says in str(refused.value) and refused.value.code == 2


@pytest.mark.parametrize(
    ("taken", "says"),
    [
        pytest.param(Taken(ids=frozenset({B})), f"agents[1].id: {B!r} is already used", id="id"),
        pytest.param(Taken(names=frozenset({"c"})), "agent name 'c' already exists", id="name"),
        pytest.param(Taken(tabs=frozenset({"t"})), "bad or existing tab name 't'", id="tab"),
        pytest.param(
            Taken(tab_ids=frozenset({T})), f"tabs[0].id: {T!r} is already used", id="tab-id"
        ),
        pytest.param(
            Taken(sessions=frozenset({SA})), f"provider session {SA} already belongs", id="session"
        ),
    ],
)
def test_what_the_database_holds_is_not_reused(taken: Taken, says: str) -> None:
    with pytest.raises(RoostError, match="import refused") as refused:
        validate(doc(), taken, PROVIDERS)
    assert says in str(refused.value)


def test_an_agent_may_list_its_own_current_session_in_its_lineage() -> None:
    data = edit(lambda d: d["agents"][0].update(session_history=[S_OLD, SA]))
    validate(data, Taken(), PROVIDERS)


# ---- the rows, against a real SQLite file -------------------------------------------------
def populated(path: Path) -> Store:
    store = Store.open(path)
    store.insert(
        Agent(
            id=A,
            name="a",
            provider="claude",
            cwd="/w",
            home="a",
            args=("--x", "y z"),
            dangerous=True,
            provider_session_id=S1,
            created_at="2026-01-01T00:00:00+00:00",
            conversation_seen=True,
        )
    )
    store.set_provider_session_id(A, S2)  # lineage s1, s2
    store.insert(
        Agent(
            id=B,
            name="b",
            provider="codex",
            cwd="/w",
            home="b",
            created_at="2026-01-01T00:00:01+00:00",
            linked_parent=A,
        )
    )
    with store.write() as c:
        wsdb.tile(c, A, wsdb.ensure_tab(c, "main"))
        wsdb.tile(c, B, wsdb.ensure_tab(c, "side"), direction="h")
        wsdb.bury(c, B)
        wsdb.pin(c, B)
        wsdb.set_setting(c, "dangerous", "1")
        resumes.set_policy(c, "agent", A, "resume")
        resumes.set_policy(c, "tab", wsdb.require_tab(c, "main").id, "off")
        resumes.set_policy(c, "agent", uid(98), "resume")  # a forgotten agent's: not exported
        usage.set_budget(c, A, False, 1000, 2.5)
        usage.set_budget(c, A, True, None, 40.0)
        usage.set_parked(c, [B], "over its budget of 10 tokens")
    return store


def import_into(store: Store, data: Doc) -> None:
    with store.write() as c:
        validate(data, exchange.taken(c), PROVIDERS)
        exchange.insert_tables(c, data, "2026-01-02T00:00:00+00:00")


def test_export_then_import_into_a_fresh_database_gives_the_same_rows(tmp_path: Path) -> None:
    source = populated(tmp_path / "a.db")
    data = {"format": FORMAT, "version": VERSION, **exchange.export_tables(source)}
    assert [a["session_history"] for a in data["agents"]] == [[S1, S2], []]
    assert data["pins"] == [B] and data["settings"] == {"dangerous": "1"}
    main = next(t["id"] for t in data["tabs"] if t["name"] == "main")
    assert data["policies"] == {
        "on_limit": [
            {"scope": "agent", "target": A, "policy": "resume"},
            {"scope": "tab", "target": main, "policy": "off"},
        ],
        "budgets": [
            {
                "agent": A,
                "tokens": 1000,
                "dollars": 2.5,
                "tree_tokens": None,
                "tree_dollars": 40.0,
                "parked": None,
            },
            dict.fromkeys(("tokens", "dollars", "tree_tokens", "tree_dollars"), None)
            | {"agent": B, "parked": "over its budget of 10 tokens"},
        ],
    }
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
        ids=frozenset({A, B}),
        names=frozenset({"a", "b"}),
        tabs=frozenset({"main", "side"}),
        sessions=frozenset({S1, S2}),
    )


def test_a_refused_import_writes_nothing(tmp_path: Path) -> None:
    store = populated(tmp_path / "r.db")
    app = App(
        paths=Paths(tmp_path), store=store, tmux=Tmux("unused"), environ={}, on_status=ON_STATUS
    )
    data = {"format": FORMAT, "version": VERSION, **exchange.export_tables(store)}
    before = exchange.export_tables(store)
    with pytest.raises(RoostError, match="already used"):
        transfer.import_(app, data)  # the same agents twice
    assert exchange.export_tables(store) == before
    fresh = App(
        paths=Paths(tmp_path),
        store=Store.open(tmp_path / "new.db"),
        tmux=Tmux("unused"),
        environ={},
        on_status=ON_STATUS,
    )
    # the person's own file, trusted: exactly as it was (tests/test_import_trust.py: untrusted)
    assert transfer.import_(fresh, transfer.export(app), allow_dangerous=True) == (2, [])
    assert transfer.export(fresh) == transfer.export(app)
