"""The CLI's own record of an agent's conversation, where roost can read one (gemini's chat
file, aider's chat history): `roost send` confirms a message by finding it there, and, while it
is not there, helps a CLI that lost the Enter (a CLI busy starting takes an Enter for a newline,
or drops it) or, while it showed no input line, the paste. The replies a CLI records are read
by ops/replies."""

from __future__ import annotations

import os

from roost.core import delivery, status
from roost.core.model import Agent
from roost.ops import observe
from roost.ops.context import App
from roost.providers import traits
from roost.providers.base import get as provider


class Record:
    """The record's size before a paste (None: the CLI keeps none roost can read), and the
    prompts it took since."""

    def __init__(self, app: App, agent: Agent) -> None:
        self.app, self.agent = app, agent
        self.impl = provider(agent.provider)
        self.size = self.impl.conversation_size(agent, app.environ, app.paths.home)
        self.patterns = observe.patterns_of(app, agent.provider)
        # A look since the paste found the CLI without its input line (gemini loading a resumed
        # session) and the text nowhere: the keys that came then were dropped.
        self.input_gone = False

    def prompts(self) -> list[str]:
        """The prompts the CLI recorded since the paste."""
        agent = self.app.store.get_by_id(self.agent.id) or self.agent
        return self.impl.prompts_after(agent, self.app.environ, self.app.paths.home, self.size or 0)

    def watch(self, text: str, screen: str) -> None:
        """Note a look at the screen while the text is not in the record."""
        # its screen while it loads (core.status.LOADING) has no input line, and it drops the
        # keys it gets then
        if status.loading(screen, self.patterns) and not shown(text, screen):
            self.input_gone = True

    def nudge(self, pane_id: str, text: str, screen: str) -> None:
        """The text is not in the record yet. On a screen with no cue, its last line no turn
        mark (a prompt the CLI echoed: it took the text and records it late), the text may sit
        in the CLI's input: the Enter became a newline or was dropped, so Enter again (on an
        empty input line it does nothing). An empty input with the text nowhere is pasted into
        again, once, only when a look since the paste saw the CLI without its input line
        (`watch`): an empty input alone is as often a CLI that took the text and shows and
        records it late (Gemini CLI clears its input at the Enter and awaits its logger first:
        seconds on a loaded machine), and a second paste there is a second prompt. Never
        anything into a dialog, an error or a turn, nor onto a draft someone typed: the input
        line must be empty or hold roost's text."""
        tmux = self.app.tmux
        draft = typed(self.agent.provider, screen)
        if draft is not None and not ours(draft, text):
            return
        seen = status.from_screen(screen, self.patterns)
        lines = [line for line in screen.splitlines() if line.strip()]
        echoed = bool(lines) and any(
            status.matches(lines[-1], p, True) for p in self.patterns.get(status.TURN, ())
        )
        if seen == "idle" and draft is None and self.input_gone and not shown(text, screen):
            self.input_gone = False
            tmux.paste(pane_id, text, f"roost-send-{self.agent.id}-{os.urandom(4).hex()}")
            self.app.clock.sleep(traits.of(self.agent.provider).enter_delay)
        if seen == "idle" or (seen is None and not echoed):
            tmux.send_enter(pane_id)


def typed(provider: str, screen: str) -> str | None:
    """What `screen` shows typed on the provider's input line; None when it is empty or the
    provider has no known input line (a command)."""
    line = traits.INPUT_LINES.get(provider)
    return status.draft(screen, line.markers, line.window, line.placeholders) if line else None


def shown(text: str, screen: str) -> bool:
    r"""Whether the start of `text` is anywhere on `screen`, however the CLI wrapped it.

    >>> shown("fix the login test in the auth module", "> fix the login\n  test in the auth module")
    True
    >>> shown("修复登录测试" * 30, "> " + "修复登录测试" * 20 + "\n  " + "修复登录测试" * 10)
    True
    >>> shown("[roost] worker finished its turn: the second result, with its tests passing",
    ...       "> [roost] worker finished its turn: the first result, with its tests failing")
    False
    """
    start = "".join(text.split())[:SHOWN_CHARS]  # a row may break inside a word (CJK)
    return start in "".join(screen.split())


def ours(typed: str, text: str) -> bool:
    r"""Whether the input line's row the screen shows (`typed`) is roost's own text: as
    delivery.left_by_roost says, or a row of it (a later line that starts with `>`, a viewport
    scrolled, a first row a long word cut short).

    >>> ours("a quoted line of the message", "the test is flaky\n> a quoted line of the message")
    True
    >>> ours("See", "See " + "u" * 300)
    True
    >>> ours("someone else's words", "the test is flaky")
    False
    """
    row = " ".join(typed.split())
    whole = " ".join(text.split())
    first = " ".join((text.strip().splitlines() or [""])[0].split())
    return (
        delivery.left_by_roost(typed, text)
        or (len(row) >= delivery.WRAPPED_ROW and row in whole)
        or (bool(row) and first.startswith(row + " "))
    )


# A prompt's first characters that tell it on the screen: enough that two notices from one
# child ("[roost] worker finished its turn: ...") differ.
SHOWN_CHARS = 150


def readable(app: App, agent: Agent) -> Record | None:
    """The agent's record, or None when its CLI keeps none roost can read."""
    found = Record(app, agent)
    return found if found.size is not None else None
