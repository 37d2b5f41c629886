"""Budgets (issue 23 part 5) on the in-memory tmux and a manual clock: a reached budget parks
the agent after its turn, never during it; a tree's budget parks the tree's idle agents and
tells their parent; the person gets an alert and `wake` learns why; beyond `[budget]
max_live` the idle longest are hibernated, never one attached nor one working."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fake_app import PROMPT, fake_app, with_table

from roost.budgets import operations as budget
from roost.budgets import rules as rule
from roost.core.errors import RoostError
from roost.core.model import Agent
from roost.ops import lifecycle, observe
from roost.ops.context import App
from roost.store import alerts as outbox
from roost.store import events as event_log
from roost.store import orchestration as queue
from roost.store import usage as rows
from roost.tmux.fake import FakeTmux
from roost.usage.rules import Tokens

BUSY = "thinking... esc to interrupt"
LOADS = "Resuming session..."  # a CLI's loading (Gemini CLI's, as it resumes a session)


@pytest.fixture
def app(tmp_path: Path, fake: FakeTmux, clock: Any) -> Iterator[App]:
    patterns = {
        "command": {"idle": [PROMPT], "working": ["esc to interrupt", LOADS], "loading": [LOADS]}
    }
    made = fake_app(tmp_path, fake, clock, {"status": {"patterns": patterns}})
    yield made
    made.close()


def spawn(app: App, name: str, parent: str | None = None) -> Agent:
    place = lifecycle.Place(detached=True, orchestrated_by=parent)
    return lifecycle.spawn(
        app, name, provider="command", cwd=str(app.paths.home), args=("sh",), place=place
    ).agent


def used(app: App, agent: Agent, tokens: int) -> None:
    """The agent's session file gave `tokens` (as usage/operations.py's read would store them)."""
    with app.store.write() as c:
        found = {("2031-03-04", "m"): Tokens(input=tokens)}
        rows.advance(c, agent.id, f"/files/{agent.id}", 1, 0, {}, found)


def screen(fake: FakeTmux, agent: Agent, text: str) -> None:
    fake.set_screen(fake.pane_of(agent.id).id, text)


def states(app: App) -> dict[str, str]:
    return {o.agent.name: o.state for o in observe.current(app)}


def test_a_reached_budget_parks_after_the_turn_not_during_it(
    app: App, fake: FakeTmux, clock: Any
) -> None:
    api = spawn(app, "api")
    budget.set_budget(app, "api", "1000", tree=False)
    screen(fake, api, BUSY)  # a turn under way...
    used(app, api, 1500)  # ...whose usage crossed the budget
    assert budget.enforce(app) == []
    assert states(app)["api"] == "running"
    clock.advance(3)
    screen(fake, api, PROMPT)  # the turn is over
    assert budget.enforce(app) == ["api"]
    assert states(app)["api"] == "hibernated"
    why = "its budget of 1.0k tokens is reached (1.5k used)"
    assert [e.data["reason"] for e in app.store.events(api.id) if e.kind == "budget"] == [why]
    with app.store.write() as c:
        pending = outbox.claim(c, 3)
    assert [(p.edge, p.body) for p in pending] == [("budget", why)]
    assert budget.take_parked(app, "api") == why  # what `roost wake` says, once
    assert budget.take_parked(app, "api") is None


def test_a_tree_budget_parks_the_idle_ones_and_tells_their_parent(app: App, fake: FakeTmux) -> None:
    lead = spawn(app, "lead")
    kid = spawn(app, "kid", parent="lead")
    other = spawn(app, "other")
    budget.set_budget(app, "lead", "$1", tree=True)
    used(app, other, 10_000_000)  # not in the tree: counts for nothing
    budget.enforce(app)
    assert states(app) == {"lead": "running", "kid": "running", "other": "running"}
    screen(fake, kid, BUSY)  # the kid's turn...
    observe.refresh(app)
    screen(fake, kid, PROMPT)  # ...over
    screen(fake, lead, BUSY)
    used(app, kid, 0)
    with app.store.write() as c:  # the kid's turns cost $2 at a price set in config
        rows.advance(c, kid.id, "/files/kid", 1, 0, {}, {("2031-03-04", "m"): Tokens(2_000_000)})
    app.settings = replace(app.settings, prices={"m": {"input": 1.0}})
    assert budget.enforce(app) == ["kid"]  # the lead is working: after its turn
    assert states(app)["lead"] == "running"
    with app.store.write() as c:
        notices = queue.pending(c, lead.id)
    assert [(n.child_name, n.status) for n in notices] == [("kid", "finished"), ("kid", "parked")]
    assert "kid parked: lead's tree budget of $1.00 is reached" in notices[1].text


def test_max_live_hibernates_the_idle_longest_never_attached_nor_working(
    app: App, fake: FakeTmux, clock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = {}
    for name in ("a", "b", "c", "d", "e"):
        made[name] = spawn(app, name)
        observe.refresh(app)  # each one's idle since now
        clock.advance(60)
    screen(fake, made["c"], BUSY)  # working
    observe.refresh(app)
    attached = fake.pane_of(made["a"].id).id  # the idle longest, but a person is on it
    monkeypatch.setattr(fake, "clients", lambda: [(attached, "/dev/pts/7")])
    app.settings = with_table(app.settings, budget={"max_live": 3})
    assert budget.enforce(app) == ["b", "d"]  # two too many: the idle longest that may go
    found = states(app)
    assert [n for n, s in found.items() if s == "running"] == ["a", "c", "e"]


@pytest.mark.parametrize(
    ("text", "tokens", "dollars"),
    [("2M", 2_000_000, None), ("$0.5", None, 0.5)],
    ids=["tokens", "dollars"],
)
def test_what_a_budget_may_be(text: str, tokens: int | None, dollars: float | None) -> None:
    assert rule.parse(text) == (tokens, dollars)


@pytest.mark.parametrize("bad", ["", "-5", "$", "5 dollars", "1e9", "$-1"])
def test_what_a_budget_may_not_be(bad: str) -> None:
    with pytest.raises(RoostError):
        rule.parse(bad)


def test_over_max_live_parks_idle_unattached_agents_oldest_first() -> None:
    live = [
        rule.Live("old", "idle", "2031-01-01T00:00:00", False),
        rule.Live("older-attached", "idle", "2030-01-01T00:00:00", True),
        rule.Live("busy", "working", "2029-01-01T00:00:00", False),
        rule.Live("asks", "waiting", "2029-01-01T00:00:00", False),
        rule.Live("new", "idle", "2031-06-01T00:00:00", False),
    ]
    assert rule.over_max_live(live, 4) == ["old"]
    assert rule.over_max_live(live, 1) == ["old", "new"]  # no more may go
    assert rule.over_max_live(live, 5) == []


def test_a_turns_end_reads_the_file_then_and_again_a_little_later(
    app: App, clock: Any, tmp_path: Path
) -> None:
    """Claude Code may write the turn's last answer after its Stop hook: the service reads
    the file at the turn's end and AGAIN seconds later."""
    path = tmp_path / "t.jsonl"
    app.store.insert(
        Agent(
            id="c1",
            name="cl",
            provider="claude",
            cwd="/w",
            home="h",
            provider_session_id="s1",
            transcript_path=str(path),
        )
    )
    data = (Path(__file__).parent / "data" / "usage" / "claude.jsonl").read_text()
    path.write_text(data.splitlines(keepends=True)[0])  # the answer not written yet
    with app.store.write() as c:  # the turn's end, as the status pipeline logs it
        event_log.append(c, "c1", "cl", app.store.now_iso(), "status", {"status": "idle"})
    budget._on_status(app, event_log.status_changes(event_log.after(app.store.conn, 0)))
    assert rows.tokens_by_agent(app.store.conn) == {}
    path.write_text(data)  # ...now it is
    clock.advance(budget.AGAIN)
    due = budget._later.take(app.clock)
    assert due == {"c1"}
    budget._turns_ended(app, due)
    assert rows.tokens_by_agent(app.store.conn) == {"c1": 13 + 49 + 100 + 2100 + 2}


def test_two_passes_that_saw_the_same_idle_agent_park_it_once(app: App, fake: FakeTmux) -> None:
    """The service's pass at a turn's end and a `roost policy` pass looked at the same moment
    (seen on a loaded run): the second finds it parked already and says nothing more, so the
    person gets one alert and its parent one notice."""
    api = spawn(app, "api")
    budget.set_budget(app, "api", "1000", tree=False)
    screen(fake, api, PROMPT)
    used(app, api, 1500)
    seen = next(o for o in observe.current(app) if o.agent.name == "api")
    why = "its budget of 1.0k tokens is reached (1.5k used)"
    assert budget.park(app, seen, why) == "api"
    assert budget.park(app, seen, why) is None  # what the other pass saw is gone
    kinds = [e.kind for e in app.store.events(api.id)]
    assert kinds.count("budget") == 1 and kinds.count("hibernated") == 1
    with app.store.write() as c:
        assert len(outbox.claim(c, 9)) == 1


def test_a_woken_agent_gets_its_turn_before_its_budget_parks_it_again(
    app: App, fake: FakeTmux, clock: Any
) -> None:
    """`roost wake` on a parked agent starts its CLI, which turns idle: that idle is no turn's
    end. Parked there (CI, real Claude Code: the service's pass at that idle killed the window
    while the wake still watched the start: "its start failed at once"), a woken agent never got
    the turn the docs promise; nor may another agent's turn end park it."""
    api = spawn(app, "api")
    other = spawn(app, "other")
    budget.set_budget(app, "api", "1000", tree=False)
    screen(fake, api, BUSY)
    observe.refresh(app)
    used(app, api, 1500)
    clock.advance(3)
    screen(fake, api, PROMPT)
    assert budget.enforce(app) == ["api"]
    lifecycle.wake(app, "api")
    clock.advance(30)  # its CLI up and idle: a pass at that idle, and at another's turn end
    assert budget.enforce(app) == []
    screen(fake, other, BUSY)
    observe.refresh(app)
    screen(fake, other, PROMPT)
    assert budget.enforce(app) == []
    assert states(app)["api"] == "running"
    screen(fake, api, BUSY)  # its turn
    observe.refresh(app)
    clock.advance(3)
    screen(fake, api, PROMPT)
    assert budget.enforce(app) == ["api"]  # ...and after it, parked again


def test_a_resumed_session_loading_is_no_turn(app: App, fake: FakeTmux, clock: Any) -> None:
    """A CLI busy as it resumes (Gemini CLI loads a resumed session under a spinner) took no
    prompt: only a turn begun once it was up, by a prompt roost sent or one its hooks or its
    screen saw taken, lets the budget park it."""
    api = spawn(app, "api")
    budget.set_budget(app, "api", "1000", tree=False)
    used(app, api, 1500)
    lifecycle.hibernate(app, "api")
    fake.on_start = lambda pane: fake.set_screen(pane.id, BUSY)  # loading as it resumes
    lifecycle.wake(app, "api")
    observe.refresh(app)
    clock.advance(3)
    screen(fake, api, PROMPT)
    assert budget.enforce(app) == []
    assert states(app)["api"] == "running"
    screen(fake, api, BUSY)
    observe.refresh(app)
    clock.advance(3)
    screen(fake, api, PROMPT)
    assert budget.enforce(app) == ["api"]


def test_a_resumed_session_drawn_idle_first_then_loading_is_no_turn(
    app: App, fake: FakeTmux, clock: Any
) -> None:
    """Gemini CLI 0.61.0 draws its empty input box, then loads the resumed session under
    "Resuming session..." with no input line, then the box again: idle, working, idle, and
    no prompt taken (a review found the budget parked it at the load's end)."""
    api = spawn(app, "api")
    budget.set_budget(app, "api", "1000", tree=False)
    used(app, api, 1500)
    lifecycle.hibernate(app, "api")
    lifecycle.wake(app, "api")
    clock.advance(30)
    observe.refresh(app)  # its box drawn: idle
    screen(fake, api, "⠋ Resuming session...")
    observe.refresh(app)
    screen(fake, api, PROMPT)
    assert budget.enforce(app) == []
    assert [
        e.data["source"] for e in app.store.events(api.id) if e.data.get("status") == "working"
    ] == ["loading"]
    screen(fake, api, BUSY)  # a turn
    observe.refresh(app)
    screen(fake, api, PROMPT)
    assert budget.enforce(app) == ["api"]
