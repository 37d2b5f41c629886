"""Pure reconcile logic: store intent joined with a tmux listing, no tmux needed."""

from roost.core.model import INTENT_RUNNING, INTENT_STOPPED, Agent, Intent
from roost.core.pane import Pane
from roost.core.reconcile import agent_panes, drift, view


def agent(name: str, intent: Intent = INTENT_RUNNING, home: str | None = None) -> Agent:
    return Agent(
        id=f"id-{name}", name=name, provider="claude", cwd="/w", home=home or name, intent=intent
    )


def pane(
    session: str,
    window: str,
    agent_id: str = "",
    dead: bool = False,
    index: int = 1,
    keeper: bool = False,
    home: bool = True,
    status: int | None = None,
    pane_id: str = "%1",
) -> Pane:
    return Pane(
        session_id=f"${session}",
        session_name=session,
        window_id=f"@{window}",
        window_name=window,
        window_index=index,
        pane_id=pane_id,
        pid=None if dead else 42,
        dead=dead,
        dead_status=status,
        agent_id=agent_id,
        is_keeper=keeper,
        is_home=home,
    )


def keeper(session: str) -> Pane:
    return pane(session, "home", index=0, keeper=True)


def test_live_pane_means_running_dead_or_missing_means_stopped() -> None:
    a, b, c = agent("a"), agent("b"), agent("c")
    panes = [keeper("a"), pane("a", "a", a.id), keeper("b"), pane("b", "b", b.id, dead=True)]
    by_id = agent_panes(panes)
    states = {x.name: (v.state, v.pid) for x in (a, b, c) for v in [view(x, by_id.get(x.id))]}
    assert states == {"a": ("running", 42), "b": ("stopped", None), "c": ("stopped", None)}


def test_live_pane_wins_over_dead_one() -> None:
    a = agent("a")
    found = agent_panes(
        [pane("x", "a", a.id, dead=True, pane_id="%1"), pane("a", "a", a.id, pane_id="%2")]
    )
    assert found[a.id].pane_id == "%2"


def test_healthy_workspace_has_no_drift() -> None:
    a, b = agent("a"), agent("b", intent=INTENT_STOPPED)
    panes = [keeper("a"), pane("a", "a", a.id), keeper("b"), pane("b", "b", b.id, dead=True)]
    assert drift([a, b], panes, "roost") == []


def test_drift_reports_each_disagreement_with_advice() -> None:
    gone = agent("gone")  # wants to run, home gone
    crashed = agent("crashed")  # wants to run, exited
    stray = agent("stray")  # runs outside its home
    panes = [
        keeper("crashed"),
        pane("crashed", "crashed", crashed.id, dead=True, status=3),
        keeper("other"),
        pane("other", "stray", stray.id),
        keeper("lost"),
        pane("lost", "ghost", "id-nobody"),  # tagged, no record
        pane("userland", "bash", home=False, index=0),  # not roost's
        pane("nokeeper", "x", index=0),  # a home without keeper
    ]
    found = {
        (f.subject, f.problem.split(" ")[0]): f
        for f in drift([gone, crashed, stray], panes, "sock")
    }
    subjects = {s for s, _ in found}
    assert {
        "gone",
        "crashed",
        "stray",
        "window @ghost",
        "session userland",
        "home nokeeper",
    } <= subjects
    assert found[("gone", "should")].advice == "roost wake gone"
    assert "exited (status 3)" in found[("crashed", "should")].problem
    assert found[("window @ghost", "window")].advice == "tmux -L sock kill-window -t @ghost"
    assert "did not make" in found[("session userland", "a")].problem


def test_two_live_panes_for_one_agent_is_drift() -> None:
    a = agent("a")
    panes = [keeper("a"), pane("a", "a", a.id, pane_id="%1"), pane("a", "a2", a.id, pane_id="%2")]
    assert any("2 live panes" in f.problem for f in drift([a], panes, "roost"))


def test_a_lost_server_is_one_finding_fixed_by_one_restore() -> None:
    agents = [agent("a"), agent("b"), agent("c"), agent("off", intent=INTENT_STOPPED)]
    found = drift(agents, [], "roost")
    assert [(f.subject, f.problem) for f in found] == [
        ("roost's tmux server", "is not running: 3 agents should be running (a, b, c)")
    ]
    assert found[0].advice.startswith("roost restore")
    assert drift([agent("off", intent=INTENT_STOPPED)], [], "roost") == []


def test_a_parked_or_buried_agent_without_a_window_hibernates_no_alarm() -> None:

    parked = agent("parked").replace(placement="detached")
    buried = agent("buried").replace(placement="buried")
    panes = [keeper("other"), pane("other", "other", "id-other")]
    assert drift([parked, buried, agent("other")], panes, "roost") == []
    assert drift([parked, buried], [], "roost") == []
