"""What `roost send` does with a message, decided from what it found (pure; ops/send.py does the
I/O): refuse it (the agent is not ready, or someone's half-typed draft sits on its input line),
or deliver it and confirm it by the best signal there is. Also the time limits of a send: one
deadline bounds the whole command, each phase within it has its own default.

Drafts are refused, never moved aside: the screen is roost's only view of a draft, and not a
faithful one (Claude Code shows a pasted block as "[Pasted text #1 +20 lines]", a wrapped line
looks like a line break, trailing spaces and the cursor's place do not show), and the CLIs' keys
to clear an input differ and have side effects (Ctrl-C on an empty claude input arms its exit).
Clearing a draft and putting it back could lose or change it; refusing keeps it whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import TypedDict

from roost.core.status import Status

READY_TIMEOUT = 60.0  # seconds a send waits for the agent to be ready (idle)
CONFIRM_TIMEOUT = 15.0  # seconds a send waits for the sign that the agent took the message
REPLY_TIMEOUT = 600.0  # seconds `send --wait` waits for the reply; also the default bound
DRAFT_SHOWN = 40  # characters of a draft quoted back in a refusal

# How delivery is confirmed, best first: "hook" (claude's UserPromptSubmit carrying the text),
# "record" (the CLI's own record of the conversation holds it), "effect" (a slash command's
# hooks: the new session of /clear, a compaction), "screen" (the screen changed after Enter),
# "exit" (a command that ends the CLI, /exit).
HOOK, RECORD, EFFECT, SCREEN, EXIT = "hook", "record", "effect", "screen", "exit"


class Confirmed(StrEnum):
    """What showed that an agent took a message: a send's `how` when it was delivered (the
    words `roost send` prints and the event log records)."""

    HOOK = "hook"  # its UserPromptSubmit carrying the text, or a slash command's hooks
    NEW_SESSION = "new session id"  # the SessionStart of /clear's new session
    RECORD = "session file"  # the CLI's own record of the conversation holds it
    QUEUED = "its CLI's queue"  # it holds the text until it is ready: a delivery
    SCREEN = "screen"  # the screen changed after Enter
    EXIT = "exit"  # the CLI ended (a command such as /exit)


NO_SIGN = "no sign that the agent took it"


class Receipt(TypedDict, total=False):
    """A message to a child, as its sender hears of it (the MCP tool send_message): the child's
    `name`, whether it was `delivered` and `how` that is known (or why not), the CLI's words
    when the turn it began failed at once (`turn_failed`), and whether this is an earlier
    attempt's receipt (`duplicate`: the same idempotency key)."""

    name: str
    delivered: bool
    how: str
    turn_failed: str
    duplicate: bool


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether an agent took a message, as its confirmation found it: `took` and what showed
    it (`how`), with the CLI's words when the turn it began failed at once (`failure`); not
    taken, the error its screen shows instead (`error`; None: no sign at all).

    >>> Verdict(True, Confirmed.SCREEN, failure="API Error").said("a")
    'screen'
    >>> Verdict(False, error="Reconnecting").said("a"), Verdict(False).said("a")
    ('a shows an error: Reconnecting', 'no sign that the agent took it')
    """

    took: bool
    how: Confirmed | None = None
    failure: str | None = None
    error: str | None = None

    def said(self, name: str) -> str:
        """What a send says: what confirmed it, or why it was not taken."""
        if self.took and self.how is not None:
            return str(self.how)
        return f"{name} shows an error: {self.error}" if self.error is not None else NO_SIGN


# A key sequence (CSI: ESC [ ... final byte), e.g. a colour code or the paste's own markers.
_SEQUENCE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
# What a paste must not carry: every C0 control but tab and line feed, DEL, and the C1 controls
# (U+009B is an 8-bit CSI). ESC starts the end-of-paste marker and every key sequence (Shift-Tab
# is ESC [ Z); CR, ^C and the like are keys to a CLI that reads the paste without its brackets.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def paste_safe(text: str) -> str:
    r"""`text` as plain text for a bracketed paste: line breaks as LF, key sequences and control
    characters removed. A fixed point in one pass: the result holds no ESC at all, so no
    marker can be rebuilt from what is left (removing only "ESC [ 201 ~" would turn
    "ESC [ 20 ESC [ 201 ~ 1 ~" into the marker again).

    >>> paste_safe("a\x1b[20\x1b[201~1~\rb\x1b[Z\x03c")
    'a[201~\nbc'
    >>> paste_safe("\x1b[32m+ added\x1b[0m\r\n\tkept")
    '+ added\n\tkept'
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", _SEQUENCE.sub("", text))


# How Claude Code (2.1.332) records a pasted block of 4+ lines or over 800 characters, in
# UserPromptSubmit's prompt and its transcript: the text inside a tag naming the paste.
_PASTED = re.compile(r'<pasted_content id="([^"<>]*)">\n(.*)\n</pasted_content id="\1">', re.S)


def same_message(prompt: object, text: str) -> bool:
    r"""Whether a prompt a CLI recorded is this text: as typed (ends trimmed, CRs turned to
    LFs), or as Claude Code records a long paste, one `pasted_content` block holding exactly
    this text and nothing around it. Never a different text, nor this text inside more.

    >>> same_message('\n\n<pasted_content id="fc00">\na\nb\nc\nd\n</pasted_content id="fc00">\n',
    ...              "a\nb\nc\nd\n")
    True
    >>> same_message('<pasted_content id="1">\na\nb\n</pasted_content id="1">\nmore', "a\nb")
    False
    """
    if not isinstance(prompt, str):
        return False
    said = norm(prompt)
    block = _PASTED.fullmatch(said)
    return said == norm(text) or (block is not None and norm(block[2]) == norm(text))


def in_joined(prompt: object, text: str) -> bool:
    r"""Whether `text` is one part of a prompt a CLI joined from its queue (Gemini CLI joins
    the texts it held with a blank line), or the whole of it.

    >>> in_joined("first\n\nsecond, in\n\ntwo parts", "second, in\n\ntwo parts")
    True
    >>> in_joined("first\n\nsecond", "first\n\nsec"), in_joined("a second", "second")
    (False, False)
    """
    if not isinstance(prompt, str):
        return False
    joined, one = (f"\n\n{norm(t)}\n\n" for t in (prompt, text))
    return one in joined


def held_in_queue(screen: str, headings: tuple[str, ...], text: str) -> bool:
    r"""Whether `screen` lists `text` under one of a CLI's queue `headings`: a prompt it took
    and holds until it is ready (Gemini CLI 0.61.0, while its MCP servers start). The CLI
    previews each one on a line of its own (whitespace collapsed, cut at the screen's width
    with a "…"), at most three under the heading.

    >>> held_in_queue("  Queued (press ↑ to edit):\n    who is\n > ", ("Queued (",), "who is")
    True
    >>> held_in_queue("  Queued (press ↑ to edit):\n    who is\n > ", ("Queued (",), "who")
    False
    >>> held_in_queue("Queued (\n  a long message, cut a…", ("Queued (",), "a long message, cut at")
    True
    """
    want = " ".join(text.split())
    lines = screen.splitlines()
    for i, line in enumerate(lines):
        if not any(h in line for h in headings):
            continue
        for preview in (row.strip() for row in lines[i + 1 : i + 4]):
            cut = preview.endswith("…") and len(preview) > WRAPPED_ROW
            if preview == want or (cut and want.startswith(preview[:-1])):
                return True
    return False


def norm(value: str) -> str:
    """A message as compared: line ends as LF, the ends trimmed."""
    return value.replace("\r\n", "\n").replace("\r", "\n").strip()


# How Claude Code shows a pasted block on its input line (2.1.332: "[Pasted text #1 +29 lines]"),
# and Gemini CLI one of over 5 lines or 500 characters (0.61.0: "[Pasted Text: 12 lines]",
# "[Pasted Text: 812 chars]", " #2" after it for a second alike).
_PLACEHOLDER = re.compile(r"\[Pasted text #\d+(?: \+(\d+) lines?)?\]")
_GEMINI_PLACEHOLDER = re.compile(r"\[Pasted Text: (\d+) (lines|chars)(?: #\d+)?\]")
WRAPPED_ROW = 20  # characters a draft's first row must show to be taken as a wrapped line's start


def left_by_roost(typed: str, text: str) -> bool:
    r"""Whether the draft the screen shows (`typed`, the input line's first row) is `text`,
    which roost pasted and never pressed Enter for: its first line as typed (or the start of
    it, wrapped), or Claude Code's placeholder for a block of as many lines. Anything else is
    someone's typing, roost's text among it or not.

    >>> left_by_roost("first message", "first message")
    True
    >>> left_by_roost("[Pasted text #1 +3 lines]", "a\nb\nc\nd")
    True
    >>> left_by_roost("[Pasted Text: 6 lines]", "a\nb\nc\nd\ne\nf"), left_by_roost(
    ...     "[Pasted Text: 600 chars]", "x" * 600)
    (True, True)
    >>> left_by_roost("first message and more", "first message")
    False
    """
    shown = " ".join(typed.split())
    lines = text.strip().splitlines() or [""]
    first = " ".join(lines[0].split())
    block = _PLACEHOLDER.fullmatch(shown)
    if block is not None:
        return block[1] is None or int(block[1]) == len(lines) - 1
    gemini = _GEMINI_PLACEHOLDER.fullmatch(shown)
    if gemini is not None:  # its count: of the lines as split, or of UTF-16 units
        counted = int(gemini[1])
        if gemini[2] == "lines":
            return counted == len(text.split("\n"))
        return counted == len(text.encode("utf-16-le")) // 2
    return shown == first or (len(shown) >= WRAPPED_ROW and first.startswith(shown))


def finished_note(name: str, text: str) -> str:
    """What a send says when it first submitted the text an interrupted send left."""
    return (
        f'first submitted "{_shown(text)}", the message roost\'s interrupted send left on '
        f"{name}'s input line"
    )


def cut_before_enter(name: str) -> str:
    """What a send stopped between its paste and its Enter says (Ctrl-C)."""
    return (
        f"interrupted between paste and Enter: the message is typed on {name}'s input line, "
        f"not submitted; the next roost send {name} submits it first (or clear it there: "
        f"roost attach {name})"
    )


def _shown(text: str) -> str:
    one = " ".join(text.split())
    return one if len(one) <= DRAFT_SHOWN else one[: DRAFT_SHOWN - 1] + "…"


@dataclass(frozen=True, slots=True)
class Found:
    """What a send found once it stopped waiting for the agent to be ready."""

    name: str
    status: str | None  # the agent's status (core.status)
    in_time: bool  # it was ready (or settled) before the ready wait ran out
    waited: float  # seconds the ready wait could last
    reason: str | None = None  # an error status's words
    pane_alive: bool = True
    draft: str | None = None  # text typed on its input line, not submitted


@dataclass(frozen=True, slots=True)
class Plan:
    deliver: bool
    why: str = ""  # a refusal's message
    timed_out: bool = False  # the refusal is the ready wait running out
    draft: bool = False  # the refusal is a draft on its input line
    confirm_by: tuple[str, ...] = ()  # the signals that may confirm it, best first
    screen_baseline: bool = False  # capture the screen after the paste, before Enter


def decide(found: Found, *, command: bool, has_hooks: bool, has_record: bool = False) -> Plan:
    """Refuse or deliver, and how a delivery is confirmed. `command`: the text is a slash
    command (confirmed by its effect, since CLIs fire no prompt event for one); `has_record`:
    the CLI keeps a record of prompts roost can read.

    >>> decide(Found("a", "idle", True, 0.1), command=False, has_hooks=True).confirm_by
    ('hook',)
    >>> decide(Found("a", "idle", True, 0.1, draft="half"), command=False,
    ...        has_hooks=True).deliver
    False
    """
    refusal = _refusal(found)
    if refusal is not None:
        return Plan(
            False,
            refusal,
            timed_out=not found.in_time
            and found.status in (Status.WORKING, Status.STARTING, Status.UNKNOWN, None),
            draft=found.status == Status.IDLE and found.pane_alive and bool(found.draft),
        )
    if command:
        signals = (EFFECT,) if has_hooks else ()
        return Plan(True, confirm_by=(*signals, SCREEN, EXIT), screen_baseline=True)
    if has_hooks:
        return Plan(True, confirm_by=(HOOK,))
    if has_record:
        return Plan(True, confirm_by=(RECORD,))
    return Plan(True, confirm_by=(SCREEN,), screen_baseline=True)


def _refusal(found: Found) -> str | None:
    name, status = found.name, found.status
    if status == Status.IDLE:
        if not found.pane_alive:
            return "its pane is dead"
        if found.draft:
            shown = _shown(found.draft)
            return (
                f'{name} has a draft on its input line ("{shown}"): sent nothing, so it '
                f"is neither submitted nor lost; submit or clear it (roost attach {name}), "
                "then send again"
            )
        return None
    if status == Status.WAITING:
        return f"{name} is waiting for you (roost attach {name})"
    if status == Status.LIMITED:  # never bounce text off a usage limit (the reason says until when)
        return found.reason or f"{name} is limited by its provider's usage limit"
    if status == Status.ERROR:
        return (
            f"{name} shows an error: {found.reason or 'see roost capture ' + name} "
            f"(roost attach {name} to see it through)"
        )
    if not found.in_time and status in (Status.WORKING, Status.STARTING, Status.UNKNOWN, None):
        return (
            f"timed out after {found.waited:g} s waiting for {name} to be ready for input "
            f"(it is {status or 'unknown'}; --ready-timeout waits longer)"
        )
    return f"{name} is {status}, not ready for input"


@dataclass(frozen=True, slots=True)
class Budget:
    """The time limits of one send: `total` bounds the whole command (None: only the phases'
    own limits), each phase gets its own limit or what is left of the total, the smaller."""

    start: float
    total: float | None
    ready: float = READY_TIMEOUT
    confirm: float = CONFIRM_TIMEOUT
    reply: float = REPLY_TIMEOUT

    def left(self, now: float, phase: float) -> float:
        """Seconds the phase may take from `now`.

        >>> Budget(start=100.0, total=5.0).left(102.0, READY_TIMEOUT)
        3.0
        >>> Budget(start=100.0, total=None).left(102.0, CONFIRM_TIMEOUT)
        15.0
        """
        if self.total is None:
            return phase
        return max(0.0, min(phase, self.start + self.total - now))


def check_timeouts(total: float | None, ready: float | None) -> str | None:
    """What is wrong with the given limits, or None."""
    for flag, value in (("--timeout", total), ("--ready-timeout", ready)):
        if value is not None and not value > 0:
            return f"{flag} must be a positive number of seconds, not {value:g}"
    return None
