"""What users read (core/present.py): the operations' messages, `roost watch`'s changes and lines,
tabs and events. Pure: no tmux, no store, no clock."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import cast

import pytest

from roost.core import present
from roost.core.events import Event, EventKind
from roost.core.model import Agent
from roost.core.observation import Observation


def seen(
    name: str,
    status: str | None,
    exit_code: int | None = None,
    since: str | None = "2026-11-29T12:00:00+00:00",
    source: str = "screen",
) -> Observation:
    record = Agent(f"id-{name}", name, "codex", "/w", name)
    return Observation(
        record,
        None,
        status in ("idle", "working"),
        "running",
        None,
        exit_code,
        status,
        source,
        since,
    )


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        pytest.param(
            present.spawned("api", "codex", 42, "team", first_start=True),
            "spawned api (codex, pid 42) in home team; attach: roost attach api",
            id="spawned",
        ),
        pytest.param(
            present.spawned("api", "codex", 42, "team", first_start=False),
            "woke api (codex, pid 42) in home team; attach: roost attach api",
            id="spawn-wakes-a-stopped-one",
        ),
        pytest.param(
            present.woke("api", True, 42, "api"), "woke api (pid 42) in home api", id="woke"
        ),
        pytest.param(
            present.woke("api", False, 42, "api"),
            "api is already running (pid 42)",
            id="already-running",
        ),
        pytest.param(
            present.stopped("api", 3),
            "stopped api (3 processes); wake: roost wake api",
            id="stopped",
        ),
        pytest.param(present.stopped("api", 0), "api was not running", id="not-running"),
        pytest.param(present.killed_tree(["lead", "helper"]), "killed lead, helper", id="tree"),
        pytest.param(present.removed("api"), "removed api", id="removed"),
        pytest.param(
            present.hibernates("api"),
            "api hibernates; roost wake api brings it back",
            id="hibernates",
        ),
        pytest.param(present.parked(["a", "b"]), "parked a, b", id="parked"),
        pytest.param(
            present.placed("api", "main", 7), "api is a tile of main (pid 7)", id="placed"
        ),
        pytest.param(present.buried("api"), "buried api; revive: roost unbury api", id="buried"),
        pytest.param(present.unburied("api", "main"), "api is back in tab main", id="unburied"),
        pytest.param(
            present.unburied("api", None),
            "api is parked (its tab is gone); roost place api --tab TAB",
            id="unburied-tab-gone",
        ),
        pytest.param(present.pinned("api", True), "pinned api", id="pinned"),
        pytest.param(present.pinned("api", False), "api was pinned already", id="pinned-already"),
        pytest.param(present.unpinned("api", True), "unpinned api", id="unpinned"),
        pytest.param(present.unpinned("api", False), "api was not pinned", id="not-pinned"),
        pytest.param(present.linked("t", "api"), "t is linked under api", id="linked"),
        pytest.param(present.linked("t", None), "t unlinked", id="unlinked"),
        pytest.param(
            present.delivered("api", "hook"), "delivered to api (confirmed by hook)", id="delivered"
        ),
        pytest.param(
            present.not_delivered("api", "its pane is dead"),
            "not delivered to api: its pane is dead",
            id="not-delivered",
        ),
        pytest.param(
            present.restart_policy_set("api", "on-failure"), "api: restart on-failure", id="policy"
        ),
        pytest.param(present.reloaded(["a", "b"]), "restarted a, b", id="reloaded"),
        pytest.param(
            present.reloaded([]), "no live agent runs: nothing restarted", id="nothing-reloaded"
        ),
        pytest.param(
            present.imported(2), "imported 2 agents; roost restore starts the tiles", id="imported"
        ),
        pytest.param(present.tab_created("review"), "tab review created", id="tab-new"),
        pytest.param(present.tab_renamed("a", "b"), "tab a is now b", id="tab-rename"),
        pytest.param(
            present.tab_closed("ui", ["x", "y"]), "tab ui closed; parked x, y", id="tab-close"
        ),
        pytest.param(present.tab_closed("ui", []), "tab ui closed", id="tab-close-empty"),
        pytest.param(
            present.layout_edited("api", "main", "next"),
            "api in tab main: moved right",
            id="layout-next",
        ),
        pytest.param(
            present.layout_edited("api", "main", "close"),
            "buried api; revive: roost unbury api",
            id="layout-close-buries",
        ),
    ],
)
def test_operation_messages_are_the_clis_words(message: str, expected: str) -> None:
    assert message == expected


def test_gc_lists_each_removal_or_says_there_is_none() -> None:
    found = [("old", "buried, idle since 2026-01-01"), ("stale", "owned by nothing")]
    assert present.collected(found, dry_run=True) == (
        "would remove old: buried, idle since 2026-01-01\nwould remove stale: owned by nothing\n"
    )
    assert present.collected(found[:1], dry_run=False).startswith("removed old: ")
    assert present.collected([], dry_run=False) == "nothing to remove\n"


def test_tabs_as_lines_and_as_json() -> None:
    found = [("main", ["a", "b"], "b"), ("empty", [], None)]
    assert present.tabs(found, as_json=False) == "main: a | b\nempty: (empty)\n"
    assert json.loads(present.tabs(found, as_json=True)) == [
        {"name": "main", "tiles": ["a", "b"], "focus": "b"},
        {"name": "empty", "tiles": [], "focus": None},
    ]
    assert present.tabs([], as_json=False) == ""


def test_event_lines_for_the_cli_and_the_tui() -> None:
    noon = "2026-11-29T11:59:00+00:00"
    event = Event(3, "id-api", "api", noon, "status", {"status": "idle", "previous": "working"})
    assert (
        present.event_line(event)
        == "2026-11-29 11:59:00  api  status  status=idle previous=working"
    )
    woke = Event(1, "id-api", "api", "T", cast(EventKind, "woke"), {})  # an older version's
    assert present.event_line(woke) == "T  api  woke"
    assert present.event_brief(event) == "11:59:00 status idle"
    exited = Event(4, "id-api", "api", noon, "exited", {"exit_code": 2})
    assert present.event_brief(exited) == "11:59:00 exited 2"
    assert present.event_brief(Event(5, "id-api", "api", noon, "started", {})) == "11:59:00 started"


INDIA = timezone(timedelta(hours=5, minutes=30))  # no DST: the same offset any day


def test_times_for_people_are_in_their_zone_and_json_keeps_iso_with_offset() -> None:
    event = Event(3, "id-api", "api", "2026-11-29T23:59:00.125+00:00", cast(EventKind, "woke"), {})
    assert present.event_line(event, INDIA) == "2026-11-30 05:29:00  api  woke"
    assert present.event_brief(event, INDIA) == "05:29:00 woke"
    o = seen("a", "idle")
    assert (
        present.watch_line(o, None, as_json=False, zone=INDIA)
        == "2026-11-29 17:30:00  a: idle (screen)"
    )
    at = json.loads(present.watch_line(o, None, as_json=True, zone=INDIA))["at"]
    assert datetime.fromisoformat(at).utcoffset() == timedelta(0)  # as stored: ISO, offset


@pytest.mark.parametrize(
    ("status", "exit_code", "text"),
    [
        # issue 13: a crash and a clean exit read differently; a user's kill reads stopped
        pytest.param("exited", 1, "crashed (1)", id="crashed"),
        pytest.param("exited", 0, "exited", id="exited-cleanly"),
        pytest.param("exited", None, "exited", id="exited-no-code"),
        pytest.param("stopped", 137, "stopped", id="killed-by-the-user"),
        pytest.param("idle", None, "idle", id="idle"),
        pytest.param(None, None, "unknown", id="unknown"),
    ],
)
def test_status_texts(status: str | None, exit_code: int | None, text: str) -> None:
    assert present.status_text(seen("a", status, exit_code=exit_code)) == text


@pytest.mark.parametrize(("exit_code", "crashed"), [(0, False), (1, True), (139, True)])
def test_the_json_says_whether_an_exit_was_a_crash(exit_code: int, crashed: bool) -> None:
    assert present.agent_json(seen("a", "exited", exit_code=exit_code))["crashed"] is crashed


# ---- roost watch ---------------------------------------------------------------------------------
def status_event(agent: str, previous: str | None, status: str, at: str) -> dict[str, object]:
    return {
        "agent_id": f"id-{agent}",
        "agent": agent,
        "kind": "status",
        "previous": previous,
        "status": status,
        "at": at,
        "source": "hook",
    }


def test_watch_prints_every_recorded_status_change_in_the_logs_order() -> None:
    turns = [
        status_event("a", "idle", "working", "T1"),
        status_event("b", None, "idle", "T2"),
        status_event("a", "working", "idle", "T3"),
        status_event("a", "idle", "working", "T4"),
    ]
    assert present.watch_news(turns, {}) == turns


def test_watch_skips_source_only_changes_and_what_its_first_look_showed() -> None:
    events = [
        status_event("a", "idle", "working", "T1"),
        status_event("a", "working", "idle", "T2"),
        status_event("a", "idle", "idle", "T3"),
        status_event("b", "idle", "working", "T3"),
    ]
    assert present.watch_news(events, {"id-a": "T2", "id-b": None}) == [events[3]]


def test_watch_lines_for_scripts_and_for_people() -> None:
    o = seen("a", "exited", exit_code=1, source="pane")
    assert json.loads(present.watch_line(o, "working", as_json=True)) == {
        "name": "a",
        "status": "exited",
        "previous": "working",
        "source": "pane",
        "exit_code": 1,
        "at": "2026-11-29T12:00:00+00:00",
        "reason": None,
        "crashed": True,
    }
    assert (
        present.watch_line(o, None, as_json=False) == "2026-11-29 12:00:00  a: crashed (1) (pane)"
    )
    clean = seen("a", "exited", exit_code=0, source="pane")
    assert present.watch_line(clean, None, as_json=False) == "2026-11-29 12:00:00  a: exited (pane)"
    assert (
        present.watch_line(seen("a", "idle", since=None), None, as_json=False)
        == "  a: idle (screen)"
    )


def test_watch_prints_an_event_as_it_prints_a_look() -> None:
    event = {
        **status_event("a", "working", "exited", "2026-11-29T12:00:00+00:00"),
        "source": "pane",
        "exit_code": 1,
        "reason": None,
    }
    o = seen("a", "exited", exit_code=1, source="pane")
    for as_json in (True, False):
        assert present.watch_event_line(event, as_json) == present.watch_line(o, "working", as_json)
