"""Supervision and restore decisions as pure functions: scripted histories in, decisions out.
No tmux, no store, no sleeping; "now" is fixed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from roost.core import restoring
from roost.core import supervision as sv
from roost.core import workspace as ws
from roost.core.clock import ManualClock
from roost.core.errors import RoostError
from roost.core.model import INTENT_HIBERNATED, INTENT_RUNNING, INTENT_STOPPED, Agent, Intent
from roost.core.pane import Pane
from roost.core.settings import RestoreSettings, parse
from roost.tmux import view

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ON_FAILURE = sv.Policy("on-failure")
NEVER = sv.Policy("never")


def ago(seconds: float, code: int | None = 1) -> sv.Exit:
    return sv.Exit(NOW - timedelta(seconds=seconds), code)


def agent(intent: Intent = INTENT_RUNNING) -> Agent:
    return Agent(id="id-a", name="a", provider="command", cwd="/w", home="a", intent=intent)


def pane(dead: bool = True, status: int | None = 1) -> Pane:
    return Pane(
        session_id="$1",
        session_name="a",
        window_id="@1",
        window_name="a",
        window_index=1,
        pane_id="%1",
        pid=None if dead else 42,
        dead=dead,
        dead_status=status if dead else None,
        agent_id="id-a",
        is_keeper=False,
        is_home=True,
    )


# ---- decide: (history, policy, exit code, screen) -> decision -------------------------------
@pytest.mark.parametrize(
    ("history", "policy", "code", "screen", "expected"),
    [
        pytest.param([], NEVER, 1, "", sv.Decision("exited"), id="never-policy-just-exits"),
        pytest.param([], ON_FAILURE, 0, "", sv.Decision("exited"), id="clean-exit-is-no-failure"),
        pytest.param([], ON_FAILURE, 1, "", sv.Decision("restart", 1.0, 1), id="first-failure-1s"),
        pytest.param(
            [ago(5)], ON_FAILURE, 1, "", sv.Decision("restart", 2.0, 2), id="second-failure-2s"
        ),
        pytest.param(
            [ago(9), ago(5)],
            ON_FAILURE,
            137,
            "",
            sv.Decision("restart", 4.0, 3),
            id="third-failure-4s",
        ),
        pytest.param(
            [ago(20), ago(9), ago(5)],
            ON_FAILURE,
            1,
            "",
            sv.Decision("failed", 0.0, 4),
            id="fourth-in-a-minute-is-a-crash-loop",
        ),
        pytest.param(
            [ago(600), ago(300), ago(61)],
            ON_FAILURE,
            1,
            "",
            sv.Decision("restart", 1.0, 1),
            id="old-failures-are-forgotten",
        ),
        pytest.param(
            [ago(60), ago(30), ago(10)],
            ON_FAILURE,
            2,
            "",
            sv.Decision("failed", 0.0, 4),
            id="the-window-edge-counts",
        ),
        pytest.param(
            [ago(9, 0), ago(5, 0), ago(3, None)],
            ON_FAILURE,
            1,
            "",
            sv.Decision("restart", 1.0, 1),
            id="clean-and-unknown-exits-are-no-failures",
        ),
        pytest.param(
            [],
            ON_FAILURE,
            None,
            "",
            sv.Decision("restart", 1.0, 0),
            id="unknown-status-restarts-without-counting",
        ),
        pytest.param(
            [],
            ON_FAILURE,
            1,
            "Error: No conversation found with session ID 1234\n\n\n",
            sv.Decision("unresumable"),
            id="lost-conversation-beats-restart",
        ),
        pytest.param(
            [],
            NEVER,
            0,
            "No saved session found",
            sv.Decision("unresumable"),
            id="lost-conversation-under-never",
        ),
        pytest.param(
            [ago(3), ago(2), ago(1)],
            sv.Policy("on-failure", max_failures=5),
            1,
            "",
            sv.Decision("restart", 8.0, 4),
            id="a-policy-may-allow-more",
        ),
    ],
)
def test_decide(
    history: list[sv.Exit], policy: sv.Policy, code: int | None, screen: str, expected: sv.Decision
) -> None:
    assert sv.decide(history, policy, code, screen, NOW, NOT_FOUND) == expected


# what claude and codex print when asked to resume a conversation that does not exist (their
# providers' traits carry them; decide only matches them)
NOT_FOUND = ("No conversation found with session ID", "No saved session found")


def test_a_crash_loop_scripted_exit_by_exit() -> None:
    """Replays a history the way ops.supervise lives it: each decision's backoff passes on the
    clock before the next exit; the fourth failure within a minute stops it."""
    clock = ManualClock(NOW)
    history: list[sv.Exit] = []
    decisions = []
    for _ in range(5):
        decision = sv.decide(history, ON_FAILURE, 3, "", clock.now())
        decisions.append(decision.action)
        history.append(sv.Exit(clock.now(), 3))
        if decision.action != "restart":
            break
        clock.sleep(decision.delay)
    assert decisions == ["restart", "restart", "restart", "failed"]
    assert clock.slept == [1.0, 2.0, 4.0]


def test_failures_spread_out_never_end_in_failed() -> None:
    clock = ManualClock(NOW)
    history: list[sv.Exit] = []
    for _ in range(10):
        assert sv.decide(history, ON_FAILURE, 1, "", clock.now()).action == "restart"
        history.append(sv.Exit(clock.now(), 1))
        clock.advance(25)  # at most three failures within any 60 s


@pytest.mark.parametrize(("failures", "delay"), [(0, 1.0), (1, 1.0), (2, 2.0), (3, 4.0), (5, 16.0)])
def test_backoff_doubles(failures: int, delay: float) -> None:
    assert sv.backoff(failures) == delay


# ---- triage and the check after the backoff ---------------------------------------------------
@pytest.mark.parametrize(
    ("found", "known", "state", "expected"),
    [
        pytest.param(None, agent(), "", "ignored", id="pane-gone"),
        pytest.param(pane(dead=False), agent(), "", "ignored", id="pane-alive-again"),
        pytest.param(pane(), None, "", "ignored", id="agent-unknown"),
        pytest.param(pane(), agent(INTENT_STOPPED), "stopped", "killed", id="roost-stopped-it"),
        pytest.param(
            pane(), agent(INTENT_HIBERNATED), "stopped", "killed", id="roost-hibernated-it"
        ),
        pytest.param(pane(), agent(), "stopped", None, id="stale-tag-of-a-kill-cut-off"),
        pytest.param(pane(), agent(), "running", None, id="an-exit-to-handle"),
        pytest.param(pane(), agent(), "", None, id="window-gone-meanwhile"),
    ],
)
def test_triage(found: Pane | None, known: Agent | None, state: str, expected: str | None) -> None:
    assert sv.triage(found, known, state) == expected


@pytest.mark.parametrize(
    ("current", "found", "expected"),
    [
        pytest.param(agent(), pane(), True, id="still-dead"),
        pytest.param(agent(), None, True, id="home-gone"),
        pytest.param(agent(), pane(dead=False), False, id="woken-meanwhile"),
        pytest.param(agent(INTENT_STOPPED), pane(), False, id="killed-meanwhile"),
        pytest.param(agent(INTENT_HIBERNATED), None, False, id="hibernated-meanwhile"),
        pytest.param(None, None, False, id="removed-meanwhile"),
    ],
)
def test_still_wanted(current: Agent | None, found: Pane | None, expected: bool) -> None:
    assert sv.still_wanted(current, found) is expected


# ---- restore ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("conf", "flags", "expected"),
    [
        pytest.param({}, (None, None), (3, 0.25), id="defaults"),
        pytest.param({"concurrency": 8, "stagger": 1}, (None, None), (8, 1.0), id="config"),
        pytest.param({"concurrency": 8, "stagger": 1}, (2, 0.0), (2, 0.0), id="flags-win"),
    ],
)
def test_restore_limits(
    conf: dict[str, object], flags: tuple[int | None, float | None], expected: tuple[int, float]
) -> None:
    assert restoring.limits(parse({"restore": conf}).restore, *flags) == expected


@pytest.mark.parametrize("flags", [(0, None), (None, -0.1)])
def test_restore_limits_refuse_nonsense(flags: tuple[int | None, float | None]) -> None:
    with pytest.raises(RoostError, match="--concurrency must be at least 1"):
        restoring.limits(RestoreSettings(), *flags)


def test_restore_report_names_agents_and_skips_the_removed() -> None:
    plan = ws.RestorePlan(start=("i1", "i2"), running=("i3", "gone"), hibernate=("i4",))
    names = {"i1": "one", "i2": "two", "i3": "three", "i4": "four"}
    report = restoring.report(plan, names, ["one"], {"two": "no such cwd"}, 2, 1.25)
    assert (report.live, report.already_running, report.hibernated) == (4, ["three"], ["four"])
    assert report.text() == (
        "restored in 1.2s: 4 live expected, 1 started, 1 already running, "
        "1 hibernated, 1 failed\n"
        "  started with no conversation to resume: one\n"
        "  already running: three\n"
        "  still hibernated: four (they wake when used; roost wake NAME starts one now)\n"
        "  failed two: no such cwd\n"
    )
    assert report.as_json()["peak_concurrent_starts"] == 2


# ---- roost open's layout ----------------------------------------------------------------------
def test_view_layout_splits_in_tree_order() -> None:
    tree = ws.split("h", ws.split("v", ws.leaf("a"), ws.leaf("b"), 0.3), ws.leaf("c"), 0.95)
    first, splits = view.layout(tree)
    assert first == "a"
    assert splits == [
        view.Split("a", "c", side_by_side=False, percent=10),  # kept >= 10 %
        view.Split("a", "b", side_by_side=True, percent=70),
    ]
    assert view.layout(ws.leaf("solo")) == ("solo", [])
