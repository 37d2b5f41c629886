"""Usage limits from a CLI's own words: which kind of limit, and when it resets (issue 23).

Each CLI says it its own way (docs/PROVIDERS.md lists them): Claude Code's "You've hit your
session limit · resets 12:50am (America/Los_Angeles)", "… weekly limit · resets Aug 10 at 3am
(Europe/Paris)", "You're out of extra usage · resets 5pm (…)", its older "Claude usage limit
reached. Your limit will reset at 1pm (Etc/GMT+5)" and "Claude AI usage limit reached|<epoch>";
Codex's "You've hit your usage limit. … try again at 4:20 PM." (or "… at Sep 19th, 2026 7:10
AM."), in the machine's own zone; Gemini's "You have reached your daily … quota limit" and
"Usage limit reached for <model>", with no reset time. A clock time is read as the next such
moment after the event that showed it (`at`), in the zone the text names (else `local`).

Pure: `roost ls`'s fast path classifies with it; zoneinfo is loaded only when a text names a
zone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from roost.core.status import Status

if TYPE_CHECKING:
    import re
    from collections.abc import Iterable
    from datetime import tzinfo

# The kinds of limit: a rolling session window (Claude's five hours), a weekly one, paid
# credits run out, a provider's quota (Gemini's daily requests), or a usage limit that does not
# say which (Codex).
SESSION, WEEKLY, CREDITS, QUOTA, USAGE = "session", "weekly", "credits", "quota", "usage"
KINDS = (SESSION, WEEKLY, CREDITS, QUOTA, USAGE)

MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# "3am", "12:50am", "4:20 PM", "Aug 10 at 3am", "Sep 19th, 2026 7:10 AM"
_WHEN = (
    r"(?:(?P<mon>[A-Za-z]{3})[a-z]*\.?\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?\s+"
    r"(?:(?P<year>\d{4})\s+)?(?:at\s+)?)?"
    r"(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<half>[ap])\.?m\.?"
)
_ZONE = r"(?:\s*\((?P<zone>[A-Za-z0-9_+\-/]+)\))?"
# (pattern, kind); the first that matches wins. The kind group, when present, refines it.
# Compiled on first use (_patterns): `re` costs `roost ls` a few ms to import, and its fast
# path reads a limit only from an agent in error or at a dialog.
_FORMS: tuple[tuple[str, str], ...] = (
    (r"usage limit reached\|(?P<epoch>\d{9,11})", SESSION),
    (r"hit your (?P<kind>[\w' -]*?)\s*limit\s*[·.\-]\s*resets\s+" + _WHEN + _ZONE, SESSION),
    (r"out of (?:extra usage|usage credits)\s*[·.\-]\s*resets\s+" + _WHEN + _ZONE, CREDITS),
    (r"limit will reset at\s+" + _WHEN + _ZONE, SESSION),
    (r"hit your usage limit.*?try again at\s+" + _WHEN, USAGE),
    (r"hit your (?:(?P<kind>session|weekly)\s+)?limit", SESSION),
    (
        r"out of (?:extra usage|usage credits|credits)|credit balance is too low",
        CREDITS,
    ),
    (r"(?:hit|reached) your usage limit|usage limit reached", USAGE),
    (
        r"reached your (?:daily )?\S* ?quota limit|exhausted your (?:daily )?quota|"
        r"quota exceeded",
        QUOTA,
    ),
)
# Gemini says "Usage limit reached for <model>" for its quota; Claude's older text says
# "Claude usage limit reached": the words before decide.
_GEMINI_QUOTA = r"usage limit reached for\s"
_compiled: list[tuple[re.Pattern[str], tuple[tuple[re.Pattern[str], str], ...]]] = []


def _patterns() -> tuple[re.Pattern[str], tuple[tuple[re.Pattern[str], str], ...]]:
    """_GEMINI_QUOTA and _FORMS compiled (case-insensitive), once."""
    if not _compiled:
        forms = tuple((re.compile(source, re.I), kind) for source, kind in _FORMS)
        _compiled.append((re.compile(_GEMINI_QUOTA, re.I), forms))
    return _compiled[0]


@dataclass(frozen=True, slots=True)
class Limit:
    """A usage limit: its kind (KINDS), when it resets (epoch seconds; None: the CLI did not
    say) and the CLI's words."""

    kind: str
    resets_at: float | None
    words: str


def parse(text: str, at: datetime, local: tzinfo) -> Limit | None:
    """The usage limit `text` (a CLI's words, one line or a screen) tells of, or None. `at`: when
    it was shown (timezone-aware); `local`: the zone of a time that names none.

    >>> from datetime import timezone
    >>> at = datetime(2031, 3, 4, 15, 0, tzinfo=timezone.utc)
    >>> found = parse("You've hit your limit · resets 5pm (UTC)", at, timezone.utc)
    >>> found.kind, datetime.fromtimestamp(found.resets_at, timezone.utc).hour
    ('session', 17)
    >>> parse("All done.", at, timezone.utc) is None
    True
    """
    for line in text.splitlines() or [text]:
        found = _parse_line(line, at, local)
        if found is not None:
            return found
    return None


def _parse_line(line: str, at: datetime, local: tzinfo) -> Limit | None:
    gemini_quota, forms = _patterns()
    if gemini_quota.search(line):
        return Limit(QUOTA, None, line.strip())
    for pattern, kind in forms:
        match = pattern.search(line)
        if match is None:
            continue
        groups = match.groupdict()
        kind = _named(groups.get("kind") or "", kind)
        return Limit(kind, _resets(groups, at, local), line.strip())
    return None


def _named(words: str, kind: str) -> str:
    """Claude Code 2.1.332 names the window it hit (its rate limit types): "5-hour" or
    "session", "weekly", "Opus" and "Sonnet" (weekly ones too), "usage credit" and "monthly
    spend" (paid credits); "usage" or nothing says no more."""
    words = words.lower()
    if any(w in words for w in ("weekly", "opus", "sonnet", "fable")):
        return WEEKLY
    if "credit" in words or "spend" in words:
        return CREDITS
    return kind


def _resets(groups: dict[str, str | None], at: datetime, local: tzinfo) -> float | None:
    if groups.get("epoch"):
        return float(groups["epoch"] or 0)
    if groups.get("hour") is None:
        return None
    zone = _zone(groups.get("zone"), local)
    if zone is None:
        return None  # a zone we cannot read: no guess
    hour = int(groups["hour"] or 0) % 12 + (12 if (groups.get("half") or "").lower() == "p" else 0)
    minute = int(groups.get("minute") or 0)
    month = groups.get("mon")
    if month is not None and month.lower() not in MONTHS:
        return None
    when = next_moment(
        at,
        zone,
        hour,
        minute,
        month=MONTHS.index(month.lower()) + 1 if month else None,
        day=int(groups["day"] or 0) if groups.get("day") else None,
        year=int(groups["year"] or 0) if groups.get("year") else None,
    )
    return when.timestamp() if when is not None else None


def _zone(name: str | None, local: tzinfo) -> tzinfo | None:
    if not name:
        return local
    from zoneinfo import ZoneInfo  # loaded only for a text that names a zone

    try:
        return ZoneInfo(name)
    except (ValueError, LookupError, OSError):
        return None


def next_moment(
    at: datetime,
    zone: tzinfo,
    hour: int,
    minute: int,
    *,
    month: int | None = None,
    day: int | None = None,
    year: int | None = None,
) -> datetime | None:
    """The first moment after `at` that reads hour:minute (on month/day of `year`, when given)
    on a clock in `zone`; None for a date that does not exist. The wall time is built on the
    calendar first and placed in the zone after, so a DST change between `at` and the reset
    moves nothing.

    >>> from datetime import timezone
    >>> at = datetime(2031, 3, 4, 23, 30, tzinfo=timezone.utc)
    >>> next_moment(at, timezone.utc, 0, 50).isoformat()  # past midnight: the next day
    '2031-03-05T00:50:00+00:00'
    """
    local = at.astimezone(zone)
    try:
        if month is not None and day is not None:
            for y in (year,) if year is not None else (local.year, local.year + 1):
                candidate = datetime(y, month, day, hour, minute, tzinfo=zone)
                if candidate > at or year is not None:
                    return candidate
            return None
        candidate = datetime(local.year, local.month, local.day, hour, minute, tzinfo=zone)
        if candidate <= at:
            tomorrow = local.date() + timedelta(days=1)
            candidate = datetime(
                tomorrow.year, tomorrow.month, tomorrow.day, hour, minute, tzinfo=zone
            )
        return candidate
    except ValueError:
        return None


# Claude Code's /rate-limit-options dialog ("What do you want to do? 1. Stop and wait for limit
# to reset 2. Upgrade your plan … Enter to confirm"): a limit, not a question for the person.
DIALOGS = ("Stop and wait for limit to reset", "/rate-limit-options")
SCREEN_WINDOW = 12  # last non-empty lines of a screen where a current limit's words sit


def from_status(
    status: str, reason: str | None, screen: str | None, shown: float, local: tzinfo | None
) -> Limit | None:
    """The usage limit behind an `error` (its reason, else the words in the screen's last
    lines) or a `waiting` that is Claude's limit dialog; None for any other status or words.
    `shown`: when the words were shown (epoch seconds); `local`: the machine's zone."""
    at = datetime.fromtimestamp(shown, UTC)
    zone = local if local is not None else UTC
    tail = "\n".join(
        [line for line in (screen or "").splitlines() if line.strip()][-SCREEN_WINDOW:]
    )
    if status == Status.ERROR:
        return parse(reason or "", at, zone) or (parse(tail, at, zone) if tail else None)
    if status == Status.WAITING and any(cue in tail for cue in DIALOGS):
        return parse(tail, at, zone) or Limit(USAGE, None, next(c for c in DIALOGS if c in tail))
    return None


# A limit whose CLI gave no reset time is believed this long after it was seen (agent-deck's
# choice after #1802: the longest window, Claude's five hours), then sends and starts try again.
UNKNOWN_FOR = 5 * 3600.0


def current(limit: Limit, seen_at: float, now: float) -> bool:
    """Whether a limit recorded at `seen_at` still holds at `now`.

    >>> current(Limit(SESSION, 100.0, "w"), 0.0, 99.0), current(Limit(QUOTA, None, "w"), 0.0, 3.0)
    (True, True)
    """
    if limit.resets_at is None:
        return now - seen_at < UNKNOWN_FOR
    return limit.resets_at > now


def by_account(
    recorded: Iterable[tuple[str, str, Limit, float]], now: float
) -> dict[str, tuple[str, Limit, float]]:
    """The limits that hold now, one per account: {provider: (agent name, limit, seen_at)}, the
    one that resets last (an unknown reset counts as its UNKNOWN_FOR). One account per provider
    on a machine: the agents of one provider share its login (as restore's canary assumes)."""
    found: dict[str, tuple[str, Limit, float]] = {}
    for name, provider, limit, seen_at in recorded:
        if not current(limit, seen_at, now):
            continue
        ends = _ends(limit, seen_at)
        if provider not in found or ends > _ends(found[provider][1], found[provider][2]):
            found[provider] = (name, limit, seen_at)
    return found


def _ends(limit: Limit, seen_at: float) -> float:
    return limit.resets_at if limit.resets_at is not None else seen_at + UNKNOWN_FOR
