"""When a parent is told about its child, and what it is told ("SIGCHLD for agents"). Pure.

A child's status change notifies its orchestration parent when the child finished a turn
(working -> idle), needs its user (-> waiting), exited or failed. The message is one short
line per child event, bounded, starting with "[roost]" so a model can tell it from a person.

>>> kind_of("working", "idle"), kind_of(None, "idle"), kind_of("idle", "waiting")
('finished', None, 'waiting')
>>> text("kid", "finished", "all tests pass")
'[roost] kid finished its turn: all tests pass'

Whatever a child writes reaches its parent as one line of plain text: no control characters, so
nothing in a reply can end the paste early or type keys (Enter, Ctrl-C) into the parent.

Delivery backs off and gives up like supervision (core/supervision.py): a parent that died while
a notice was being delivered is not woken again while that notice waits (the person's wake
delivers it); a notice it died on twice is given up; dying on `MAX_DEATHS` deliveries within
`DEATH_WINDOW` seconds is a crash loop, `failed` until the person wakes it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from roost.core.status import Status

MAX_NOTICE = 1000  # characters of a reply or reason in one notice
MAX_MESSAGE = 6000  # characters of the message delivered to a parent
MAX_TRIES = 2  # deliveries a notice's parent may die on before it is given up
MAX_DEATHS = 3  # deaths on delivery within DEATH_WINDOW: a crash loop
DEATH_WINDOW = 60.0  # seconds
STOPPED = "stopped by its person: held until `roost wake`"
# A notice that the branch an agent's worktree was made from moved (a sibling's work merged,
# merge/operations.py): queued like a child's, delivered when the agent is at its input, and
# never a reason to wake an agent that sleeps.
BASE_MOVED = "base-moved"


def kind_of(previous: str | None, current: str | None) -> str | None:
    """What a status change means to the parent, or None when it says nothing new."""
    if current == previous or current is None:
        return None
    if current == Status.IDLE:
        return "finished" if previous == Status.WORKING else None
    if current in (Status.WAITING, Status.EXITED, Status.FAILED, Status.LIMITED):
        return current
    return None


_PHRASES = {
    "finished": "finished its turn",
    "waiting": "is waiting for its user",
    "exited": "exited",
    "failed": "failed",
    "limited": "hit its usage limit",  # issue 23: the detail is the CLI's words with the reset
}


def text(child: str, kind: str, detail: str | None) -> str:
    """One notice: the child's name, what happened, and the reply or reason (bounded)."""
    said = f"[roost] {child} {_PHRASES.get(kind, kind)}"
    detail = plain(detail or "")
    if not detail:
        return said
    if len(detail) > MAX_NOTICE:
        detail = (
            detail[:MAX_NOTICE] + f"… [{len(detail) - MAX_NOTICE} more characters; "
            "read_conversation has them]"
        )
    return f"{said}: {detail}"


def plain(words: str) -> str:
    """`words` as one line of printable text: whitespace runs become one space, control
    characters (ESC, Ctrl-C, C1 codes...) are dropped.

    >>> plain("a\\x1b[201~\\x03\\x03 b\\n\\tc")
    'a[201~ b c'
    """
    return "".join(ch for ch in " ".join(words.split()) if unicodedata.category(ch) != "Cc")


def hold_reason(
    *, alive: bool, status: str | None, intent: str, state: str, wake: bool, died_on: bool
) -> str | None:
    """Why a parent's notices wait now, or None: deliver (waking it when it sleeps). `wake`:
    notify_sleeping is "wake"; `died_on`: it died on an earlier delivery of a pending notice.

    >>> hold_reason(alive=False, status=None, intent="stopped", state="stopped", wake=True,
    ...             died_on=False)
    'stopped by its person: held until `roost wake`'
    >>> hold_reason(alive=True, status="idle", intent="running", state="running", wake=True,
    ...             died_on=True) is None
    True
    """
    if alive:
        return None if status == Status.IDLE else "busy"  # its own next Stop brings it back
    if intent == "stopped":
        return STOPPED
    if state == "failed":
        return "failed: held until `roost wake`"
    if not wake:
        return 'asleep (notify_sleeping = "hold"): held until `roost wake`'
    if died_on:
        return "it stopped on an earlier delivery of these notices: held until `roost wake`"
    return None


def backoff(deaths: int) -> float:
    """Seconds to wait before a delivery to a parent that died on `deaths` recent ones."""
    return float(2 ** (deaths - 1)) if deaths > 0 else 0.0


def message(notices: Sequence[str]) -> tuple[str, int]:
    """The notices that fit in one message (oldest first, at least one), and how many.

    >>> message(["a", "b"])
    ('a\\nb', 2)
    """
    lines: list[str] = []
    size = 0
    for notice in notices:
        if lines and size + len(notice) + 1 > MAX_MESSAGE:
            break
        lines.append(notice)
        size += len(notice) + 1
    return "\n".join(lines), len(lines)
