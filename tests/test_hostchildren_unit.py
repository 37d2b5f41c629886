"""Children on a host, the parts without a host: what a stream line means (hosts/childrules.py)
and how a line becomes a stored notice (hosts/children.on_line) on the fake tmux, with the
reconnect's replay of lines already read (nothing doubled)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_app import fake_app, fake_tmux, manual_clock

from roost.hosts import children as hostchildren
from roost.hosts.childrules import change
from roost.ops import lifecycle
from roost.store import hostchildren as rows
from roost.store import orchestration as queue


@pytest.mark.parametrize(
    ("event", "kind", "detail"),
    [
        pytest.param({"status": "idle", "previous": "working"}, "finished", None, id="turn-end"),
        pytest.param({"status": "idle", "previous": "starting"}, None, None, id="idle-at-start"),
        pytest.param({"status": "waiting", "previous": "working"}, "waiting", None, id="waiting"),
        pytest.param({"status": "exited", "exit_code": 2}, "exited", "exit code 2", id="exit"),
        pytest.param(
            {"status": "failed", "previous": "working", "reason": "crash loop"},
            "failed",
            "crash loop",
            id="failed",
        ),
        pytest.param({"status": "working", "previous": "idle"}, None, None, id="working"),
    ],
)
def test_a_status_line_means_what_a_local_child_s_change_means(
    event: dict[str, Any], kind: str | None, detail: str | None
) -> None:
    found = change({"kind": "status", "name": "kid", **event})
    assert found is not None and (found.kind, found.detail) == (kind, detail)
    assert found.status == event["status"]


def test_a_line_that_is_no_status_change_means_nothing() -> None:
    assert change({"kind": "bell", "name": "kid"}) is None
    assert change({"kind": "status", "name": "kid"}) is None


def test_a_child_s_lines_become_one_notice_each_even_when_read_twice(tmp_path: Path) -> None:
    app = fake_app(tmp_path, fake_tmux(), manual_clock(), {})
    lead = lifecycle.spawn(
        app, "lead", provider="command", cwd=str(app.paths.home), args=("sh",),
        place=lifecycle.Place(detached=True),
    ).agent  # fmt: skip
    with app.store.write() as c:
        rows.insert(c, rows.HostChild(lead.id, "h1", "kid", "rid", None, "T"), seq=10)
    lines = [
        {"seq": 11, "kind": "status", "name": "kid", "status": "idle", "previous": "starting"},
        {"seq": 12, "kind": "status", "name": "other", "status": "idle", "previous": "working"},
        {"seq": 13, "kind": "status", "name": "kid", "status": "working", "previous": "idle"},
        {"seq": 14, "kind": "status", "name": "kid", "status": "exited", "previous": "working",
         "exit_code": 0},
    ]  # fmt: skip
    told = [hostchildren.on_line(app, "h1", e) for e in lines]
    assert told == [None, None, None, lead.id]
    again = [hostchildren.on_line(app, "h1", e) for e in lines]  # a reconnect's replay
    assert again == [None, None, None, None]
    with app.store.write() as c:
        notices = queue.pending(c, lead.id)
        child = rows.get(c, "h1", "kid")
        cursor = rows.cursor(c, "h1")
    assert [(n.child_name, n.status, n.text) for n in notices] == [
        ("h1:kid", "exited", "[roost] h1:kid exited: exit code 0")
    ]
    assert child is not None and child.status == "exited" and cursor == 14


def test_a_child_on_a_host_is_in_scope_as_a_local_child_is(tmp_path: Path) -> None:
    """Its parent and the parent's own parent reach it; a stranger does not; a person's client
    reads it, and writes only with --allow-write (core/scope.py's rules, unchanged)."""
    from roost.core.errors import RoostError
    from roost.core.scope import Caller
    from roost.hosts import operations as hosts
    from roost.ops import orchestrate

    app = fake_app(tmp_path, fake_tmux(), manual_clock(), {})
    hosts.add(app, "h1", "h1", "roost", {})

    def spawn(name: str, parent: str | None = None) -> str:
        place = lifecycle.Place(detached=True, orchestrated_by=parent)
        return lifecycle.spawn(
            app, name, provider="command", cwd=str(app.paths.home), args=("sh",), place=place
        ).agent.id

    lead, stranger = spawn("lead"), spawn("stranger")
    mid = spawn("mid", parent="lead")
    with app.store.write() as c:
        rows.insert(c, rows.HostChild(mid, "h1", "kid", "rid", None, "T"), seq=0)
    members = orchestrate.members(app.store.agents())

    def reach(caller: Caller, write: bool = True) -> str:
        try:
            found = hostchildren.target(app, caller, "h1:kid", members, write)
        except RoostError as exc:
            return str(exc)
        assert found is not None
        return found[1].name

    assert reach(Caller(mid)) == "kid" and reach(Caller(lead)) == "kid"
    assert reach(Caller(stranger)).startswith("h1:kid is not in your subtree")
    assert reach(Caller(None, False), write=False) == "kid"
    assert reach(Caller(None, False)).startswith("roost mcp is read-only")
    assert reach(Caller(None, True)) == "kid"
    assert hostchildren.target(app, Caller(mid), "kid", members, True) is None  # a plain name
