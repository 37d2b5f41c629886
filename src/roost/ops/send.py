"""`roost send`: deliver text to an agent and confirm that this very text arrived.

Sends to one agent are serialised (a lock per agent, across processes): paste, Enter and
confirmation of one message never interleave with another's. Text of any length goes in as one
bracketed paste through a buffer of its own (newlines stay newlines; the end-of-paste sequence
cannot escape it), then Enter after the provider's pause (CLIs take an Enter that arrives with
a paste as a newline). Delivery is confirmed by the best signal: the UserPromptSubmit hook
carrying this text, for a CLI with hooks; else this text in the CLI's own record of the
conversation (gemini's chat file, aider's chat history: ops/cli_record.py); else the screen
changing. A slash command (`/clear`) is confirmed by its effect, since CLIs run it without a
prompt event: a hook it fires (the new session of /clear, a compaction), else the screen
changing, or the CLI exiting (`/exit`). ops/confirm reads those signals, look by look, and
core/confirming decides each next step; the verdict is a `delivery.Verdict`.
A stopped or hibernated agent is woken first; one that shows an error (its CLI is broken or its
last turn failed) is refused with the CLI's words, and so is one with a draft typed on its input
line (never merged into, never lost). What to do is core.delivery's decision; this module only
looks and acts. One deadline (`timeout`) bounds the whole send, each phase also its own limit.
A reply waited for is this turn's, or a timeout: never an earlier one; a turn that fails gives
its error instead.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from roost.core import delivery, present, replies, status
from roost.core.delivery import Confirmed
from roost.core.errors import HeldStopped, RoostError, StartFailed
from roost.core.model import Agent
from roost.core.observation import Observation, epoch
from roost.core.pane import agent_panes
from roost.core.starts import HOLD_WINDOW
from roost.core.status import SETTLED, Status
from roost.ops import cli_record, confirm, lifecycle, observe
from roost.ops import replies as answers
from roost.ops.cli_record import readable
from roost.ops.context import App
from roost.ops.learn import launch_token
from roost.providers import hooks, mcpwire, traits
from roost.store import events as event_log
from roost.store import orchestration as notices_queue
from roost.store import status as stored_status
from roost.system import locks

READY = (Status.IDLE,)
NO_SIGN = delivery.NO_SIGN
QUEUED = Confirmed.QUEUED  # it holds the text until it is ready: a delivery
SLASH_COMMAND = re.compile(r"/[A-Za-z][\w:.-]*(?:[ \t][^\n]*)?")
# The text a send pasted and has not pressed Enter for yet (and the parent's notices it
# carries): if the send dies there, the next one knows the text on the input line is roost's.
PENDING = "pending-send.json"


@dataclass(frozen=True, slots=True)
class Sent:
    delivered: bool
    how: str  # what confirmed it (a delivery.Confirmed), or why not
    reply: str | None = None
    # Not delivered: a time limit ran out (`how` says which); delivered: --wait had no reply in
    # time (reply is None then).
    timed_out: bool = False
    failure: str | None = None  # the turn it started ended in an error (the CLI's words)
    no_reply: str | None = None  # --wait, the turn ended but no reply was found: why
    note: str | None = None  # an interrupted send's text it submitted first
    draft: bool = False  # not delivered: someone's draft sits on its input line


def _observed(app: App, name: str) -> Observation:
    found = observe.one(app, name)
    if found is None:
        raise RoostError(f"no agent named {name!r}")
    return found


def _wait_status(
    app: App, name: str, wanted: tuple[str, ...], timeout: float
) -> tuple[Observation, bool]:
    """The agent's observation once its status is one of `wanted`, and whether it got there
    before the timeout."""
    deadline = app.clock.monotonic() + timeout
    while True:
        found = _observed(app, name)
        if found.status in wanted:
            return found, True
        left = deadline - app.clock.monotonic()
        if left <= 0:
            return found, False
        app.clock.sleep(min(0.2, left))


def send(
    app: App,
    name: str,
    text: str,
    wait: bool = False,
    *,
    timeout: float | None = None,
    ready_timeout: float = delivery.READY_TIMEOUT,
    confirm_timeout: float = delivery.CONFIRM_TIMEOUT,
    reply_timeout: float = delivery.REPLY_TIMEOUT,
    notices: Sequence[int] = (),
    resuming: bool = False,
) -> Sent:
    """Deliver `text` to agent `name`; `timeout` bounds the whole send (the wake, the wait for
    the agent to be ready, the paste and its confirmation, the reply waited for), each phase is
    also bounded by its own limit. `notices`: the parent's queued notices `text` carries
    (ops/notify), marked delivered when an interrupted send of it is finished later.
    `resuming`: roost's resume at a usage limit's reset (ops/resume.py) tries past the limit's
    record; any other delivered send cancels that resume."""
    # The text as it is pasted (text, never keys): what the CLI's record is compared with.
    text = delivery.paste_safe(text)
    if not text:
        raise RoostError("nothing to send: give TEXT or pipe it on stdin", code=2)
    budget = delivery.Budget(
        app.clock.monotonic(), timeout, ready_timeout, confirm_timeout, reply_timeout
    )
    limited = None if resuming else _stored_limit(app, name)
    if limited is not None:  # at once: no wake, no text bounced off the limit
        return _not_delivered(app, app.store.require(name), text, limited)
    try:
        # wake on use, its start check within what is left of the send's time; notices never
        # wake an agent its person stopped (a kill may end while they are on their way)
        lifecycle.wake(
            app,
            name,
            hold_for=budget.left(app.clock.monotonic(), HOLD_WINDOW),
            unless_stopped=bool(notices),
        )
    except (StartFailed, HeldStopped) as exc:
        return _not_delivered(app, app.store.require(name), text, str(exc))
    # One message at a time per agent: its paste, Enter and confirmation, and the readiness
    # check before them. The key cannot be an agent name ('.' is not allowed in names).
    queue_for = budget.left(app.clock.monotonic(), ready_timeout + 2 * confirm_timeout)
    with locks.hold(app.paths.locks, f"{name}.send", timeout=queue_for):
        note = _finish_interrupted(app, name, budget)
        sent = _send_locked(app, name, text, wait, budget, tuple(notices), resuming)
        return sent if note is None else dataclasses.replace(sent, note=note)


def finish_interrupted(app: App, name: str) -> str | None:
    """Submit the text an interrupted send left on the agent's input line, if it is there as
    roost left it (ops/notify does this before it reads its queue, so a notice the text carries
    is not sent again); what was done, or None."""
    budget = delivery.Budget(app.clock.monotonic(), None)
    with locks.hold(app.paths.locks, f"{name}.send", timeout=budget.ready + 2 * budget.confirm):
        return _finish_interrupted(app, name, budget)


def _pending_path(app: App, agent_id: str) -> str:
    return os.path.join(os.path.dirname(hooks.log_path(str(app.paths.home), agent_id)), PENDING)


def _remember(app: App, agent: Agent, text: str, notices: tuple[int, ...]) -> None:
    mcpwire.write_private(
        str(app.paths.home), agent.id, PENDING, {"text": text, "notices": list(notices)}
    )


def _forget(app: App, agent_id: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(_pending_path(app, agent_id))


def _leftover(app: App, agent_id: str) -> tuple[str, list[int]] | None:
    """The text (and notices) of a send that pasted and never pressed Enter, if one did."""
    try:
        with open(_pending_path(app, agent_id), encoding="utf-8") as fh:
            found = json.load(fh)
        text, notices = found["text"], found.get("notices", [])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if not isinstance(text, str) or not all(isinstance(n, int) for n in notices):
        return None
    return text, list(notices)


def _finish_interrupted(app: App, name: str, budget: delivery.Budget) -> str | None:
    """An interrupted send's text still on the input line, just as roost pasted it: press its
    Enter and confirm it like any send (its notices delivered); gone (submitted or cleared by
    a person): forget it. Someone typed on it: leave it, a draft the send refuses."""
    agent = app.store.require(name)
    left = _leftover(app, agent.id)
    if left is None:
        return None
    text, notices = left
    _, now_status, _, typed = _ready(
        app,
        name,
        (*READY, "waiting", "error", "exited", "stopped", "failed"),
        budget.left(app.clock.monotonic(), budget.ready),
    )
    pane = agent_panes(app.tmux.list_panes()).get(agent.id)
    if pane is None or pane.dead or now_status != Status.IDLE:
        return None
    if typed is None or not delivery.left_by_roost(typed, text):
        if typed is None:
            _forget(app, agent.id)
        return None
    command = is_slash_command(text)
    quirks = traits.of(agent.provider)
    record = None if quirks.hooks or command else readable(app, agent)
    plan = delivery.decide(
        delivery.Found(name, "idle", True, 0.0),
        command=command,
        has_hooks=quirks.hooks,
        has_record=record is not None,
    )
    log = hooks.log_path(str(app.paths.home), agent.id)
    log_before = hooks.size(log)
    screen_before = app.tmux.capture(pane.pane_id, 200) if plan.screen_baseline else None
    app.tmux.send_enter(pane.pane_id)
    _forget(app, agent.id)
    verdict = confirm.confirm(
        app,
        agent,
        pane.pane_id,
        text,
        plan.confirm_by,
        confirm.Before(log, log_before, screen_before, record),
        budget.left(app.clock.monotonic(), budget.confirm),
        app.clock.monotonic() + budget.left(app.clock.monotonic(), budget.ready),
    )
    how = verdict.said(name)
    app.store.log(
        agent,
        "sent",
        delivered=verdict.took,
        chars=len(text),
        confirmed_by=how,
        interrupted_send=True,
    )
    if not verdict.took:
        return None
    if notices:
        with app.store.write() as c:
            notices_queue.mark_delivered(c, notices, app.store.now_iso())
        app.store.log(
            agent, "notified", notices=len(notices), confirmed_by=how, interrupted_send=True
        )
    return delivery.finished_note(name, text)


def _send_locked(
    app: App,
    name: str,
    text: str,
    wait: bool,
    budget: delivery.Budget,
    notices: tuple[int, ...],
    resuming: bool = False,
) -> Sent:
    began = app.clock.now().timestamp()  # a resume planned before this is superseded
    ready_for = budget.left(app.clock.monotonic(), budget.ready)
    found, now_status, in_time, typed = _ready(
        app,
        name,
        (*READY, "waiting", "error", "limited", "exited", "stopped", "lost", "failed"),
        ready_for,
        resuming=resuming,
    )
    agent = app.store.require(name)
    pane = agent_panes(app.tmux.list_panes()).get(agent.id)
    alive = pane is not None and not pane.dead
    command = is_slash_command(text)
    quirks = traits.of(agent.provider)
    record = None if quirks.hooks or command else readable(app, agent)
    plan = delivery.decide(
        delivery.Found(
            name,
            now_status,
            in_time,
            round(ready_for, 1),
            _limited(app, found) if found.status == Status.LIMITED else found.status_reason,
            alive,
            typed,
        ),
        command=command,
        has_hooks=quirks.hooks,
        has_record=record is not None,
    )
    if not plan.deliver or pane is None:
        return _not_delivered(
            app, agent, text, plan.why, timed_out=plan.timed_out, draft=plan.draft
        )
    log = hooks.log_path(str(app.paths.home), agent.id)
    log_before = hooks.size(log)
    # A CLI without a Stop hook: its record's turns that asked this text already, so the reply
    # read afterwards is this turn's (_recorded_reply).
    asked_before = answers.asked(app, agent, text) if wait and not quirks.hooks else (0, 0)
    looked = event_log.last_id(app.store.conn)  # a look that records this turn: after it
    screen_before = _enter(app, agent, pane.pane_id, text, notices, plan.screen_baseline)
    confirm_for = budget.left(app.clock.monotonic(), budget.confirm)
    verdict = confirm.confirm(
        app,
        agent,
        pane.pane_id,
        text,
        plan.confirm_by,
        confirm.Before(log, log_before, screen_before, record),
        confirm_for,
        app.clock.monotonic() + budget.left(app.clock.monotonic(), budget.ready),
    )
    if not verdict.took:
        return _unconfirmed(app, agent, text, verdict, confirm_for, budget)
    how, failure = verdict.said(name), verdict.failure
    if verdict.how == Confirmed.RECORD:
        app.store.update(agent.id, conversation_seen=True)
    if verdict.how == Confirmed.HOOK and not command and failure is None:  # a turn
        turn_begun(app, agent, looked, log, log_before, "send")
    if not resuming and not notices:  # issue 23: it supersedes a resume at a limit's reset
        from roost.ops import resume

        resume.note_send(app, name, text, began)
    # a CLI command (/clear) is no turn (a budget waits for one: budgets/rules.began_turn)
    said: dict[str, object] = {"chars": len(text), "confirmed_by": how}
    if command:
        said["command"] = True
    if failure is not None:
        app.store.log(agent, "sent", delivered=True, failure=failure, **said)
        return Sent(True, how, failure=failure)
    app.store.log(agent, "sent", delivered=True, **said)
    if not wait:
        return Sent(True, how)
    reply_for = budget.left(app.clock.monotonic(), budget.reply)
    if not quirks.hooks and answers.turns(app, agent) is not None:
        return _recorded_reply(app, agent, how, text, asked_before, reply_for)
    return _hooked_reply(app, agent, how, text, log_before, reply_for)


def _enter(
    app: App, agent: Agent, pane_id: str, text: str, notices: tuple[int, ...], baseline: bool
) -> str | None:
    """Paste `text` and press its Enter after the provider's pause; the screen between the two
    when the screen may confirm it (`baseline`). Until the Enter, the text is remembered: a
    send killed there leaves it for the next one (_finish_interrupted)."""
    _remember(app, agent, text, notices)  # until its Enter: a kill -9 leaves the file
    try:
        app.tmux.paste(pane_id, text, f"roost-send-{agent.id}-{os.urandom(4).hex()}")
        app.clock.sleep(traits.of(agent.provider).enter_delay)
        if agent.provider in traits.PASTE_MAY_DROP and _just_resumed(app, agent):
            _paste_held(app, agent, pane_id, text)
        # The baseline is the screen with the pasted text in the input, so what confirms
        # delivery is the Enter's effect, not the paste's.
        screen_before = app.tmux.capture(pane_id, 200) if baseline else None
        app.tmux.send_enter(pane_id)
    except KeyboardInterrupt:
        raise RoostError(delivery.cut_before_enter(agent.name), code=130) from None
    _forget(app, agent.id)
    return screen_before


PASTE_SHOWS = 1.5  # seconds a paste may take to show on the input line before it counts lost
PASTE_TRIES = 3
JUST_RESUMED = 60.0  # seconds after a resumed start (a wake) in which a paste may be dropped


def _just_resumed(app: App, agent: Agent) -> bool:
    """Started again (a wake, resuming its session) less than JUST_RESUMED seconds ago: the
    moment a resumed Gemini loads its session and empties its input."""
    started = epoch(agent.started_at)
    return (
        agent.launches > 1
        and started is not None
        and app.clock.now().timestamp() - started < JUST_RESUMED
    )


def _paste_held(app: App, agent: Agent, pane_id: str, text: str) -> None:
    """The paste is on the CLI's input line before its Enter: one the CLI dropped (its input
    was not ready: traits.PASTE_MAY_DROP) is pasted again into the empty line. No Enter went
    yet, so the text is typed once; anything on the line (the paste, even drawn late) stops."""
    line = traits.INPUT_LINES[agent.provider]
    for _ in range(PASTE_TRIES):
        until = app.clock.monotonic() + PASTE_SHOWS
        while True:
            screen = app.tmux.capture(pane_id, 200)
            if status.draft(screen, line.markers, line.window, line.placeholders) is not None:
                return
            if app.clock.monotonic() >= until:
                break
            app.clock.sleep(0.1)
        app.tmux.paste(pane_id, text, f"roost-send-{agent.id}-{os.urandom(4).hex()}")
        app.clock.sleep(traits.of(agent.provider).enter_delay)


def _unconfirmed(
    app: App,
    agent: Agent,
    text: str,
    verdict: delivery.Verdict,
    confirm_for: float,
    budget: delivery.Budget,
) -> Sent:
    """Not delivered: the error its screen shows, or no sign in time (a time limit cut short
    by the send's: a timeout, and it may still take it)."""
    cut = verdict.error is None and confirm_for < budget.confirm
    why = (
        f"timed out after {confirm_for:g} s waiting "
        f"for a sign that {agent.name} took it (it may still take it)"
        if cut
        else verdict.said(agent.name)
    )
    return _not_delivered(app, agent, text, why, timed_out=cut)


def _hooked_reply(
    app: App, agent: Agent, how: str, text: str, log_before: int, timeout: float
) -> Sent:
    """The answer of this turn once the agent settles: its Stop hook's, else its record's
    (ops/replies.answer_to); the turn's failure if it shows an error; or a timeout."""
    settled, in_time = _wait_status(app, agent.name, SETTLED, timeout)
    if not in_time:
        return Sent(True, how, timed_out=True)
    if settled.status in (Status.ERROR, Status.LIMITED):  # a usage limit cut the turn: its words
        return Sent(True, how, failure=settled.status_reason or "the CLI shows an error")
    reply = answers.answer_to(app, agent, text, log_before)
    why = replies.NOT_RECORDED if traits.of(agent.provider).hooks else answers.NO_RECORD
    return Sent(True, how, reply, no_reply=None if reply is not None else why)


def turn_begun(app: App, agent: Agent, looked: int, log: str, log_before: int, source: str) -> None:
    """Record the turn a prompt began, its UserPromptSubmit in the hook log after `log_before`
    (store/status.record_turn_begun; `looked`: the last event before it went). When its Stop is in
    the hook log already, what that Stop set off (the service's look, the hook's `roost
    _notify`) may have come before this record and found nothing new: look now (its end is
    recorded, a line of the event stream, a parent's notice queued), and start the delivery as
    the hook does."""
    from roost.core.lineage import TOKEN_ENV
    from roost.ops.context import IN_SUPERVISOR
    from roost.system.locate import tmux_client_env

    at = app.store.now_iso()
    with app.store.write() as c:
        if not stored_status.record_turn_begun(c, agent.id, agent.name, looked, source, at):
            return
    seen, _ = hooks.read_since(log, log_before, launch_token(app, agent.id))
    began = next((i for i, (_, e, _p) in enumerate(seen) if e == "UserPromptSubmit"), None)
    if began is None or not any(e in ("Stop", "StopFailure") for _, e, _p in seen[began:]):
        return  # its end is still to come, and what it sets off comes after this record
    observe.refresh(app)
    if agent.orchestration_parent:  # outside this process: a delivery takes its own locks
        # as nobody's agent, as hook.sh starts it: no agent tags, no launch token
        env = {k: v for k, v in tmux_client_env(app.environ).items() if k != TOKEN_ENV}
        app.procs.run_outside([*lifecycle.roost_command(), "_notify"], {**env, IN_SUPERVISOR: "1"})


def _recorded_reply(
    app: App, agent: Agent, how: str, text: str, asked_before: tuple[int, int], timeout: float
) -> Sent:
    """The answer of this turn from the CLI's own record (codex, gemini, aider), once it is
    there; the turn's failure if it shows an error; else, when it stops (core.replies), why
    there is none; or a timeout."""
    deadline = app.clock.monotonic() + timeout
    worked, idle_since = False, None
    joins = bool(traits.of(agent.provider).queued)  # it may join its queue into one prompt
    while True:
        reply = replies.this_answer(answers.turns(app, agent) or [], text, asked_before, joins)
        if reply is not None:
            return Sent(True, how, reply)
        found = _observed(app, agent.name)
        if found.status in (Status.ERROR, Status.LIMITED):
            return Sent(True, how, failure=found.status_reason or "the CLI shows an error")
        now = app.clock.monotonic()
        worked = worked or found.status == Status.WORKING
        if found.status != Status.IDLE:
            idle_since = None
        elif idle_since is None:
            idle_since = now
        why = replies.why_no_reply(
            found.status, worked, 0.0 if idle_since is None else now - idle_since
        )
        if why is not None:
            return Sent(True, how, no_reply=why)
        if now >= deadline:
            return Sent(True, how, timed_out=True)
        app.clock.sleep(min(0.3, deadline - now))


def _ready(
    app: App, name: str, wanted: tuple[str, ...], timeout: float, resuming: bool = False
) -> tuple[Observation, str | None, bool, str | None]:
    """The agent's observation once its status is one of `wanted`; that status as a send reads
    it (a resume's try past a limit, ops/resume.py, takes a limited agent's input line as
    idle); whether it got there before the timeout; and, when it is idle, the draft on its
    input line. A look for the draft that finds the CLI busy after all waits for it again; when
    time runs out there, it is not ready, or holds the draft the last look saw (a person
    typing)."""
    deadline = app.clock.monotonic() + timeout
    while True:
        found, in_time = _wait_status(app, name, wanted, max(0.0, deadline - app.clock.monotonic()))
        now_status = "idle" if resuming and found.status == Status.LIMITED else found.status
        pane = agent_panes(app.tmux.list_panes()).get(found.agent.id)
        if not in_time or now_status != Status.IDLE or pane is None or pane.dead:
            return found, now_status, in_time, None
        typed = _draft(app, found.agent.provider, pane.pane_id)
        if not isinstance(typed, Busy):
            return found, now_status, True, typed
        if app.clock.monotonic() >= deadline:
            if typed.draft is not None:
                return found, now_status, True, typed.draft
            return found, typed.status, False, None
        app.clock.sleep(0.2)


class Busy:
    """What a look for a draft found instead of a steady input line: the CLI working or
    waiting (gemini loading a resumed session draws no input line), or two looks that disagree
    (a frame caught half drawn, a person typing: `draft` is what the last look saw)."""

    def __init__(self, draft: str | None = None, status: str = "working") -> None:
        self.draft = draft
        self.status = status  # what the send says it is, if time runs out on it


STEADY = 0.3  # seconds between the two looks that must agree on a draft


def _draft(app: App, provider: str, pane_id: str) -> str | Busy | None:
    """The text typed on the agent's input line and not submitted: what two looks a moment
    apart agree on (a CLI that redraws its whole screen can be caught with its history drawn
    and its input box not yet: the history's last prompt is no draft). None when the provider
    has no known input line (a command) or it is empty; Busy when a look shows a CLI without
    hooks working or waiting, or the two looks disagree."""
    if provider not in traits.INPUT_LINES:
        return None
    # the screen tells a CLI without hooks busy (one with hooks says so by its hooks)
    patterns = None if traits.of(provider).hooks else observe.patterns_of(app, provider)

    def look() -> str | Busy | None:
        screen = app.tmux.capture(pane_id, 50)
        seen = status.from_screen(screen, patterns) if patterns else None
        if seen in ("working", "waiting"):
            return Busy(status=seen)
        return cli_record.typed(provider, screen)

    first = look()
    if not isinstance(first, str):
        return first
    app.clock.sleep(STEADY)
    second = look()
    if second == first:
        return first
    return second if isinstance(second, Busy) else Busy(second)


def is_slash_command(text: str) -> bool:
    """A CLI command typed at the prompt (`/clear`, `/model opus`): one line, a slash and a
    command name first (a path such as `/tmp/x` is not one). A message that only looks like
    one loses nothing: its UserPromptSubmit still confirms it."""
    return SLASH_COMMAND.fullmatch(text.strip()) is not None


def _not_delivered(
    app: App, agent: Agent, text: str, why: str, timed_out: bool = False, draft: bool = False
) -> Sent:
    app.store.log(agent, "sent", delivered=False, chars=len(text), reason=why)
    return Sent(False, why, timed_out=timed_out, draft=draft)


def _stored_limit(app: App, name: str) -> str | None:
    """What a send says to an agent with no live process whose last limit still holds (a live
    one is judged by its screen and hooks, fresher than the record)."""
    from roost.limits import rules as limits
    from roost.store import limits as stored
    from roost.system.clock import local_zone

    now = app.clock.now().timestamp()
    for agent_name, _provider, limit, seen_at in stored.seen(app.store.conn):
        if agent_name != name or not limits.current(limit, seen_at, now):
            continue
        agent = app.store.require(name)
        pane = agent_panes(app.tmux.list_panes()).get(agent.id)
        if pane is not None and not pane.dead:
            return None
        said = present.limited_until(name, limit.resets_at, now, local_zone(app.environ))
        return f"{said}: {limit.words}"
    return None


def _limited(app: App, found: Observation) -> str:
    """What a send to a limited agent says: until when (in the reader's zone), and the CLI's
    words."""
    from roost.system.clock import local_zone

    resets = found.limit.resets_at if found.limit is not None else None
    now = app.clock.now().timestamp()
    said = present.limited_until(found.agent.name, resets, now, local_zone(app.environ))
    return f"{said}: {found.status_reason}" if found.status_reason else said
