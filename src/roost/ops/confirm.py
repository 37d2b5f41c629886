"""Whether an agent took the message a send just entered: its signals read, look by look, until
core.confirming decides. Each signal is a small reader over what it is given: the hook log past
the send's offset (`HookReader`), the CLI's own record of the conversation (`RecordReader`:
gemini's chat file, aider's history), the screen (`ScreenReader`), the pane (`pane_state`).
What a look means and what comes next (a verdict, or another look) is core.confirming's; this
module only reads, and does what a step asks (note a look for the record, press Enter again)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from roost.core import confirming, delivery, status
from roost.core.confirming import EFFECT, Looking, Seen, Signals
from roost.core.delivery import Verdict
from roost.core.model import Agent
from roost.core.pane import agent_panes
from roost.ops import cli_record, observe
from roost.ops.cli_record import Record
from roost.ops.context import App
from roost.ops.learn import launch_token
from roost.providers import hooks, traits

SCREEN_LINES = 200  # lines of the pane a look captures
PAUSE = 0.1  # seconds between two looks


@dataclass(frozen=True, slots=True)
class Before:
    """What a send noted before its Enter: the hook log and its size, the screen with the text
    pasted (the baseline, when the screen may confirm it), the CLI's record (None: it keeps
    none roost reads, or the record does not confirm this text)."""

    log: str
    log_size: int
    screen: str | None = None
    record: Record | None = None


class HookReader:
    """The agent's hook lines past the send's offset, its current launch's only."""

    def __init__(self, app: App, agent: Agent, before: Before, text: str, command: bool) -> None:
        self.log, self.since = before.log, before.log_size
        self.token = launch_token(app, agent.id)  # whose hook lines count
        self.text, self.command, self.session_id = text, command, agent.provider_session_id

    def read(self) -> str | None:
        """What the hooks show (core.confirming.by_hooks), or None."""
        events, _ = hooks.read_since(self.log, self.since, self.token)
        return confirming.by_hooks(events, self.text, self.command, self.session_id)


class RecordReader:
    """The prompts the CLI recorded since the paste."""

    def __init__(self, record: Record, text: str) -> None:
        self.record, self.text = record, text

    def read(self, queued: bool) -> bool:
        """Whether one is the text; for a text the CLI `queued`, also one part of the prompt it
        made of its queue."""
        return any(recorded(prompt, self.text, queued) for prompt in self.record.prompts())


@dataclass(frozen=True, slots=True)
class ScreenLook:
    shown: str
    changed: bool  # since the baseline
    error: str | None  # the reason its error patterns give
    held: bool  # the text listed in the CLI's queue
    submitted: bool  # the input line no longer holds the text


class ScreenReader:
    """The agent's screen, against the baseline taken before the Enter."""

    def __init__(
        self, app: App, provider: str, pane_id: str, baseline: str | None, text: str
    ) -> None:
        self.capture: Callable[[], str] = lambda: app.tmux.capture(pane_id, SCREEN_LINES)
        self.error_of: Callable[[str], str | None] = lambda s: screen_error(app, provider, s)
        self.provider, self.baseline, self.text = provider, baseline, text
        self.queue_headings = traits.of(provider).queued

    def read(self) -> ScreenLook:
        shown = self.capture()
        error = self.error_of(shown)
        return ScreenLook(
            shown,
            shown != self.baseline,
            error,
            delivery.held_in_queue(shown, self.queue_headings, self.text),
            error is not None and took_from_input(self.provider, shown, self.text),
        )


def pane_state(app: App, agent_id: str) -> Literal["alive", "dead", "gone"]:
    pane = agent_panes(app.tmux.list_panes()).get(agent_id)
    return "gone" if pane is None else "dead" if pane.dead else "alive"


def confirm(
    app: App,
    agent: Agent,
    pane_id: str,
    text: str,
    confirm_by: tuple[str, ...],
    before: Before,
    timeout: float,
    queued_until: float | None = None,
) -> Verdict:
    """Whether the agent took `text` and what shows it (hook, new session id, session file,
    screen, exit; and its turn's failure, if it failed at once), looking for the signals
    `confirm_by` names (core.delivery) for `timeout` seconds (`queued_until`: longer for a text
    the CLI holds in its queue). A screen that shows an error confirms the text only if the
    CLI's input no longer holds it."""
    signals = Signals.of(confirm_by, before.record is not None)
    hook = HookReader(app, agent, before, text, signals.command) if signals.hooks else None
    record = RecordReader(before.record, text) if before.record is not None else None
    screen = ScreenReader(app, agent.provider, pane_id, before.screen, text)
    looking = Looking.start(app.clock.monotonic(), timeout, signals)
    while app.clock.monotonic() < looking.deadline:
        seen, shown = _look(app, agent.id, looking, hook, record, screen)
        step = confirming.decide(seen, looking, app.clock.monotonic(), signals, queued_until)
        if isinstance(step, Verdict):
            return step
        looking = step.looking
        if before.record is not None and step.watch:
            before.record.watch(text, shown)
        if before.record is not None and step.nudge:
            before.record.nudge(pane_id, text, shown)
            looking = looking.nudged(app.clock.monotonic())
        app.clock.sleep(PAUSE)
    return looking.verdict()


def _look(
    app: App,
    agent_id: str,
    looking: Looking,
    hook: HookReader | None,
    record: RecordReader | None,
    screen: ScreenReader,
) -> tuple[Seen, str]:
    """One look: the readers a look needs, in the order that keeps a race honest (the hooks
    after the pane, so a hook that landed before a death counts; the record again after an
    error the screen drew), and the screen it captured."""
    pane = pane_state(app, agent_id)
    hooked = hook.read() if hook is not None else None
    queued = looking.queued
    if pane != "alive":
        return Seen(hooked, pane, record is not None and record.read(queued)), ""
    if record is not None:
        if record.read(queued):
            return Seen(hooked, pane, recorded=True), ""
        look = screen.read()
        again = look.error is not None and not look.held and record.read(queued)
        return _seen(hooked, look, again), look.shown
    if screen.baseline is None or looking.found is not None or hooked == EFFECT:
        return Seen(hooked, pane), ""  # the screen confirms nothing (more) here
    look = screen.read()
    return _seen(hooked, look, False), look.shown


def _seen(hooked: str | None, look: ScreenLook, recorded: bool) -> Seen:
    return Seen(
        hooked, "alive", recorded, True, look.changed, look.error, look.held, look.submitted
    )


def recorded(prompt: object, text: str, queued: bool) -> bool:
    """Whether a prompt in the CLI's record is `text`; for a text it held in its queue, also
    one part of the prompt it made of its queue."""
    return delivery.same_message(prompt, text) or (queued and delivery.in_joined(prompt, text))


def took_from_input(provider: str, screen: str, text: str) -> bool:
    """Whether the CLI's input line no longer holds `text` (it submitted it); False when the
    provider's input line is unknown."""
    if provider not in traits.INPUT_LINES:
        return False
    typed = cli_record.typed(provider, screen)
    first = text.strip().splitlines()[0] if text.strip() else ""
    return typed is None or not (typed.startswith(first[:40]) or first.startswith(typed))


def screen_error(app: App, provider: str, screen: str) -> str | None:
    """The reason when the screen shows the provider's error patterns (config.toml's
    included), else None."""
    found = status.reading(screen, observe.patterns_of(app, provider))
    return (found[1] or "the CLI shows an error") if found and found[0] == "error" else None
