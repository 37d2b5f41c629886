"""Issue 23, pure parts of the `limited` status: the status pipeline reads a usage limit out of
an error (hook or screen) and out of Claude Code's limit dialog (which its waiting pattern
"Enter to confirm" used to read as `waiting`); send refuses a limited agent with its reset time.
No tmux, a fixed clock far from today."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from roost.core import delivery, observation, present, status
from roost.core.model import Agent
from roost.core.observation import Observation
from roost.core.pane import Pane
from roost.providers import traits

NOW = datetime(2031, 7, 14, 14, 50, tzinfo=UTC).timestamp()
PARIS = ZoneInfo("Europe/Paris")  # 16:50 there at NOW


def claude(provider: str = "claude") -> Observation:
    rec = Agent("id-a", "a", provider, "/w", "a", intent="running", launches=1)
    p = Pane(
        session_id="$1",
        session_name="a",
        window_id="@1",
        window_name="a",
        window_index=1,
        pane_id="%1",
        pid=42,
        dead=False,
        dead_status=None,
        agent_id="id-a",
        is_keeper=False,
        is_home=True,
        activity=NOW - 60,
    )
    [found] = observation.join([rec], [p])
    return found


def classify(
    o: Observation, hook: tuple[str, float, str | None] | None, screen: str | None
) -> Observation:
    patterns = status.patterns_for(traits.of(o.agent.provider).patterns)
    return observation.classify(o, hook, screen, patterns, NOW, typed=False, local=PARIS)


# Claude Code's limit dialog (/rate-limit-options) under the limit's words.
CLAUDE_DIALOG = """\
❯ hello there
  ⎿  You're out of extra usage · resets 5pm (Europe/Paris)

 What do you want to do?

 ❯ 1. Stop and wait for limit to reset
   2. Upgrade your plan

 Enter to confirm · Esc to cancel
"""


def test_claudes_limit_dialog_reads_limited_not_waiting() -> None:
    found = classify(claude(), None, CLAUDE_DIALOG)
    assert found.status == "limited"
    assert found.limit is not None and found.limit.kind == "credits"
    assert found.limit.resets_at == datetime(2031, 7, 14, 17, 0, tzinfo=PARIS).timestamp()
    assert found.status_reason == "You're out of extra usage · resets 5pm (Europe/Paris)"


def test_a_permission_dialog_still_reads_waiting() -> None:
    screen = "❯ run ls\n Do you want to proceed?\n ❯ 1. Yes\n   2. No\n Esc to cancel\n"
    found = classify(claude(), None, screen)
    assert (found.status, found.limit) == ("waiting", None)


def test_claudes_stop_failure_with_the_limit_words_reads_limited() -> None:
    hook = ("error", NOW - 30, "You've hit your session limit · resets 12:50am (Europe/Paris)")
    found = classify(claude(), hook, None)
    assert (found.status, found.status_source) == ("limited", "hook")
    assert found.limit is not None and found.limit.kind == "session"
    # the next 00:50 in Paris after the hook fired: tomorrow
    assert found.limit.resets_at == datetime(2031, 7, 15, 0, 50, tzinfo=PARIS).timestamp()


def test_other_errors_stay_errors() -> None:
    hook = ("error", NOW - 30, "API Error: 500 Internal server error")
    assert classify(claude(), hook, None).status == "error"


def test_codex_limit_on_its_screen_reads_limited_in_the_machines_zone() -> None:
    screen = (
        "› hello\n"
        "■ You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit "
        "https://chatgpt.com/codex/settings/usage to purchase more credits or try again at "
        "6:20 PM.\n"
        "› Ask Codex to do anything\n"
        "  ? for shortcuts\n"
    )
    found = classify(claude("codex"), None, screen)
    assert found.status == "limited" and found.limit is not None
    assert found.limit.resets_at == datetime(2031, 7, 14, 18, 20, tzinfo=PARIS).timestamp()


def test_gemini_quota_reads_limited_with_no_reset() -> None:
    screen = (
        "✦ hi\nUsage limit reached for gemini-2.5-pro.\n│ > Type your message or @path/to/file │\n"
    )
    found = classify(claude("gemini"), None, screen)
    assert found.status == "limited" and found.limit is not None
    assert (found.limit.kind, found.limit.resets_at) == ("quota", None)


def test_send_refuses_a_limited_agent_with_its_reset_time() -> None:
    resets = NOW + 2 * 3600 + 10 * 60
    said = present.limited_until("a", resets, NOW, UTC)
    assert said == "a is limited until 17:00 (in 2 h 10 min)"
    plan = delivery.decide(
        delivery.Found("a", "limited", True, 1.0, said), command=False, has_hooks=True
    )
    assert (plan.deliver, plan.timed_out, plan.why) == (False, False, said)


def test_once_the_reset_passed_the_failed_turn_is_history() -> None:
    hook = ("error", NOW - 6 * 3600, "You've hit your session limit · resets 12pm (UTC)")
    found = classify(claude(), hook, None)  # shown at 08:50 UTC, reset 12:00, now 14:50
    assert (found.status, found.limit, found.status_reason) == ("idle", None, None)
    dialog = classify(claude(), None, CLAUDE_DIALOG.replace("5pm (Europe/Paris)", "4pm (UTC)"))
    assert dialog.status == "limited"  # shown a minute ago: 16:00 UTC is still to come


def test_a_parent_hears_its_child_hit_a_limit() -> None:
    from roost.core import notify

    assert notify.kind_of("working", "limited") == "limited"
    said = notify.text("kid", "limited", "You've hit your limit · resets 5pm (UTC)")
    assert said.startswith("[roost] kid hit its usage limit") and "resets 5pm" in said
