"""Whether an agent took a message roost sent it, decided look by look (pure; ops/confirm.py
reads the signals and acts). After the Enter, ops/confirm looks until a verdict or its deadline:
each look is what the signal readers saw (`Seen`: the hook log, the pane, the CLI's own record,
the screen), and `decide` turns it, with where the confirmation stands (`Looking`) and the
clock, into the next step: look again (`Wait`, maybe after watching or nudging the CLI that
keeps a record), or a `delivery.Verdict` (took, how; took but its turn failed; not taken).

Which signals count is core.delivery's plan (`Signals`): hooks (claude's UserPromptSubmit, a
slash command's effect), the CLI's record (gemini's chat file, aider's history), the screen
changing after Enter (a CLI with neither, or a slash command), the CLI exiting (`/exit`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

from roost.core import delivery
from roost.core.delivery import Confirmed, Verdict

SETTLE = 1.0  # seconds a command's new session may take after its first sign
ENTER_AGAIN = 2.0  # seconds without the text in the record before Enter is pressed again
EFFECT = "effect"  # a slash command's hook that is not its new session (its SessionEnd)


@dataclass(frozen=True, slots=True)
class Signals:
    """Which signals may confirm this message (core.delivery.Plan.confirm_by)."""

    hooks: bool = False  # the hook log (its UserPromptSubmit, or a command's effect)
    command: bool = False  # a slash command: its effect, the screen, its exit confirm it
    record: bool = False  # the CLI's own record of the conversation (and its screen's queue)

    @staticmethod
    def of(confirm_by: tuple[str, ...], has_record: bool) -> Signals:
        """
        >>> Signals.of(("effect", "screen", "exit"), False)
        Signals(hooks=True, command=True, record=False)
        """
        return Signals(
            hooks=delivery.HOOK in confirm_by or delivery.EFFECT in confirm_by,
            command=delivery.EXIT in confirm_by,
            record=has_record,
        )


@dataclass(frozen=True, slots=True)
class Seen:
    """What one look's readers saw. `hook`: "hook" (the UserPromptSubmit carrying the text),
    "new session id" (/clear's SessionStart), "effect" (another event a command fires) or
    None. `pane`: the agent's pane alive, dead, or gone. `recorded`: the CLI's record holds the
    text (for a text its queue held, as one part of the prompt it made of it). From the screen
    (`screen`: it was looked at): it changed since the baseline, the error it shows, the text
    listed in the CLI's queue (`held`), the input line no longer holding it (`submitted`)."""

    hook: str | None = None
    pane: Literal["alive", "dead", "gone"] = "alive"
    recorded: bool = False
    screen: bool = False
    changed: bool = False
    error: str | None = None
    held: bool = False
    submitted: bool = False


@dataclass(frozen=True, slots=True)
class Looking:
    """Where a confirmation stands between two looks: when it stops looking, a confirmation a
    moment more may tell better (`found`), when a CLI that keeps a record gets its Enter
    again."""

    deadline: float
    found: Confirmed | None = None
    enter_again: float = math.inf

    @staticmethod
    def start(now: float, timeout: float, signals: Signals) -> Looking:
        return Looking(now + timeout, None, now + ENTER_AGAIN if signals.record else math.inf)

    @property
    def queued(self) -> bool:
        """The CLI holds the text in its queue until it is ready."""
        return self.found == Confirmed.QUEUED

    def nudged(self, now: float) -> Looking:
        """After the Enter pressed again at `now`."""
        return replace(self, enter_again=now + ENTER_AGAIN)

    def verdict(self) -> Verdict:
        """What the confirmation says when its time runs out."""
        return Verdict(self.found is not None, self.found)


@dataclass(frozen=True, slots=True)
class Wait:
    """Look again (after `looking`'s pause); first note the look for the record (`watch`), and
    press Enter again where the text is not in the record yet (`nudge`)."""

    looking: Looking
    watch: bool = False
    nudge: bool = False


def decide(
    seen: Seen, looking: Looking, now: float, signals: Signals, queued_until: float | None = None
) -> Verdict | Wait:
    """The next step after a look: a verdict, or look again. `queued_until`: until when a text
    the CLI holds in its queue may wait for its record (the send's wait for readiness).

    >>> decide(Seen(hook="hook"), Looking(10.0), 1.0, Signals(hooks=True))
    Verdict(took=True, how=<Confirmed.HOOK: 'hook'>, failure=None, error=None)
    """
    if seen.hook in (Confirmed.HOOK, Confirmed.NEW_SESSION):
        return Verdict(True, Confirmed(seen.hook))
    if seen.hook == EFFECT:
        looking = replace(looking, found=Confirmed.HOOK)
    if seen.pane != "alive":
        return _ended(seen, looking, signals)
    if signals.record:
        return _by_record(seen, looking, now, queued_until)
    return _by_screen(seen, looking, now, signals)


def _ended(seen: Seen, looking: Looking, signals: Signals) -> Verdict:
    """The pane died or is gone: what the looks found by then (its hook read once more)."""
    if seen.recorded:
        return Verdict(True, Confirmed.RECORD)  # recorded just before it ended
    if looking.queued:
        return Verdict(False)  # it died with the text in its queue
    if signals.command and seen.pane == "dead":
        return Verdict(True, Confirmed.EXIT)
    return looking.verdict()


def _by_record(
    seen: Seen, looking: Looking, now: float, queued_until: float | None
) -> Verdict | Wait:
    """A CLI that keeps a record: the text in it, else its screen's error or queue."""
    error = None if seen.held else seen.error  # a queue on the screen is no error's
    if seen.recorded:  # read again after an error the screen drew: the turn failed
        return Verdict(True, Confirmed.RECORD, failure=error)
    if error is not None:
        # The CLI failed before it recorded the text, or the turn it took from its queue did.
        if looking.queued:
            return Verdict(True, Confirmed.SCREEN, failure=error)
        return Verdict(False, error=error)
    if seen.held and not looking.queued:
        # The CLI took it and holds it until it is ready (its MCP servers starting): the record
        # gets as long as a wait for readiness to show it. Sent again, or an Enter pressed into
        # a draft typed meanwhile, it would be a second prompt.
        deadline = looking.deadline if queued_until is None else max(looking.deadline, queued_until)
        return Wait(replace(looking, found=Confirmed.QUEUED, deadline=deadline))
    if looking.queued:
        return Wait(looking)
    return Wait(looking, watch=True, nudge=now >= looking.enter_again)


def _by_screen(seen: Seen, looking: Looking, now: float, signals: Signals) -> Verdict | Wait:
    """The screen changed after Enter (a CLI with hooks: a command's sign, which its new
    session may follow within SETTLE)."""
    if seen.screen and seen.changed:
        if seen.error is not None:
            # The CLI failing: with the text gone from its input line it took the text and its
            # turn failed; else (or where the input line is unknown) it never took it.
            if seen.submitted:
                return Verdict(True, Confirmed.SCREEN, failure=seen.error)
            return Verdict(False, error=seen.error)
        if not signals.hooks:
            return Verdict(True, Confirmed.SCREEN)
        looking = replace(looking, found=Confirmed.SCREEN)
    if looking.found is not None and looking.deadline > now + SETTLE:
        # A CLI draws a command's effect before its hooks report it, and ends a session
        # before it starts the next: a moment more for the new session id of /clear.
        looking = replace(looking, deadline=now + SETTLE)
    return Wait(looking)


# What a slash command may fire: its effect, where no UserPromptSubmit comes (/clear ends the
# session and starts a new one, /compact compacts, /exit ends it).
COMMAND_EFFECTS = ("SessionStart", "SessionEnd", "PreCompact")


def by_hooks(
    events: list[tuple[float, str, dict[str, object]]],
    text: str,
    command: bool,
    session_id: str | None,
) -> str | None:
    """The hook evidence that `text` was taken: "hook" (its UserPromptSubmit); for a slash
    command, "new session id" (the SessionStart after /clear) or "effect" (another event it
    fires: the SessionEnd before that start, a compaction); None when there is none yet."""
    if any(
        event == "UserPromptSubmit" and delivery.same_message(payload.get("prompt"), text)
        for _, event, payload in events
    ):
        return Confirmed.HOOK
    effects = [
        (event, payload) for _, event, payload in events if command and event in COMMAND_EFFECTS
    ]
    if any(
        event == "SessionStart" and payload.get("session_id") != session_id
        for event, payload in effects
    ):
        return Confirmed.NEW_SESSION
    return EFFECT if effects else None
