"""Budgets (issue 23 part 5), pure: what a person writes as a budget, whether usage reached
it, and which agents the machine's live-agent budget hibernates.

>>> parse("250k"), parse("$4.50"), parse("off")
((250000, None), (None, 4.5), (None, None))
>>> reached(Spent(300_000, 1.0), 250_000, None)
'its budget of 250.0k tokens is reached (300.0k used)'
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from roost.core.errors import RoostError
from roost.core.events import Event
from roost.core.status import Status
from roost.usage.rules import count

_SUFFIX = {"": 1, "k": 1_000, "m": 1_000_000}
OFF = ("off", "none", "0")


def parse(text: str) -> tuple[int | None, float | None]:
    """A budget: a number of tokens ("500000", "500k", "2M") or of dollars ("$5", "$2.50");
    "off" (or "none", "0") clears it. Anything else is refused."""
    given = text.strip().lower()
    if given in OFF:
        return None, None
    dollars = re.fullmatch(r"\$(\d+(?:\.\d+)?)", given)
    if dollars and float(dollars[1]) > 0:
        return None, float(dollars[1])
    tokens = re.fullmatch(r"(\d+(?:\.\d+)?)([km]?)", given)
    if tokens and float(tokens[1]) > 0:
        return int(float(tokens[1]) * _SUFFIX[tokens[2]]), None
    raise RoostError(
        f"a budget is tokens (500000, 500k, 2M) or dollars ($5, $2.50), or off; not {text!r}",
        code=2,
    )


def shown(tokens: int | None, dollars: float | None) -> str:
    if tokens is not None:
        return f"{count(tokens)} tokens"
    return f"${dollars:,.2f} (estimated)" if dollars is not None else "none"


@dataclass(frozen=True, slots=True)
class Spent:
    tokens: int
    dollars: float | None  # None: some usage had no price, so a dollar budget cannot be judged


def reached(
    spent: Spent, tokens: int | None, dollars: float | None, whose: str = "its"
) -> str | None:
    """Why the budget is reached, or None while it is not (or cannot be told)."""
    if tokens is not None and spent.tokens >= tokens:
        return f"{whose} budget of {count(tokens)} tokens is reached ({count(spent.tokens)} used)"
    if dollars is not None and spent.dollars is not None and spent.dollars >= dollars:
        return (
            f"{whose} budget of ${dollars:,.2f} is reached (an estimated ${spent.dollars:,.2f} "
            "used)"
        )
    return None


@dataclass(frozen=True, slots=True)
class Live:
    """A running agent as the live-agent budget sees it: its status, since when (ISO), and
    whether a person is attached to its session or looks at it."""

    name: str
    status: str | None
    since: str
    attached: bool


def began_turn(events: Iterable[Event]) -> bool:
    """Whether an agent took a prompt since its last launch, from that launch's `started`
    event and its `sent` and `status` events since: a send delivered, a turn its hooks
    reported, or work seen on its screen; never a CLI's loading (the source `loading`: Gemini
    CLI loads a resumed session under a spinner), nor, after a resumed start, work before it
    was first up (idle). So a wake, whose start ends idle, is no turn: a budget parks an agent
    at the end of a turn, and a woken one gets its turn first. A fresh spawn's work is its
    prompt's turn.

    >>> def e(kind: EventKind, **data: object) -> Event: return Event(1, "a", "x", "T", kind, data)
    >>> woke = e("started", resume=True)
    >>> early = e("status", status="working", previous="starting")
    >>> loads = e("status", status="working", source="loading")
    >>> idle = e("status", status="idle")
    >>> began_turn([woke, early, idle]), began_turn([woke, idle, loads, idle])
    (False, False)
    >>> began_turn([woke, idle, early, idle]), began_turn([e("started"), early])
    (True, True)
    >>> began_turn([woke, e("sent", delivered=True)])
    True
    >>> began_turn([woke, e("sent", delivered=True, command=True)])  # /clear
    False
    """
    seen = iter(events)
    first = next(seen, None)
    if first is None:
        return False
    up = not (first.kind == "started" and first.data.get("resume"))
    for e in itertools.chain([first], seen):
        if e.kind == "sent" and e.data.get("delivered") and not e.data.get("command"):
            return True
        status = e.text("status") if e.kind == "status" else None
        source = e.text("source")
        if status == Status.WORKING and source != "loading" and (up or source == "hook"):
            return True
        up = up or status == Status.IDLE
    return False


def over_max_live(live: Sequence[Live], max_live: int) -> list[str]:
    """The agents to hibernate so that at most `max_live` run: the idle longest first, never
    one a person is attached to nor one not idle (working, waiting for its person, starting).
    Fewer when not enough may be hibernated."""
    excess = len(live) - max_live
    if excess <= 0:
        return []
    idle = sorted(
        (a for a in live if a.status == Status.IDLE and not a.attached), key=lambda a: a.since
    )
    return [a.name for a in idle[:excess]]
