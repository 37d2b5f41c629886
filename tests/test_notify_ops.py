"""Parents' notices on the in-memory tmux and a manual clock (issue 18.3): a parent that dies on
a delivery is not woken again for that notice, and one that dies on delivery after delivery is
`failed` (a crash loop), as supervision decides for exits. The real-tmux tests in
test_notify_e2e.py cover delivery end to end."""

from __future__ import annotations

from typing import Any

import pytest
from fake_app import clock_of, procs_of, with_table

from roost.core.model import Agent
from roost.core.observation import Observation
from roost.core.pane import agent_panes
from roost.ops import lifecycle, notify, send
from roost.ops.context import App
from roost.store import orchestration as queue
from roost.tmux.fake import FakeTmux


def spawn(app: App, name: str, parent: str | None = None) -> Agent:
    place = lifecycle.Place(detached=True, orchestrated_by=parent)
    return lifecycle.spawn(
        app, name, provider="command", cwd=str(app.paths.home), args=("sh",), place=place
    ).agent


def queue_notice(app: App, lead: Agent, kid: Agent, words: str) -> None:
    with app.store.write() as c:
        queue.enqueue(
            c,
            lead.id,
            kid.id,
            kid.name,
            "finished",
            f"[roost] kid finished its turn: {words}",
            c.now_iso(),
        )


def starts(app: App, agent: Agent) -> int:
    return sum(1 for e in app.store.events(agent.id) if e.kind == "started")


@pytest.fixture
def lethal(app: App, fake: FakeTmux, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every delivery kills its parent (as the notice with two Ctrl-C did): the send wakes it
    as the real one does, types, and the parent's CLI exits before it confirms anything."""
    typed: list[str] = []

    def dies_on_delivery(app: App, name: str, text: str, *args: Any, **kw: Any) -> send.Sent:
        lifecycle.wake(app, name, hold=False)
        agent = app.store.require(name)
        typed.append(text)
        fake.exit(agent_panes(app.tmux.list_panes())[agent.id].pane_id, 0)
        return send.Sent(False, send.NO_SIGN)

    monkeypatch.setattr(send, "send", dies_on_delivery)
    return typed


def test_a_parent_that_dies_on_a_notice_is_not_woken_again_for_it(
    app: App, fake: FakeTmux, lethal: list[str]
) -> None:
    lead = spawn(app, "lead")
    kid = spawn(app, "kid", parent="lead")
    fake.exit(fake.pane_of(lead.id).id, 0)  # asleep (it exited on its own): a notice wakes it
    queue_notice(app, lead, kid, "two Ctrl-C")
    before = starts(app, lead)
    for _ in range(5):  # each death runs the delivery again (tmux's pane-died hook)
        notify.deliver(app)
    assert len(lethal) == 1
    assert starts(app, lead) == before + 1
    with app.store.write() as c:
        assert [n.child_name for n in queue.pending(c, lead.id)] == ["kid"]  # held, not lost
    held = [e for e in app.store.events(lead.id) if e.kind == "notice-held"]
    assert "stopped on an earlier delivery" in str(held[-1])


def test_a_parent_that_dies_on_every_notice_ends_failed(
    app: App, fake: FakeTmux, lethal: list[str]
) -> None:
    lead = spawn(app, "lead")
    kid = spawn(app, "kid", parent="lead")
    for i in range(5):
        queue_notice(app, lead, kid, f"turn {i}")
        if app.store.require("lead").last_error is None:
            lifecycle.wake(app, "lead", hold=False)  # restarted (its on-failure policy)
        notify.deliver(app)
    assert len(lethal) == 3  # deliveries back off (1 s, 2 s), then it is a crash loop
    assert clock_of(app).slept[:2] == [1.0, 2.0]
    current = app.store.require("lead")
    assert current.last_error is not None and "crash loop" in current.last_error
    assert any(e.kind == "notice-dropped" for e in app.store.events(lead.id))
    with app.store.write() as c:  # the newer notices wait for the person's wake
        assert [n.text[-6:] for n in queue.pending(c, lead.id)] == ["turn 2", "turn 3", "turn 4"]


def test_a_notice_does_not_wake_a_parent_over_its_trees_limits(app: App, fake: FakeTmux) -> None:
    # Issue 18.5: every path that makes an agent live counts against the limits; a notice that
    # wakes a hibernated parent which is itself a child is one.
    app.settings = with_table(app.settings, orchestration={"max_children": 1})
    spawn(app, "lead")
    mid = spawn(app, "mid", parent="lead")
    kid = spawn(app, "kid", parent="mid")
    lifecycle.hibernate(app, "mid")
    spawn(app, "sib", parent="lead")  # mid's place, taken while it sleeps
    queue_notice(app, mid, kid, "done")
    assert notify.deliver(app) == []
    assert app.store.require("mid").intent == "hibernated"
    held = [e for e in app.store.events(mid.id) if e.kind == "notice-held"]
    assert "orchestration.max_children = 1" in str(held[-1])


@pytest.mark.parametrize("asleep", [False, True])
def test_a_kill_that_ends_while_a_notice_is_on_its_way_is_not_undone(
    app: App, fake: FakeTmux, monkeypatch: pytest.MonkeyPatch, asleep: bool
) -> None:
    """`roost kill lead --tree` kills the children first; a child's notice can be decided on
    (lead idle, or asleep and woken for it) just before the person's kill of lead ends. The
    wake is decided again under lead's lock: lead stays stopped and the notice waits for it."""
    lead = spawn(app, "lead")
    kid = spawn(app, "kid", parent="lead")
    if asleep:
        fake.exit(fake.pane_of(lead.id).id, 0)
    queue_notice(app, lead, kid, "done")
    observed = notify._observed

    def killed_right_after(app: App, agent_id: str) -> Observation | None:
        found = observed(app, agent_id)
        lifecycle.kill(app, "lead")
        return found

    monkeypatch.setattr(notify, "_observed", killed_right_after)
    before = starts(app, lead)
    assert notify.deliver_to(app, lead.id) is False
    assert starts(app, lead) == before
    assert lead.id not in {a for a, p in agent_panes(app.tmux.list_panes()).items() if not p.dead}
    with app.store.write() as c:
        (held,) = queue.pending(c, lead.id)
    assert held.tries == 0  # not counted as a death on delivery
    reasons = [e for e in app.store.events(lead.id) if e.kind == "notice-held"]
    assert "stopped by its person" in str(reasons[-1])


def test_a_turn_already_over_when_its_send_records_it_is_looked_at_and_told(app: App) -> None:
    """The Stop was in the hook log before send recorded the turn begun: what the Stop set off
    (the service's look, the hook's `roost _notify`) may have looked first and found nothing
    new. send.turn_begun then looks itself (working -> idle recorded, the parent's notice
    queued) and starts `roost _notify` outside itself, as the hook does."""
    from roost.ops.learn import launch_token
    from roost.providers import hooks
    from roost.store import events

    lead = spawn(app, "lead")
    place = lifecycle.Place(detached=True, orchestrated_by="lead")
    app.environ["ROOST_CLAUDE_BIN"] = "/bin/sh"  # the fake tmux never runs it
    kid = lifecycle.spawn(app, "kid", provider="claude", cwd=str(app.paths.home), place=place).agent
    log = hooks.log_path(str(app.paths.home), kid.id)
    token = launch_token(app, kid.id)
    with open(log, "a") as f:
        f.write(f"{app.clock.now().timestamp():.0f}\tSessionStart\t{token}\t{{}}\n")
    notify.deliver(app)  # a look: idle, from its SessionStart
    assert app.store.require("kid").status == "idle"
    looked, before = events.last_id(app.store.conn), hooks.size(log)
    with open(log, "a") as f:  # the turn, begun and over before any look
        for event in ("UserPromptSubmit", "Stop"):
            f.write(f"{app.clock.now().timestamp():.0f}\t{event}\t{token}\t{{}}\n")
    notify.deliver(app)  # the Stop's own look came first: idle over idle, nothing new
    assert [n.child_name for n in queue.pending(app.store.conn, lead.id)] == []

    send.turn_begun(app, app.store.require("kid"), looked, log, before, "send")
    changes = [
        (e.data["status"], e.data.get("previous"))
        for e in app.store.events(kid.id)
        if e.kind == "status"
    ]
    assert changes[-2:] == [("working", "idle"), ("idle", "working")], changes
    assert [n.child_name for n in queue.pending(app.store.conn, lead.id)] == ["kid"]
    [(argv, env)] = procs_of(app).outside
    assert argv[-1] == "_notify" and "ROOST_AGENT_ID" not in env

    send.turn_begun(app, app.store.require("kid"), looked, log, before, "send")  # not twice
    assert len(queue.pending(app.store.conn, lead.id)) == 1 and len(procs_of(app).outside) == 1


def test_a_prompt_taken_just_before_the_cli_died_is_delivered(app: App, fake: FakeTmux) -> None:
    """The CLI's UserPromptSubmit lands in the hook log and the CLI dies (`crash 3`) between
    send's read of the log and its look at the pane: the text was taken, and send says so
    (it read the log once more), not "no sign that the agent took it" (CI, test_alerts)."""
    import json

    from roost.core import delivery
    from roost.core.delivery import Confirmed, Verdict
    from roost.ops import confirm
    from roost.ops.learn import launch_token
    from roost.providers import hooks

    app.environ["ROOST_CLAUDE_BIN"] = "/bin/sh"  # the fake tmux never runs it
    kid = lifecycle.spawn(app, "kid", provider="claude", cwd=str(app.paths.home)).agent
    log = hooks.log_path(str(app.paths.home), kid.id)
    token = launch_token(app, kid.id)
    before = hooks.size(log)
    pane = fake.pane_of(kid.id).id
    listed = app.tmux.list_panes

    def crashing_after_its_hook() -> Any:
        if not fake.pane_of(kid.id).dead:
            payload = json.dumps({"prompt": "crash 3"})
            with open(log, "a") as f:
                f.write(
                    f"{app.clock.now().timestamp():.0f}\tUserPromptSubmit\t{token}\t{payload}\n"
                )
            fake.exit(pane, 3)
        return listed()

    app.tmux.list_panes = crashing_after_its_hook  # type: ignore[method-assign]
    found = confirm.confirm(
        app, kid, pane, "crash 3", (delivery.HOOK,), confirm.Before(log, before), 5.0
    )
    assert found == Verdict(True, Confirmed.HOOK)
