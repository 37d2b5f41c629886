"""Resume at a usage limit's reset (issue 23, part 2): who resumes, when, and what it says.

Opt-in: an agent's own `on_limit` (roost policy NAME --on-limit), else its tab's, else the
config's `[limits] on_limit`, else "off". When a limited agent is to resume, it is told to go on
at its reset plus a small random delay (`jitter`), never within `gap` seconds of another resume
of the same account (provider and config folder), so a fleet that hit one account's limit does
not wake in the same second. With no known reset, roost tries after BACKOFF (15 min, 30, 60,
... capped), re-checking the status each time. What it says: the prompt the limit cut, when roost
sent it; else CONTINUE.

Pure: ops/resume.py reads the store and tmux and acts.
"""

from __future__ import annotations

from collections.abc import Iterable

OFF, RESUME = "off", "resume"
ON_LIMIT = (OFF, RESUME)
DEFAULT_JITTER = 60.0  # seconds: the most a resume waits after the reset, at random
DEFAULT_GAP = 20.0  # seconds between two resumes of one account
BACKOFF_FIRST = 15 * 60.0  # an unknown reset: the first try this long after the limit was seen
BACKOFF_CAP = 4 * 3600.0  # ... doubling each try, at most this
DRAFT_RETRY = 60.0  # a draft on the input line: look again this much later
CONTINUE = "continue"  # what a resume says when no prompt of roost's was cut
WAITING, SENT = "waiting", "sent"  # a resume to make; one made, to check at its due time


def effective(agent: str | None, tab: str | None, configured: str) -> str:
    """The on-limit policy that applies: the agent's own, else its tab's, else config.toml's
    `[limits] on_limit`.

    >>> effective(None, "resume", "off")
    'resume'
    >>> effective("off", "resume", "off"), effective(None, None, "off")
    ('off', 'off')
    """
    for value in (agent, tab, configured):
        if value in ON_LIMIT:
            return str(value)
    return OFF


def backoff(tries: int) -> float:
    """Seconds before try number `tries` (0 first) when the reset time is unknown.

    >>> [backoff(n) / 60 for n in range(6)]
    [15.0, 30.0, 60.0, 120.0, 240.0, 240.0]
    """
    return min(BACKOFF_FIRST * 2.0 ** min(tries, 20), BACKOFF_CAP)


def base_due(resets_at: float | None, seen_at: float, tries: int, now: float) -> float:
    """When a resume is wanted before jitter and stagger: the reset, or (unknown) the backoff
    after the limit was seen; never in the past."""
    wanted = resets_at if resets_at is not None else seen_at + backoff(tries)
    return max(wanted, now)


def staggered(wanted: float, others: Iterable[float], gap: float) -> float:
    """The first moment at or after `wanted` that is at least `gap` seconds from each of
    `others` (the due times of the same account's other resumes).

    >>> staggered(100.0, [100.0, 120.0], 20.0)
    140.0
    >>> staggered(100.0, [150.0], 20.0), staggered(100.0, [110.0], 20.0)
    (100.0, 130.0)
    """
    due = wanted
    for other in sorted(others):
        if other - gap < due < other + gap:
            due = other + gap
    return due


def what_to_say(prompt: str | None) -> str:
    """The interrupted prompt again, else a plain "continue"."""
    return prompt if prompt else CONTINUE


def outlook(
    policy: str, due: float | None, state: str | None, now: float, clock_text: str | None
) -> str:
    """What `roost limits` says will happen: "resume at 17:03 (in 2 h 13 min)" or why not.
    `clock_text`: `due` written for people (present.reset_time)."""
    if policy != RESUME:
        return "nothing: on-limit is off"
    if due is None or clock_text is None:
        return "resume once the limit is recorded (the next look)"
    if state == SENT:
        return f"resumed; checks again at {clock_text}"
    return f"resume at {clock_text}"
