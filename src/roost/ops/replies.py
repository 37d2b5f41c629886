"""An agent's replies, read one way for every CLI: its Stop hook's message where its hooks
report one (claude's), else its CLI's own record of the conversation as turns (each provider's
`turns()`: claude's transcript, codex's rollout, gemini's chat file, aider's chat history).
Which recorded answer is the one asked for is core/replies' rule; this module reads.

- `last(app, agent)`: the agent's last answer (`roost reply`, `wait_for_agents`' last_reply, a
  parent's "finished" notice of a CLI without hooks);
- `answer_to(app, agent, text, since)`: the answer to `text` sent when the hook log was `since`
  bytes long (`send --wait` of a CLI with hooks), never an earlier turn's;
- `turns` and `asked`: a CLI without a Stop hook's record, read before and after a send
  (ops/send's wait for the reply in the record).
"""

from __future__ import annotations

from roost.core import replies as rules
from roost.core.model import Agent
from roost.core.replies import Turn
from roost.ops.context import App
from roost.ops.learn import stop_message
from roost.providers import traits
from roost.providers.base import get as provider

# What `send --wait` says when a CLI without a Stop hook keeps no record roost can read.
NO_RECORD = "its CLI keeps no record of its replies that roost can read"


def turns(app: App, agent: Agent) -> list[Turn] | None:
    """The agent's turns from its CLI's record (its current session), or None when it keeps
    none roost can read."""
    current = app.store.get_by_id(agent.id) or agent  # its session id may be known by now
    return provider(agent.provider).turns(current, app.environ, app.paths.home)


def asked(app: App, agent: Agent, text: str) -> tuple[int, int]:
    """How many recorded turns asked `text` already (before it is sent): alone, and alone or
    as one part of a prompt the CLI joined from its queue (core.replies.this_answer)."""
    found = turns(app, agent) or []
    return rules.asked(found, text), rules.asked(found, text, True)


def recorded_last(app: App, agent: Agent) -> str | None:
    """The agent's last turn's answer as its CLI recorded it (None: none yet, or no record)."""
    return rules.last_answer(turns(app, agent) or [])


def last(app: App, agent: Agent) -> str | None:
    """The agent's last answer: its last Stop hook's message; else, for a CLI whose replies
    come from its hooks (claude), the last words its record holds, as its Stop would have said
    them; else its CLI's own record's last turn's answer (codex, gemini, aider). Never wakes
    it."""
    message = stop_message(app, agent.id)
    if message is not None:
        return message
    found = turns(app, agent) or []
    return rules.last_said(found) if traits.of(agent.provider).hooks else rules.last_answer(found)


def answer_to(app: App, agent: Agent, text: str, since: int) -> str | None:
    """The answer to `text`: the Stop hook's last_assistant_message past byte `since` of the
    hook log, else the answer of the last turn in the CLI's record that asked `text`. None
    when neither exists: never an earlier turn's reply."""
    message = stop_message(app, agent.id, since)
    if message is not None:
        return message
    return rules.answer_of_last(turns(app, agent) or [], text)
