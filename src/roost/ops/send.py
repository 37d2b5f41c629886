"""`roost send`: deliver text to an agent and confirm it arrived.

Text of any length goes in as one bracketed paste (newlines stay newlines), then Enter after a
provider-specific pause (CLIs take an Enter that arrives with a paste as a newline). Delivery is
confirmed by the best signal: the UserPromptSubmit hook of a CLI with hooks, else the screen
changing, and is
reported as delivered or not. A stopped or hibernated agent is woken first.
"""

from __future__ import annotations

from dataclasses import dataclass

from roost.core.errors import RoostError
from roost.core.model import Agent
from roost.core.observation import Observation
from roost.core.pane import agent_panes
from roost.ops import lifecycle, observe
from roost.ops.context import App
from roost.providers import hooks, traits

READY = ("idle",)
SETTLED = ("idle", "waiting", "exited", "stopped", "failed")


@dataclass(frozen=True, slots=True)
class Sent:
    delivered: bool
    how: str  # what confirmed it, or why not
    reply: str | None = None


def _observed(app: App, name: str) -> Observation:
    return next(o for o in observe.refresh(app) if o.agent.name == name)


def _wait_status(app: App, name: str, wanted: tuple[str, ...], timeout: float) -> Observation:
    deadline = app.clock.monotonic() + timeout
    while True:
        found = _observed(app, name)
        if found.status in wanted or app.clock.monotonic() > deadline:
            return found
        app.clock.sleep(0.2)


def send(app: App, name: str, text: str, wait: bool = False, ready_timeout: float = 60.0,
         confirm_timeout: float = 15.0, reply_timeout: float = 600.0) -> Sent:
    if not text:
        raise RoostError("nothing to send: give TEXT or pipe it on stdin", code=2)
    lifecycle.wake(app, name)  # wake on use
    found = _wait_status(app, name, READY + ("waiting", "exited", "stopped", "failed"),
                         ready_timeout)
    agent = app.store.require(name)
    if found.status != "idle":
        why = {"waiting": f"{name} is waiting for you (roost attach {name})"}.get(
            found.status or "", f"{name} is {found.status}, not ready for input")
        app.store.log(agent, "sent", delivered=False, chars=len(text), reason=why)
        return Sent(False, why)
    pane = agent_panes(app.tmux.list_panes()).get(agent.id)
    if pane is None or pane.dead:
        return _not_delivered(app, agent, text, "its pane is dead")
    log = hooks.log_path(str(app.paths.home), agent.id)
    log_before = hooks.size(log)
    quirks = traits.of(agent.provider)
    app.tmux.paste(pane.pane_id, text, f"roost-send-{agent.id}")
    app.clock.sleep(quirks.enter_delay)
    # The baseline is the screen with the pasted text in the input, so what confirms delivery is
    # the Enter's effect, not the paste's.
    screen_before = "" if quirks.hooks else app.tmux.capture(pane.pane_id, 200)
    app.tmux.send_enter(pane.pane_id)

    how = _confirm(app, agent.id, quirks.hooks, pane.pane_id, log, log_before, screen_before,
                   confirm_timeout)
    if how is None:
        return _not_delivered(app, agent, text, "no sign that the agent took it")
    app.store.log(agent, "sent", delivered=True, chars=len(text), confirmed_by=how)
    reply = None
    if wait:
        _wait_status(app, name, SETTLED, reply_timeout)
        reply = last_reply(app, agent.id, log_before)
    return Sent(True, how, reply)


def _not_delivered(app: App, agent: Agent, text: str, why: str) -> Sent:
    app.store.log(agent, "sent", delivered=False, chars=len(text), reason=why)
    return Sent(False, why)


def _confirm(app: App, agent_id: str, has_hooks: bool, pane_id: str, log: str,
             log_before: int, screen_before: str, timeout: float) -> str | None:
    deadline = app.clock.monotonic() + timeout
    while app.clock.monotonic() < deadline:
        pane = agent_panes(app.tmux.list_panes()).get(agent_id)
        if pane is None or pane.dead:
            return None
        if has_hooks:
            events, _ = hooks.read_since(log, log_before)
            if any(event == "UserPromptSubmit" for _, event, _ in events):
                return "hook"
        elif app.tmux.capture(pane_id, 200) != screen_before:
            return "screen"
        app.clock.sleep(0.1)
    return None


def last_reply(app: App, agent_id: str, log_before: int) -> str | None:
    """The agent's answer: the Stop hook's last_assistant_message, else the transcript's last
    assistant text (claude's). None for CLIs that expose no reply."""
    events, _ = hooks.read_since(hooks.log_path(str(app.paths.home), agent_id), log_before)
    for _, event, payload in reversed(events):
        message = payload.get("last_assistant_message")
        if event == "Stop" and isinstance(message, str):
            return message
    agent = app.store.get_by_id(agent_id)
    if agent is not None and agent.transcript_path:
        return _transcript_reply(agent.transcript_path)
    return None


def _transcript_reply(path: str) -> str | None:
    import json

    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        if entry.get("type") == "assistant" and isinstance(message, dict):
            content = message.get("content")
            if isinstance(content, str):
                return content
            texts = [c.get("text", "") for c in content or [] if isinstance(c, dict)
                     and c.get("type") == "text"]
            if texts:
                return "\n".join(texts)
    return None
