"""`roost send`: deliver text to an agent and confirm that this very text arrived.

Sends to one agent are serialised (a lock per agent, across processes): paste, Enter and
confirmation of one message never interleave with another's. Text of any length goes in as one
bracketed paste through a buffer of its own (newlines stay newlines; the end-of-paste sequence
cannot escape it), then Enter after the provider's pause (CLIs take an Enter that arrives with
a paste as a newline). Delivery is confirmed by the best signal: the UserPromptSubmit hook
carrying this text, for a CLI with hooks; else this text in the CLI's own record of the
conversation (gemini's chat file, aider's chat history), where Enter is pressed again while it
is not there (a CLI busy starting can take an Enter for a newline, or drop it); else the screen
changing. A stopped or hibernated agent is woken first. A reply waited for is this turn's, or a
timeout: never an earlier one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from roost.core import status
from roost.core.errors import RoostError
from roost.core.model import Agent
from roost.core.observation import Observation
from roost.core.pane import agent_panes
from roost.ops import lifecycle, observe
from roost.ops.context import App
from roost.providers import hooks, traits
from roost.providers.base import get as provider
from roost.system import locks

READY = ("idle",)
ENTER_AGAIN = 2.0  # seconds without this text in the CLI's record before Enter is pressed again
SETTLED = ("idle", "waiting", "exited", "stopped", "failed")


@dataclass(frozen=True, slots=True)
class Sent:
    delivered: bool
    how: str  # what confirmed it, or why not
    reply: str | None = None
    timed_out: bool = False  # --wait: no reply within the timeout (reply is None then)


def _observed(app: App, name: str) -> Observation:
    return next(o for o in observe.refresh(app) if o.agent.name == name)


def _wait_status(app: App, name: str, wanted: tuple[str, ...],
                 timeout: float) -> tuple[Observation, bool]:
    """The agent's observation once its status is one of `wanted`, and whether it got there
    before the timeout."""
    deadline = app.clock.monotonic() + timeout
    while True:
        found = _observed(app, name)
        if found.status in wanted:
            return found, True
        if app.clock.monotonic() > deadline:
            return found, False
        app.clock.sleep(0.2)


def send(app: App, name: str, text: str, wait: bool = False, ready_timeout: float = 60.0,
         confirm_timeout: float = 15.0, reply_timeout: float = 600.0) -> Sent:
    if not text:
        raise RoostError("nothing to send: give TEXT or pipe it on stdin", code=2)
    lifecycle.wake(app, name)  # wake on use
    # One message at a time per agent: its paste, Enter and confirmation, and the readiness
    # check before them. The key cannot be an agent name ('.' is not allowed in names).
    with locks.hold(app.paths.locks, f"{name}.send", timeout=ready_timeout + 2 * confirm_timeout):
        return _send_locked(app, name, text, wait, ready_timeout, confirm_timeout,
                            reply_timeout)


def _send_locked(app: App, name: str, text: str, wait: bool, ready_timeout: float,
                 confirm_timeout: float, reply_timeout: float) -> Sent:
    found, _ready = _wait_status(
        app, name, (*READY, "waiting", "error", "exited", "stopped", "failed"), ready_timeout)
    agent = app.store.require(name)
    if found.status != "idle":
        why = {"waiting": f"{name} is waiting for you (roost attach {name})",
               "error": f"{name} shows an error (roost capture {name} shows it)"}.get(
            found.status or "", f"{name} is {found.status}, not ready for input")
        app.store.log(agent, "sent", delivered=False, chars=len(text), reason=why)
        return Sent(False, why)
    pane = agent_panes(app.tmux.list_panes()).get(agent.id)
    if pane is None or pane.dead:
        return _not_delivered(app, agent, text, "its pane is dead")
    log = hooks.log_path(str(app.paths.home), agent.id)
    log_before = hooks.size(log)
    quirks = traits.of(agent.provider)
    record = Record(app, agent)
    text = paste_safe(text)
    app.tmux.paste(pane.pane_id, text, f"roost-send-{agent.id}-{os.urandom(4).hex()}")
    app.clock.sleep(quirks.enter_delay)
    # The baseline is the screen with the pasted text in the input, so what confirms delivery is
    # the Enter's effect, not the paste's.
    screen_before = "" if quirks.hooks or record.size is not None \
        else app.tmux.capture(pane.pane_id, 200)
    app.tmux.send_enter(pane.pane_id)

    how = _confirm(app, agent.id, quirks.hooks, pane.pane_id, log, log_before, screen_before,
                   text, confirm_timeout, record)
    if how is None:
        return _not_delivered(app, agent, text, "no sign that the agent took it")
    if how == record.HOW:
        app.store.update(agent.id, conversation_seen=True)
    app.store.log(agent, "sent", delivered=True, chars=len(text), confirmed_by=how)
    if not wait:
        return Sent(True, how)
    _settled, in_time = _wait_status(app, name, SETTLED, reply_timeout)
    if not in_time:
        return Sent(True, how, timed_out=True)
    return Sent(True, how, last_reply(app, agent.id, log_before, text))


def paste_safe(text: str) -> str:
    """The text without the bracketed-paste markers: a message holding ESC [ 201 ~ would end
    the paste early, and whatever follows would be typed as keys (an Enter among them)."""
    for marker in ("\x1b[200~", "\x1b[201~"):
        text = text.replace(marker, "")
    return text


def same_message(prompt: object, text: str) -> bool:
    """Whether a prompt the CLI reports is this text (CLIs may trim the ends or turn CRs)."""
    def norm(value: str) -> str:
        return value.replace("\r\n", "\n").replace("\r", "\n").strip()

    return isinstance(prompt, str) and norm(prompt) == norm(text)


def _not_delivered(app: App, agent: Agent, text: str, why: str) -> Sent:
    app.store.log(agent, "sent", delivered=False, chars=len(text), reason=why)
    return Sent(False, why)


class Record:
    """The CLI's own record of the agent's conversation, when roost can read one: its size
    before the paste, and whether a prompt it took since is this text."""

    HOW = "session file"

    def __init__(self, app: App, agent: Agent) -> None:
        self.app, self.agent = app, agent
        self.impl = provider(agent.provider)
        self.size = self.impl.conversation_size(agent, app.environ, app.paths.home)

    def patterns(self) -> dict[str, list[str]]:
        provider = self.agent.provider
        overrides = observe.pattern_overrides(self.app.settings) or {}
        return status.patterns_for(traits.of(provider).patterns, overrides.get(provider))

    def nudge(self, pane_id: str, text: str) -> None:
        """The text is not in the record yet. On a screen with no cue, its last line no turn
        mark (a prompt the CLI echoed: it took the text and records it late), the text sits in
        the CLI's input: the Enter became a newline or was dropped, so Enter again. An empty
        prompt with the text nowhere on the screen means the paste itself was lost (a CLI still
        starting up drops input): paste again. Never anything into a dialog, an error or a
        turn."""
        tmux = self.app.tmux
        screen = tmux.capture(pane_id, 200)
        patterns = self.patterns()
        seen = status.from_screen(screen, patterns)
        lines = [line for line in screen.splitlines() if line.strip()]
        echoed = bool(lines) and any(status.matches(lines[-1], p, True)
                                     for p in patterns.get(status.TURN, ()))
        first = (text.strip().splitlines() or [""])[0]
        if seen == "idle" and first and first not in screen:
            tmux.paste(pane_id, text, f"roost-send-{self.agent.id}-{os.urandom(4).hex()}")
            self.app.clock.sleep(traits.of(self.agent.provider).enter_delay)
        if seen == "idle" or (seen is None and not echoed):
            tmux.send_enter(pane_id)

    def holds(self, text: str) -> bool:
        agent = self.app.store.get_by_id(self.agent.id) or self.agent
        prompts = self.impl.prompts_after(agent, self.app.environ, self.app.paths.home,
                                          self.size or 0)
        return any(same_message(prompt, text) for prompt in prompts)


def _confirm(app: App, agent_id: str, has_hooks: bool, pane_id: str, log: str,
             log_before: int, screen_before: str, text: str, timeout: float,
             record: Record) -> str | None:
    start = app.clock.monotonic()
    deadline, enter_again = start + timeout, start + ENTER_AGAIN
    while app.clock.monotonic() < deadline:
        pane = agent_panes(app.tmux.list_panes()).get(agent_id)
        if pane is None or pane.dead:
            return None
        if has_hooks:
            events, _ = hooks.read_since(log, log_before)
            if any(event == "UserPromptSubmit" and same_message(payload.get("prompt"), text)
                   for _, event, payload in events):
                return "hook"
        elif record.size is not None:
            if record.holds(text):
                return record.HOW
            if app.clock.monotonic() >= enter_again:
                record.nudge(pane_id, text)
                enter_again = app.clock.monotonic() + ENTER_AGAIN
        elif app.tmux.capture(pane_id, 200) != screen_before:
            return "screen"
        app.clock.sleep(0.1)
    return None


def last_reply(app: App, agent_id: str, log_before: int, text: str) -> str | None:
    """The answer to `text`: the Stop hook's last_assistant_message after it was sent, else the
    assistant's words after `text` in the transcript (claude's). None when neither exists:
    never an earlier turn's reply."""
    events, _ = hooks.read_since(hooks.log_path(str(app.paths.home), agent_id), log_before)
    for _, event, payload in reversed(events):
        message = payload.get("last_assistant_message")
        if event == "Stop" and isinstance(message, str):
            return message
    agent = app.store.get_by_id(agent_id)
    if agent is not None and agent.transcript_path:
        return transcript_reply(agent.transcript_path, text)
    return None


def transcript_reply(path: str, text: str) -> str | None:
    """The assistant's text after the last user entry that is `text` in a Claude transcript."""
    import json

    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    answer: list[str] = []
    for line in reversed(lines):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        if not isinstance(message, dict):
            continue
        words = _text_of(message.get("content"))
        if entry.get("type") == "assistant" and words:
            answer.insert(0, words)
        elif entry.get("type") == "user":
            if same_message(words, text):
                return "\n".join(answer) if answer else None
            answer = []  # a later turn's words; keep looking for ours
    return None


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c.get("text", "") for c in content
                         if isinstance(c, dict) and c.get("type") == "text")
    return ""
