"""Intent before effect (issue 36 point 3) on the fake tmux, deterministically: the status
pipeline looks at the very moment a stop's signal has ended the agent's process, before the stop
is recorded complete (what the service's monitor does when tmux tells it a pane died), and
still reads `stopped` or `hibernated`, never `exited`; the alerts page nothing for it. A crash
of the agent's own, and the exit after a stop that failed, are still paged."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest
from fake_app import procs_of
from fake_procs import OTHER_UID

from roost.alerts import operations as alerts
from roost.budgets import operations as budget
from roost.core import supervision as sv
from roost.core.clock import ManualClock, iso
from roost.core.errors import RoostError
from roost.core.model import Agent
from roost.core.observation import covering
from roost.core.processes import Process
from roost.ops import lifecycle, observe, supervise
from roost.ops.context import App
from roost.store import alerts as outbox
from roost.store import intents
from roost.system.procs import HOME_TAG, TAG
from roost.tmux.fake import FakeTmux

# `fake`, `clock` and `app`: tests/conftest.py


def spawn(app: App, name: str, restart: str = "never") -> Agent:
    return lifecycle.spawn(
        app, name, provider="command", cwd=str(app.paths.home), args=("sh",), restart=restart
    ).agent


def look_when_signalled(app: App) -> list[str]:
    """The status pipeline runs right after each stop's signal, as a monitor that hears the
    pane die does; what it recorded for the agents, as "name status" lines."""
    table = procs_of(app)
    real = table.kill_tree
    seen: list[str] = []

    def kill_then_look(procs: Sequence[Process]) -> list[int]:
        survivors = real(procs)
        seen.extend(f"{o.agent.name} {o.status}" for o in observe.refresh(app) if o.pane)
        return survivors

    table.kill_tree = kill_then_look  # type: ignore[method-assign]
    return seen


def exit_statuses(app: App) -> list[tuple[str, Any]]:
    return [
        (e.agent, e.data.get("exit_code"))
        for e in app.store.events()
        if e.kind == "exited" or (e.kind == "status" and e.data["status"] == "exited")
    ]


def paged(app: App) -> list[tuple[str, str]]:
    alerts.run_pass(app)
    return [(a["agent"], a["title"]) for a in outbox.delivered(app.store.conn)]


def test_a_kill_seen_before_it_completes_is_stopped_and_pages_nobody(
    app: App, fake: FakeTmux
) -> None:
    agent = spawn(app, "api", restart="on-failure")
    observe.refresh(app)
    seen = look_when_signalled(app)
    lifecycle.kill(app, "api")
    assert seen == ["api stopped"]  # was "api exited" (143): the kill not yet recorded
    assert exit_statuses(app) == []
    assert paged(app) == []
    # the pane-died hook, once the kill lets it: roost's stop, nothing to log or restart
    assert supervise.on_pane_died(app, fake.pane_of(agent.id).id) == "killed"
    kinds = [e.kind for e in app.store.events(agent.id)]
    assert kinds.index("stopping") < kinds.index("killed")  # the intent before the effect


def test_max_live_and_rm_seen_midway_are_not_exits(
    app: App, fake: FakeTmux, clock: ManualClock
) -> None:
    spawn(app, "old")
    observe.refresh(app)
    clock.advance(60)  # old is the idle longest
    for name in ("new", "gone"):
        spawn(app, name)
    seen = look_when_signalled(app)
    assert budget.hibernate_over(app, observe.refresh(app), 2) == ["old"]
    lifecycle.rm(app, "gone")
    assert {"old hibernated", "gone stopped"} <= set(seen)
    assert not [line for line in seen if line.endswith("exited")]  # was: old's and gone's 143
    assert app.store.require("old").status == "hibernated"
    assert exit_statuses(app) == []
    assert paged(app) == []


def test_a_crash_of_its_own_is_still_paged(app: App, fake: FakeTmux) -> None:
    agent = spawn(app, "api")
    observe.refresh(app)
    fake.exit(fake.pane_of(agent.id).id, 3)
    assert supervise.on_pane_died(app, fake.pane_of(agent.id).id) == "exited"
    observe.refresh(app)
    assert paged(app) == [("api", "roost: api crashed (exit 3)")]  # once, two reporters


def test_after_a_stop_that_failed_the_exit_is_the_agents_own(app: App, fake: FakeTmux) -> None:
    agent = spawn(app, "api")
    observe.refresh(app)
    # a process of the agent that no signal reaches (another user's): the kill fails
    procs_of(app).add({TAG: agent.id, HOME_TAG: str(app.paths.home)}, uid=OTHER_UID)
    app.procs.kill_tree = lambda procs: [p.pid for p in procs]  # type: ignore[method-assign]
    with pytest.raises(RoostError, match="survived SIGKILL"):
        lifecycle.kill(app, "api")
    assert intents.active(app.store.conn, app.store.now_iso()) == {}
    assert [e.kind for e in app.store.events(agent.id)][-2:] == ["stopping", "stop-failed"]
    fake.exit(fake.pane_of(agent.id).id, 3)
    observe.refresh(app)
    assert paged(app) == [("api", "roost: api crashed (exit 3)")]


def stopped_by_roost(app: App, fake: FakeTmux, agent: Agent) -> None:
    """The exit a stop's signal caused is that stop's: no stop-failed, no `exited`, no restart,
    no page (the stop's record kept, to lapse at its deadline)."""
    assert intents.active(app.store.conn, app.store.now_iso()).get(agent.id) == (
        "stopped",
        agent.launches,
    )
    assert "stop-failed" not in [e.kind for e in app.store.events(agent.id)]
    assert supervise.on_pane_died(app, fake.pane_of(agent.id).id) == "killed"  # was "exited"
    observe.refresh(app)
    assert exit_statuses(app) == []
    assert paged(app) == []  # was "api crashed (exit 143)"


def test_a_kill_interrupted_in_its_wait_after_the_signal_is_still_roosts(
    app: App, fake: FakeTmux, clock: ManualClock
) -> None:
    agent = spawn(app, "api", restart="on-failure")
    observe.refresh(app)
    procs_of(app).add(parent=fake.pane_of(agent.id).pid, deaf=True)  # holds the TERM->KILL wait

    def ctrl_c(seconds: float) -> None:
        raise KeyboardInterrupt  # the person's Ctrl-C during `roost kill`'s 3 s wait

    clock.sleep = ctrl_c  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        lifecycle.kill(app, "api")
    del clock.sleep
    assert fake.pane_of(agent.id).dead_status == 143  # the TERM went out and ended it
    stopped_by_roost(app, fake, agent)


def test_a_kill_whose_survivor_is_not_the_pane_is_still_roosts(app: App, fake: FakeTmux) -> None:
    agent = spawn(app, "api", restart="on-failure")
    observe.refresh(app)
    # a child another user runs (sudo): no signal reaches it, the pane's own process died
    procs_of(app).add(parent=fake.pane_of(agent.id).pid, uid=OTHER_UID)
    with pytest.raises(RoostError, match="survived SIGKILL"):
        lifecycle.kill(app, "api")
    assert fake.pane_of(agent.id).dead
    stopped_by_roost(app, fake, agent)


def test_a_stop_covers_the_launch_it_stops_until_its_deadline(
    app: App, fake: FakeTmux, clock: ManualClock
) -> None:
    """The one check the status pipeline and the pane-died hook both make (store/intents)."""
    agent = spawn(app, "api")
    until = iso(clock.now() + timedelta(seconds=lifecycle.STOP_DEADLINE))
    with app.store.write() as c:
        intents.begin(
            c, agent.id, "api", "hibernated", "max-live", agent.launches, c.now_iso(), until
        )
    stops = intents.active(app.store.conn, app.store.now_iso())
    assert covering(stops, agent.id, agent.launches) == "hibernated"
    assert covering(stops, agent.id, agent.launches + 1) is None  # its next launch's own
    assert covering(stops, "someone-else", agent.launches) is None
    clock.advance(lifecycle.STOP_DEADLINE)
    lapsed = intents.active(app.store.conn, app.store.now_iso())
    assert covering(lapsed, agent.id, agent.launches) is None


def test_triage_takes_a_stop_under_way_for_roosts() -> None:
    from roost.core.pane import Pane

    dead = Pane(
        session_id="$1",
        session_name="api",
        window_id="@1",
        window_index=1,
        window_name="api",
        pane_id="%1",
        pid=None,
        dead=True,
        dead_status=143,
        agent_id="a",
        is_keeper=False,
        is_home=True,
    )
    agent = Agent(id="a", name="api", provider="command", cwd="/", home="api", intent="running")
    # the window's tag is not set yet (it is tagged inside the stop): the intent alone says so
    assert sv.triage(dead, agent, "running", stopping=True) == "killed"
    assert sv.triage(dead, agent, "running") is None
    assert not sv.still_wanted(agent, dead, stopping=True)


def test_a_start_that_failed_after_the_stop_stays_failed() -> None:
    """roost kill, then a wake refused (its conversation gone: exit 7) within the stop's
    deadline: the agent reads `failed`, the wake's news, not `stopped` (the stop's)."""
    from roost.core.model import Agent
    from roost.core.observation import Observation, attributed

    agent = Agent(id="a1", name="cl", provider="claude", cwd="/w", home="cl", launches=1)
    failed = Observation(agent, None, False, "stopped", None, None, "failed", "store", None)
    exited = Observation(agent, None, False, "stopped", None, 143, "exited", "process", None)
    assert attributed(failed, "stopped").status == "failed"
    assert attributed(exited, "stopped").status == "stopped"
