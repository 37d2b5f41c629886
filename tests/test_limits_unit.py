"""Usage limits read from each CLI's own words (issue 23): kinds, reset times in a named zone
read as the next such moment after the event, across DST and midnight, with an injected clock
far from today."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from roost.limits import rules as limits
from roost.limits.rules import parse

# Far from today: nothing here may depend on the date the tests run.
AT = datetime(2031, 7, 14, 18, 0, tzinfo=UTC)  # 11:00 in Los Angeles (PDT), 20:00 in Paris
LOCAL = ZoneInfo("America/New_York")


def when(found: limits.Limit | None, zone: str) -> datetime:
    assert found is not None and found.resets_at is not None
    return datetime.fromtimestamp(found.resets_at, ZoneInfo(zone))


@pytest.mark.parametrize(
    ("text", "kind", "zone", "expected"),
    [
        (
            "You've hit your session limit · resets 12:50am (America/Los_Angeles)",
            "session",
            "America/Los_Angeles",
            datetime(2031, 7, 15, 0, 50),  # past midnight: tomorrow
        ),
        (
            "You've hit your limit · resets 1:30am (Asia/Dhaka)",
            "session",
            "Asia/Dhaka",
            datetime(2031, 7, 15, 1, 30),  # 00:00 in Dhaka now: later today is tomorrow's date
        ),
        (
            "You've hit your weekly limit · resets Aug 10 at 3am (Europe/Paris)",
            "weekly",
            "Europe/Paris",
            datetime(2031, 8, 10, 3, 0),
        ),
        (
            "You're out of extra usage · resets 5pm (America/Los_Angeles)",
            "credits",
            "America/Los_Angeles",
            datetime(2031, 7, 14, 17, 0),  # later today
        ),
        (
            "Claude usage limit reached. Your limit will reset at 1pm (Etc/GMT+5).",
            "session",
            "Etc/GMT+5",
            datetime(2031, 7, 15, 13, 0),  # 13:00 today there has passed (it is 13:00 now)
        ),
        (
            "■ You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), "
            "visit https://chatgpt.com/codex/settings/usage to purchase more credits or try "
            "again at 4:20 PM.",
            "usage",
            "America/New_York",  # Codex names no zone: the machine's own
            datetime(2031, 7, 14, 16, 20),
        ),
        (
            "You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro) or "
            "try again at Sep 19th, 2032 7:10 AM.",
            "usage",
            "America/New_York",
            datetime(2032, 9, 19, 7, 10),
        ),
    ],
)
def test_each_cli_text_gives_its_kind_and_next_reset(
    text: str, kind: str, zone: str, expected: datetime
) -> None:
    found = parse(text, AT, LOCAL)
    assert found is not None and found.kind == kind
    assert when(found, zone).replace(tzinfo=None) == expected
    assert found.words == text.strip()


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("5-hour limit", "session"),
        ("usage limit", "session"),
        ("Opus limit", "weekly"),
        ("Sonnet limit", "weekly"),
        ("usage credit limit", "credits"),
    ],
)
def test_claude_names_its_windows(name: str, kind: str) -> None:
    # 2.1.332 builds "You've hit your <name> · resets <time>[ · progress saved]" from the
    # rate limit type (five_hour, seven_day_opus, seven_day_sonnet, overage...).
    text = f"You've hit your {name} · resets 3am (Europe/Paris) · progress saved"
    found = parse(text, AT, LOCAL)
    assert found is not None and found.kind == kind
    assert when(found, "Europe/Paris").replace(tzinfo=None) == datetime(2031, 7, 15, 3, 0)


def test_out_of_usage_credits_is_credits() -> None:
    found = parse("You're out of usage credits · resets 5pm (UTC)", AT, LOCAL)
    assert found is not None and found.kind == "credits"
    assert when(found, "UTC") == datetime(2031, 7, 15, 17, 0, tzinfo=ZoneInfo("UTC"))


def test_claude_print_mode_epoch_is_taken_as_is() -> None:
    found = parse("Claude AI usage limit reached|1749924000", AT, LOCAL)
    assert found == limits.Limit(
        "session", 1749924000.0, "Claude AI usage limit reached|1749924000"
    )


@pytest.mark.parametrize(
    "text",
    [
        "⚡ You have reached your daily gemini-2.5-pro quota limit.",
        "Usage limit reached for gemini-2.5-flash-lite",
        "✕ [API Error: You have exhausted your daily quota on this model.]",
    ],
)
def test_gemini_quota_has_no_reset_time(text: str) -> None:
    found = parse(text, AT, LOCAL)
    assert found is not None and found.kind == "quota" and found.resets_at is None


@pytest.mark.parametrize(
    "text",
    [
        "API Error: 500 Internal server error",
        "Please run /login · API Error: 401",
        "the limit of this loop is 3am-ish",
        "",
    ],
)
def test_other_words_are_no_limit(text: str) -> None:
    assert parse(text, AT, LOCAL) is None


def test_a_zone_roost_cannot_read_gives_no_reset_but_still_a_limit() -> None:
    found = parse("You've hit your session limit · resets 5pm (Mars/Olympus)", AT, LOCAL)
    assert found is not None and found.kind == "session" and found.resets_at is None


NEW_YORK, PARIS = ZoneInfo("America/New_York"), ZoneInfo("Europe/Paris")


@pytest.mark.parametrize(
    ("at", "text", "zone", "wall", "hours_later"),
    [
        # 2031-03-09 is the US spring-forward day: at 23:00 EST the day before, "resets 9am" is
        # 9:00 EDT, 10 hours later on the wall clock but 9 real hours later.
        pytest.param(
            datetime(2031, 3, 8, 23, 0, tzinfo=NEW_YORK),
            "You've hit your limit · resets 9am (America/New_York)",
            "America/New_York",
            datetime(2031, 3, 9, 9, 0),
            9,
            id="across-spring-forward",
        ),
        # CEST, 1 h before 2:00: the hour 2-3 happens twice
        pytest.param(
            datetime(2031, 10, 26, 0, 30, tzinfo=PARIS),
            "You've hit your limit · resets 4am (Europe/Paris)",
            "Europe/Paris",
            datetime(2031, 10, 26, 4, 0),
            4.5,
            id="across-fall-back",
        ),
        pytest.param(
            datetime(2031, 12, 31, 23, 0, tzinfo=UTC),
            "You've hit your weekly limit · resets Jan 2 at 3am (UTC)",
            "UTC",
            datetime(2032, 1, 2, 3, 0),
            28,
            id="a-date-already-past-this-year-is-next-year",
        ),
        pytest.param(
            datetime(2031, 7, 14, 17, 0, tzinfo=timezone(timedelta(hours=0))),
            "You've hit your limit · resets 5pm (UTC)",
            "UTC",
            datetime(2031, 7, 15, 17, 0),
            24,
            id="a-reset-exactly-now-is-the-next-one",
        ),
    ],
)
def test_a_reset_keeps_its_wall_time_and_is_the_next_one(
    at: datetime, text: str, zone: str, wall: datetime, hours_later: float
) -> None:
    found = parse(text, at, UTC)
    assert when(found, zone).replace(tzinfo=None) == wall
    assert found is not None and found.resets_at is not None
    assert found.resets_at - at.timestamp() == hours_later * 3600


def test_a_screen_gives_the_limit_line_among_others() -> None:
    screen = "● Working on it\n  ⎿  You've hit your session limit · resets 12:50am (UTC)\n❯ \n"
    found = parse(screen, AT, LOCAL)
    assert found is not None and found.words.startswith("⎿  You've hit")


def test_the_account_limit_that_holds_longest_wins_and_passed_ones_are_gone() -> None:
    now = AT.timestamp()
    soon = limits.Limit("session", now + 600, "a")
    later = limits.Limit("weekly", now + 86400, "b")
    past = limits.Limit("session", now - 1, "c")
    unknown = limits.Limit("quota", None, "d")
    rows = [
        ("a1", "claude", soon, now - 60),
        ("a2", "claude", later, now - 60),
        ("a3", "codex", past, now - 60),
        ("g1", "gemini", unknown, now - limits.UNKNOWN_FOR + 1),  # believed for 5 h: 1 s left
        ("g2", "aider", unknown, now - limits.UNKNOWN_FOR),  # 5 h ago: over
    ]
    assert limits.by_account(rows, now) == {
        "claude": ("a2", later, now - 60),
        "gemini": ("g1", unknown, now - limits.UNKNOWN_FOR + 1),
    }
