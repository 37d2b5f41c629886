"""Operations against the in-memory tmux (roost.tmux.fake) and a manual clock: lifecycle, send and
supervise decisions in milliseconds. The real-tmux tests cover the same operations end to end."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

import pytest
from fake_app import PROMPT

from roost.core.clock import ManualClock
from roost.core.model import INTENT_STOPPED, Agent
from roost.core.observation import Observation
from roost.core.scope import Caller
from roost.ops import lifecycle, orchestrate, send, supervise
from roost.ops.context import App
from roost.providers import traits
from roost.tmux.fake import PID_BASE, FakePane, FakeTmux

# `fake`, `clock` and `app`: tests/conftest.py


def spawn(app: App, name: str, restart: str = "never", provider: str = "command") -> Agent:
    if provider == "command":
        result = lifecycle.spawn(
            app, name, provider="command", cwd=str(app.paths.home), args=("sh",), restart=restart
        )
    else:  # a CLI with a conversation: the fake tmux never runs it, any executable will do
        app.environ[f"ROOST_{provider.upper()}_BIN"] = "/bin/sh"
        result = lifecycle.spawn(
            app, name, provider=provider, cwd=str(app.paths.home), restart=restart
        )
    return result.agent


def pane_of(fake: FakeTmux, agent: Agent) -> FakePane:
    return fake.pane_of(agent.id)


def kinds(app: App, agent: Agent) -> list[str]:
    return [e.kind for e in app.store.events(agent.id)]


# ---- lifecycle --------------------------------------------------------------------------------
def test_spawn_creates_a_home_with_its_keeper_and_a_tagged_window(app: App, fake: FakeTmux) -> None:
    result = lifecycle.spawn(
        app, "w1", provider="command", cwd=str(app.paths.home), args=("sh", "-i")
    )
    panes = fake.list_panes()
    assert [(p.window_index, p.is_home, p.is_keeper, p.agent_id) for p in panes] == [
        (0, True, True, ""),
        (1, True, False, result.agent.id),
    ]
    agent_pane = panes[1]
    assert agent_pane.session_name == "w1" and agent_pane.window_name == "w1"
    assert result.started and result.pid == agent_pane.pid
    assert agent_pane.pid is not None and agent_pane.pid > PID_BASE  # never a real process
    assert fake.windows[agent_pane.window_id].options["@roost_state"] == "running"
    # -P: the launcher never imports from the directory it starts in
    assert pane_of(fake, result.agent).argv[1:4] == ["-P", "-m", "roost.launch"]
    assert result.agent.launches == 1 and kinds(app, result.agent) == ["spawned", "started"]


def test_a_second_agent_in_the_same_home_gets_a_window_there(app: App, fake: FakeTmux) -> None:
    first = spawn(app, "w1")
    second = lifecycle.spawn(
        app, "w2", provider="command", cwd=str(app.paths.home), args=("sh",), home="w1"
    ).agent
    assert len(fake.calls_of("new_home")) == 1  # the second found the home by its name
    assert pane_of(fake, first).window_id != pane_of(fake, second).window_id
    assert {fake.windows[pane_of(fake, a).window_id].session_id for a in (first, second)} == set(
        fake.sessions
    )


def test_waking_a_running_agent_starts_nothing(app: App, fake: FakeTmux) -> None:
    agent = spawn(app, "w1")
    pid = pane_of(fake, agent).pid
    before = len(fake.history)
    result = lifecycle.wake(app, "w1")
    assert not result.started and result.pid == pid
    assert [c[0] for c in fake.history[before:]] == ["list_panes"]


def test_waking_a_dead_pane_respawns_it_in_place(app: App, fake: FakeTmux) -> None:
    agent = spawn(app, "w1")
    old = pane_of(fake, agent)
    old_pid = old.pid
    fake.exit(old.id, 1)
    result = lifecycle.wake(app, "w1")
    assert result.started and fake.calls_of("respawn") == [("respawn", old.id)]
    assert len(fake.calls_of("new_window")) == 1  # only the spawn's
    now = pane_of(fake, agent)
    assert now.id == old.id and not now.dead and now.pid == result.pid != old_pid
    assert result.agent.launches == 2 and result.agent.last_exit == 1


def test_kill_marks_the_window_stopped_and_the_agent_stopped(app: App, fake: FakeTmux) -> None:
    agent = spawn(app, "w1")
    pane = pane_of(fake, agent)
    stopped = lifecycle.kill(app, "w1")
    assert stopped == [pane.pid]
    assert fake.windows[pane.window_id].options["@roost_state"] == "stopped"
    assert pane.dead and pane.dead_status == 143
    after = app.store.require("w1")
    assert after.intent == INTENT_STOPPED and after.last_exit == 143
    assert "killed" in kinds(app, agent)
    # the pane-died hook then runs: roost stopped it and logged it, so supervise leaves it be
    assert supervise.on_pane_died(app, pane.id) == "killed"


# ---- send -------------------------------------------------------------------------------------
def test_send_pastes_then_presses_enter_and_sees_the_screen_move(
    app: App, fake: FakeTmux, clock: ManualClock
) -> None:
    agent = spawn(app, "w1")
    pane = pane_of(fake, agent)
    fake.on_enter = lambda p: fake.set_screen(p.id, f"{PROMPT} hello\nworking...")
    sent = send.send(app, "w1", "hello")
    assert sent.delivered and sent.how == "screen"
    assert [c[0] for c in fake.history if c[0] in ("paste", "capture", "send_enter")] == [
        "paste",
        "capture",
        "send_enter",
        "capture",
    ]  # the baseline is taken after the paste
    assert fake.calls_of("paste", "send_enter") == [
        ("paste", pane.id, "hello"),
        ("send_enter", pane.id),
    ]
    assert clock.slept[0] == traits.of("command").enter_delay  # Enter waits after the paste
    last = app.store.events(agent.id)[-1]
    assert (last.kind, last.data["delivered"], last.data["confirmed_by"]) == (
        "sent",
        True,
        "screen",
    )


def test_send_is_not_delivered_when_the_screen_never_moves(
    app: App, fake: FakeTmux, clock: ManualClock
) -> None:
    agent = spawn(app, "w1")
    sent = send.send(app, "w1", "hello", confirm_timeout=2.0)
    assert not sent.delivered and sent.how == "no sign that the agent took it"
    assert 2.0 <= clock.monotonic() <= 2.0 + traits.of("command").enter_delay + 0.2
    last = app.store.events(agent.id)[-1]
    assert (last.kind, last.data["delivered"]) == ("sent", False)


def test_send_to_a_dead_agent_wakes_it_first(app: App, fake: FakeTmux) -> None:
    agent = spawn(app, "w1")
    fake.exit(pane_of(fake, agent).id, 0)
    fake.on_enter = lambda p: fake.set_screen(p.id, "took it")
    assert send.send(app, "w1", "hello").delivered
    assert [c[0] for c in fake.history if c[0] in ("respawn", "paste", "send_enter")] == [
        "respawn",
        "paste",
        "send_enter",
    ]


# ---- supervise --------------------------------------------------------------------------------
def test_an_exit_under_never_is_logged_and_left(
    app: App, fake: FakeTmux, clock: ManualClock
) -> None:
    agent = spawn(app, "w1")
    pane = pane_of(fake, agent)
    fake.exit(pane.id, 2)
    assert supervise.on_pane_died(app, pane.id) == "exited"
    assert (
        kinds(app, agent)[-1] == "exited" and app.store.events(agent.id)[-1].data["exit_code"] == 2
    )
    assert app.store.require("w1").last_exit == 2
    assert clock.slept == [] and fake.calls_of("respawn") == []


def test_a_crash_loop_restarts_with_backoff_then_fails(
    app: App, fake: FakeTmux, clock: ManualClock
) -> None:
    agent = spawn(app, "w1", restart="on-failure")
    outcomes = []
    for _ in range(5):
        pane = pane_of(fake, agent)
        fake.exit(pane.id, 3)
        outcomes.append(supervise.on_pane_died(app, pane.id))
        if outcomes[-1] != "restarted":
            break
    assert outcomes == ["restarted", "restarted", "restarted", "failed"]
    assert clock.slept == [1.0, 2.0, 4.0]
    assert len(fake.calls_of("respawn")) == 3
    failed = app.store.require("w1")
    assert failed.last_error is not None and failed.last_error.startswith("crash loop: 4 failed")
    assert kinds(app, agent).count("restarted") == 3 and kinds(app, agent)[-1] == "failed"


def test_a_lost_conversation_is_marked_unresumable_not_restarted(app: App, fake: FakeTmux) -> None:
    agent = spawn(app, "w1", restart="on-failure", provider="claude")
    pane = pane_of(fake, agent)
    fake.set_screen(pane.id, "No conversation found with session ID abc\n\n\n\n")
    fake.exit(pane.id, 1)
    assert supervise.on_pane_died(app, pane.id) == "unresumable"
    error = app.store.require("w1").last_error
    assert error is not None and error.startswith("unresumable") and "--fresh" in error
    assert fake.calls_of("respawn") == []


class ActingClock(ManualClock):
    """A manual clock during whose sleeps the user does something."""

    def __init__(self, start: datetime, meanwhile: Callable[[], object]) -> None:
        super().__init__(start)
        self.meanwhile = meanwhile

    def sleep(self, seconds: float) -> None:
        super().sleep(seconds)
        self.meanwhile()


@pytest.mark.parametrize("user", ["wake", "kill", "rm"])
def test_a_user_acting_during_the_backoff_wins(app: App, fake: FakeTmux, user: str) -> None:
    agent = spawn(app, "w1", restart="on-failure")
    pane = pane_of(fake, agent)
    fake.exit(pane.id, 1)
    actions: dict[str, Callable[[App, str], object]] = {
        "wake": lifecycle.wake,
        "kill": lifecycle.kill,
        "rm": lifecycle.rm,
    }
    act = actions[user]
    app.clock = ActingClock(app.clock.now(), lambda: act(app, "w1"))
    assert supervise.on_pane_died(app, pane.id) == "left"
    assert len(fake.calls_of("respawn")) == (1 if user == "wake" else 0)  # never a second start


@pytest.mark.parametrize("case", ["unknown pane", "alive", "untagged"])
def test_deaths_that_are_not_an_agent_exit_are_ignored(app: App, fake: FakeTmux, case: str) -> None:
    agent = spawn(app, "w1", restart="on-failure")
    keeper = next(p for p in fake.list_panes() if p.is_keeper)
    pane_id = {"unknown pane": "%99", "alive": pane_of(fake, agent).id, "untagged": keeper.pane_id}[
        case
    ]
    if case == "untagged":
        fake.exit(pane_id, 0)
    assert supervise.on_pane_died(app, pane_id) == "ignored"
    assert kinds(app, agent) == ["spawned", "started"]


def test_the_mcp_send_to_a_busy_child_gives_up_within_its_bound(
    app: App, fake: FakeTmux, clock: ManualClock
) -> None:
    patterns = dict(app.settings.patterns["command"])
    app.settings = replace(
        app.settings, patterns={"command": {**patterns, "working": ("busy now",)}}
    )
    agent = spawn(app, "w1")
    fake.set_screen(pane_of(fake, agent).id, "busy now")
    began = clock.monotonic()
    receipt = orchestrate.send_to(app, Caller(None, allow_write=True), "w1", "hello")
    assert receipt["delivered"] is False
    assert receipt["how"].startswith("timed out after 30 s waiting for w1 to be ready")
    assert clock.monotonic() - began <= orchestrate.SEND_TIMEOUT + 1  # not the CLI's minute
    assert fake.calls_of("paste") == []


def test_a_draft_is_never_pasted_into(app: App, fake: FakeTmux) -> None:
    agent = spawn(app, "cl", provider="claude")
    fake.set_screen(pane_of(fake, agent).id, "fake-claude session x\n❯ half a thought")
    sent = send.send(app, "cl", "hello")
    assert not sent.delivered and '("half a thought")' in sent.how
    assert fake.calls_of("paste", "send_enter") == []
    last = app.store.events(agent.id)[-1]
    assert (last.kind, last.data["delivered"]) == ("sent", False)


def test_a_turn_that_fails_right_after_the_cli_took_the_text_is_delivered_and_failed(
    app: App, fake: FakeTmux
) -> None:
    """The CLI cleared its input (it took the text) and its turn failed at once: that is a
    delivery whose turn failed, never "not delivered" (a script would send it twice)."""
    agent = spawn(app, "cx", provider="codex")
    pane = pane_of(fake, agent).id
    fake.set_screen(pane, "› Ask Codex to do anything\n? for shortcuts")
    fake.on_enter = lambda p: fake.set_screen(
        p.id, "› hello\n■ unexpected status 401 Unauthorized: bad key\n› \n? for shortcuts"
    )
    sent = send.send(app, "cx", "hello")
    assert sent.delivered and sent.how == "screen"
    assert sent.failure == "unexpected status 401 Unauthorized: bad key"
    last = app.store.events(agent.id)[-1]
    assert (last.kind, last.data["delivered"]) == ("sent", True)


def test_an_error_with_the_text_still_typed_is_not_delivered(app: App, fake: FakeTmux) -> None:
    agent = spawn(app, "cx", provider="codex")
    pane = pane_of(fake, agent).id
    fake.set_screen(pane, "› Ask Codex to do anything\n? for shortcuts")
    fake.on_enter = lambda p: fake.set_screen(
        p.id, "◦ Reconnecting to server… (2s)\n› hello\n? for shortcuts"
    )
    sent = send.send(app, "cx", "hello")
    assert not sent.delivered and "Reconnecting to server" in sent.how


def test_a_send_that_wakes_its_agent_ends_within_its_timeout(
    app: App, fake: FakeTmux, clock: ManualClock
) -> None:
    """The start check of the wake inside a send is cut to what is left of --timeout (it used
    to take its own 3 s on top)."""
    agent = spawn(app, "w1")
    fake.exit(pane_of(fake, agent).id, 0)
    fake.on_start = lambda pane: None  # the CLI draws nothing: its start never shows it held
    began = clock.monotonic()
    sent = send.send(app, "w1", "hello", timeout=1.0)
    assert not sent.delivered and sent.timed_out
    assert clock.monotonic() - began <= 1.0 + 0.2


# ---- the O(1) promise: a status refresh costs the same tmux calls for one agent or ten --------
def test_a_refresh_costs_the_same_tmux_calls_for_one_agent_or_ten(app: App, fake: FakeTmux) -> None:
    """One listing and at most one chained capture, whatever the number of agents (it was a
    real-tmux test of ten spawns: 34 s to count what the fake counts in milliseconds; the
    real client's capture is held to the fake's by tests/test_tmux_parity.py)."""
    from roost.ops import observe

    def calls_for_refresh() -> int:
        before = fake.calls
        observe.refresh(app)
        return fake.calls - before

    spawn(app, "a0")
    fake.set_screen(pane_of(fake, app.store.require("a0")).id, "output with no prompt")
    one = calls_for_refresh()
    for i in range(1, 10):
        spawn(app, f"a{i}")
        fake.set_screen(pane_of(fake, app.store.require(f"a{i}")).id, "output with no prompt")
    ten = calls_for_refresh()
    assert one == ten == 2  # the listing, and one capture for the screens it needs


def test_a_status_another_writer_beat_is_judged_again_against_the_new_record(
    app: App, fake: FakeTmux, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A look read the record, then a launch stored `starting` before the look's change was
    written: the change was dropped (its record had changed) and, its CLI's output over, the
    agent read `starting` until the monitor's safety net two minutes later."""
    from roost.ops import observe

    agent = spawn(app, "w1")
    fake.set_screen(pane_of(fake, agent).id, "some output, and no prompt")
    look = observe._look
    raced: list[bool] = []

    def then_a_launch(*args: object, **kw: object) -> list[Observation]:
        found = look(*args, **kw)  # type: ignore[arg-type]
        if not raced:  # the launch's own write lands between the look and its record
            raced.append(True)
            app.store.update(agent.id, status="starting", status_source="process")
        return found

    clock.advance(120)  # past the start's grace: the screen says what the agent does
    fake.set_screen(pane_of(fake, agent).id, PROMPT)
    app.store.update(agent.id, status=None, status_source=None)  # as its spawn stored it
    monkeypatch.setattr(observe, "_look", then_a_launch)
    found = {o.agent.name: o.status for o in observe.refresh(app)}
    assert raced and found["w1"] == "idle"
    assert app.store.require("w1").status == "idle"
