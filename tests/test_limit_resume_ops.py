"""Issue 23, part 2, the decisions of ops/resume.py on the fake world (manual clock, store, no
tmux): resumes of one account spaced by the gap, other accounts not held back; a pass makes
one per account; an unknown reset backs off; a person's send cancels."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from roost.core import resuming
from roost.core.clock import ManualClock
from roost.core.model import INTENT_RUNNING, Agent
from roost.core.observation import Observation
from roost.limits.rules import SESSION, Limit
from roost.ops import observe, resume, send
from roost.ops.context import App
from roost.store import resumes as stored
from roost.tmux.fake import FakeTmux

GAP = 30.0
NO_JITTER = 0.0


@pytest.fixture
def app(tmp_path: Path, fake: FakeTmux, clock: ManualClock) -> Iterator[App]:
    from fake_app import fake_app

    limits = {"on_limit": "resume", "gap": GAP, "jitter": NO_JITTER}
    made = fake_app(tmp_path, fake, clock, {"limits": limits})
    yield made
    made.close()


def agent(app: App, name: str, provider: str = "claude") -> Agent:
    made = Agent(str(uuid.uuid4()), name, provider, "/tmp", "h", intent=INTENT_RUNNING)
    app.store.insert(made)
    return app.store.require(name)


def limited(app: App, who: Agent, resets_at: float | None) -> float:
    """Schedule `who`'s resume for a limit seen now; its due time."""
    now = app.clock.now().timestamp()
    with app.store.write() as c:
        return resume.schedule(app, c, who, Limit(SESSION, resets_at, "w"), now)


def dues(app: App) -> dict[str, float]:
    return {r.name: r.due_at for r in stored.scheduled(app.store.conn)}


def test_one_accounts_resumes_are_spaced_by_the_gap_others_not_held_back(app: App) -> None:
    reset = app.clock.now().timestamp() + 7200
    fleet = [agent(app, f"c{i}") for i in range(6)]
    others = [agent(app, f"x{i}", "codex") for i in range(2)]
    for who in fleet + others:
        limited(app, who, reset)
    due = dues(app)
    assert sorted(due[a.name] - reset for a in fleet) == [0, 30, 60, 90, 120, 150]
    assert sorted(due[a.name] - reset for a in others) == [0, 30]  # its own account


def test_the_jitter_is_added_within_its_bound(app: App) -> None:
    from fake_app import with_table

    app.settings = with_table(app.settings, limits={"jitter": 40})
    reset = app.clock.now().timestamp() + 60
    who = agent(app, "j")
    now = app.clock.now().timestamp()
    with app.store.write() as c:  # the random source, injected: half the bound
        due = resume.schedule(app, c, who, Limit(SESSION, reset, "w"), now, jitter=lambda m: m / 2)
    assert due == reset + 20


class Sends:
    """A stand-in for send.send that records what would be sent."""

    def __init__(self) -> None:
        self.made: list[tuple[str, str, float]] = []

    def __call__(self, app: App, name: str, text: str, **kw: Any) -> send.Sent:
        assert kw.get("resuming") is True
        self.made.append((name, text, app.clock.now().timestamp()))
        return send.Sent(True, "hook")


def statuses(app: App, status: str, limit: Limit | None = None) -> list[Observation]:
    return [
        Observation(a, None, True, "running", 1, None, status, "hook", None, None, limit)
        for a in app.store.agents()
    ]


def test_a_pass_makes_one_resume_per_account_and_the_rest_follow_by_the_gap(
    app: App, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    reset = clock.now().timestamp() + 600
    for i in range(3):
        limited(app, agent(app, f"c{i}"), reset)
    limited(app, agent(app, "x", "codex"), reset)
    sends = Sends()
    monkeypatch.setattr(send, "send", sends)
    monkeypatch.setattr(observe, "refresh", lambda a, only=None: statuses(a, "idle"))
    clock.advance(3600)  # long past the reset: all four are due at once (nothing ran)
    assert sorted(resume.run_due(app)) == ["c0", "x"]  # one per account
    for _ in range(4):
        clock.advance(GAP)
        resume.run_due(app)
    times = [at for name, _text, at in sends.made if name.startswith("c")]
    assert [b - a for a, b in itertools.pairwise(times)] == [GAP, GAP]
    assert {text for _n, text, _at in sends.made} == {resuming.CONTINUE}
    assert len(sends.made) == 4  # each once


def test_an_unknown_reset_backs_off_and_rechecks_before_each_try(
    app: App, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    who = agent(app, "u")
    start = clock.now().timestamp()
    unknown = Limit(SESSION, None, "You've hit your limit")
    assert limited(app, who, None) == start + 15 * 60
    sends = Sends()
    monkeypatch.setattr(send, "send", sends)
    monkeypatch.setattr(observe, "refresh", lambda a, only=None: statuses(a, "limited", unknown))
    clock.advance(15 * 60)
    assert resume.run_due(app) == ["u"]  # the first try
    clock.advance(15 * 60)  # its check: still limited, the next try 30 min on
    assert resume.run_due(app) == []
    assert dues(app)["u"] == clock.now().timestamp() + 30 * 60
    clock.advance(30 * 60)
    assert resume.run_due(app) == ["u"]
    monkeypatch.setattr(observe, "refresh", lambda a, only=None: statuses(a, "idle"))
    clock.advance(60 * 60)  # its check: it went on, done
    assert resume.run_due(app) == []
    assert dues(app) == {}
    assert len(sends.made) == 2


def test_a_persons_send_cancels_the_resume_planned_before_it(app: App, clock: ManualClock) -> None:
    who = agent(app, "p")
    limited(app, who, clock.now().timestamp() + 60)
    clock.advance(1)
    resume.note_send(app, "p", "do this instead", clock.now().timestamp())
    assert dues(app) == {}


def test_a_limit_that_cut_the_send_itself_resumes_with_its_text(
    app: App, clock: ManualClock
) -> None:
    """`send --wait`: the limit is recorded while the send waits for its reply (the resume
    planned then knows no prompt yet); the send, delivered, keeps it and gives it its text."""
    who = agent(app, "w")
    began = clock.now().timestamp()
    clock.advance(1)
    limited(app, who, clock.now().timestamp() + 60)
    resume.note_send(app, "w", "the task", began)
    [planned] = stored.scheduled(app.store.conn)
    assert (planned.name, planned.prompt) == ("w", "the task")
