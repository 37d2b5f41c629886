"""gc's choice and the orphan verdicts as pure functions: facts in, decisions out (no tmux, no
processes, no clock; "now" is fixed)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from roost.core import gc
from roost.core import workspace as ws
from roost.core.model import Agent
from roost.core.orphans import Tagged, left_behind, whose

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
OLD = (NOW - timedelta(days=30)).isoformat()


def agent(agent_id: str, placement: str | None = ws.DETACHED, last: str = OLD) -> Agent:
    return Agent(
        id=agent_id,
        name=agent_id,
        provider="claude",
        cwd="/w",
        home=agent_id,
        placement=placement,
        created_at=OLD,
        last_active_at=last,
    )


def workspace(
    *agents: Agent, pins: tuple[str, ...] = (), tiles: tuple[str, ...] = ()
) -> ws.Workspace:
    layout: ws.Node | None = None
    for tile in tiles:
        layout = ws.insert(layout, tile)
    return ws.Workspace(
        tabs=(ws.Tab(id="t", name="main", layout=layout),),
        members=tuple(
            ws.Member(a.id, a.placement, "t" if a.placement == ws.TILE else None, None, None, None)
            for a in agents
        ),
        pins=pins,
    )


@pytest.mark.parametrize(
    ("running", "screen", "removed"),
    [
        pytest.param(set(), {}, True, id="idle-and-stopped"),
        pytest.param({"a"}, {}, False, id="running-never"),
        pytest.param(set(), {"a": NOW - timedelta(seconds=30)}, False, id="screen-moved-lately"),
        pytest.param(set(), {"a": NOW - timedelta(days=20)}, True, id="screen-old-too"),
    ],
)
def test_gc_counts_a_process_and_the_screen_as_activity(
    running: set[str], screen: dict[str, datetime], removed: bool
) -> None:
    a = agent("a")
    found = gc.candidates([a], workspace(a), running, screen, NOW - timedelta(hours=1))
    assert [x.id for x, _why in found] == (["a"] if removed else [])


def test_gc_keeps_pinned_live_and_recent_agents_and_says_why_it_removes() -> None:
    parked, pinned = agent("parked"), agent("pinned")
    tile, fresh = agent("tile", ws.TILE), agent("fresh", last=NOW.isoformat())
    stale, buried = agent("stale", None), agent("buried", ws.BURIED)
    agents = [parked, pinned, tile, fresh, stale, buried]
    w = workspace(*agents, pins=("pinned",), tiles=("tile",))
    found = gc.candidates(agents, w, set(), {}, NOW - timedelta(days=7))
    assert [(a.id, why) for a, why in found] == [
        ("parked", "detached, idle since 2026-01-30T12:00:00+00:00"),
        ("stale", gc.STALE),
        ("buried", "buried, idle since 2026-01-30T12:00:00+00:00"),
    ]
    # without a duration, only stale records; a running stale record stays too
    assert [a.id for a, _ in gc.candidates(agents, w, set(), {}, None)] == ["stale"]
    assert gc.candidates(agents, w, {"stale"}, {}, None) == []


SOCKET = "/tmp/tmux-1000/roost"


def tagged(
    socket: str = SOCKET,
    server: int | None = 100,
    alive: bool = True,
    agent_id: str = "a",
    roost_socket: str = "roost",
) -> Tagged:
    return Tagged(
        pid=7,
        agent_id=agent_id,
        socket_path=socket,
        server_pid=server,
        server_alive=alive,
        roost_socket=roost_socket,
    )


@pytest.mark.parametrize(
    ("proc", "server", "live", "expected"),
    [
        pytest.param(tagged(), 100, {"a"}, "pane", id="its-agent-runs-here"),
        pytest.param(tagged(), 100, set(), "orphan", id="its-pane-died"),
        pytest.param(
            tagged(server=99, alive=False), 100, {"a"}, "orphan", id="twin-from-a-server-that-died"
        ),
        pytest.param(tagged(), None, set(), "orphan", id="no-server-runs"),
        pytest.param(
            tagged("/tmp/tmux-1000/other", 55, True, roost_socket="other"),
            100,
            set(),
            "elsewhere",
            id="runs-under-another-live-server",
        ),
        pytest.param(
            tagged("/tmp/tmux-1000/other", 55, False, roost_socket="other"),
            100,
            set(),
            "orphan",
            id="another-server-that-died",
        ),
        pytest.param(
            tagged("/tmp/tmux-1000/default", 55, True),
            100,
            set(),
            "orphan",
            id="a-child-it-ran-in-the-users-tmux",
        ),
        pytest.param(tagged("", None, False), 100, {"a"}, "pane", id="no-tmux-agent-live"),
        pytest.param(tagged("", None, False), 100, set(), "orphan", id="no-tmux-agent-gone"),
    ],
)
def test_whose_a_tagged_process_is(
    proc: Tagged, server: int | None, live: set[str], expected: str
) -> None:
    assert whose(proc, SOCKET, server, live) == expected


def test_left_behind_groups_the_orphans_by_agent_and_leaves_the_rest() -> None:
    """What the service reaps and doctor lists: the orphans, by agent, pids in order; an agent
    running here or under another live server of this home has none."""
    found = [
        Tagged(9, "a", SOCKET, 99, False),  # its server died
        Tagged(3, "a", "", None, False),  # no TMUX, its agent gone
        Tagged(5, "b", SOCKET, 100, True),  # b's pane, on this server
        Tagged(6, "c", "/tmp/tmux-1000/other", 55, True, "other"),  # c runs elsewhere
        Tagged(7, "d", SOCKET, 100, True),  # d's pane is gone
    ]
    assert left_behind(found, SOCKET, 100, {"b"}) == {"a": [3, 9], "d": [7]}
    assert left_behind(found, SOCKET, 100, {"a", "b", "d"}) == {"a": [9]}
    assert left_behind([], SOCKET, None, set()) == {}
