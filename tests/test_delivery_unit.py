"""The pure decisions of issue 14: what a send does (core.delivery), where a draft is seen on
each provider's screen (core.status.draft with providers.traits.INPUT_LINES), and whether a
start held (core.starts)."""

from __future__ import annotations

import pytest

from roost.core import delivery, starts, status
from roost.core.delivery import EFFECT, EXIT, HOOK, RECORD, SCREEN, Budget, Found, decide
from roost.core.restoring import Report
from roost.providers import traits


# ---- what a send does ----------------------------------------------------------------------------
def found(
    status_: str | None = "idle",
    *,
    in_time: bool = True,
    draft: str | None = None,
    alive: bool = True,
    reason: str | None = None,
) -> Found:
    return Found("ag", status_, in_time, 5.0, reason, alive, draft)


DECISIONS = {
    # name: (found, command, hooks, record) -> (deliver, confirm_by, baseline, timed_out)
    "idle, hooks": (found(), False, True, False, (True, (HOOK,), False, False)),
    "idle, record": (found(), False, False, True, (True, (RECORD,), False, False)),
    "idle, screen only": (found(), False, False, False, (True, (SCREEN,), True, False)),
    "slash command, hooks": (
        found(),
        True,
        True,
        False,
        (True, (EFFECT, SCREEN, EXIT), True, False),
    ),
    "slash command, no hooks": (found(), True, False, True, (True, (SCREEN, EXIT), True, False)),
    "draft": (found(draft="half"), False, True, False, (False, (), False, False)),
    "draft before a command": (found(draft="x"), True, True, False, (False, (), False, False)),
    "dead pane": (found(alive=False), False, True, False, (False, (), False, False)),
    "waiting": (found("waiting"), False, True, False, (False, (), False, False)),
    "error": (found("error", reason="boom"), False, True, False, (False, (), False, False)),
    "busy past the ready wait": (
        found("working", in_time=False),
        False,
        True,
        False,
        (False, (), False, True),
    ),
    "starting past the ready wait": (
        found("starting", in_time=False),
        False,
        False,
        False,
        (False, (), False, True),
    ),
    "exited": (found("exited"), False, True, False, (False, (), False, False)),
}


@pytest.mark.parametrize("case", DECISIONS)
def test_what_a_send_does(case: str) -> None:
    given, command, hooks, record, (deliver, confirm_by, baseline, timed_out) = DECISIONS[case]
    plan = decide(given, command=command, has_hooks=hooks, has_record=record)
    assert (plan.deliver, plan.confirm_by, plan.screen_baseline, plan.timed_out) == (
        deliver,
        confirm_by,
        baseline,
        timed_out,
    )
    assert bool(plan.why) != plan.deliver  # a refusal always says why
    # a draft's refusal says so in a field (a resume waits less for one): no words parsed
    assert plan.draft == case.startswith("draft")


REFUSALS = {
    "draft": (
        found(draft="draft-words"),
        'ag has a draft on its input line ("draft-words"): sent nothing, so it is neither '
        "submitted nor lost; submit or clear it (roost attach ag), then send again",
    ),
    "long draft": (found(draft="x" * 100), '("' + "x" * 39 + '…")'),
    "busy": (
        found("working", in_time=False),
        "timed out after 5 s waiting for ag to be ready for input (it is working; "
        "--ready-timeout waits longer)",
    ),
    "error": (
        found("error", reason="Invalid API key"),
        "ag shows an error: Invalid API key (roost attach ag to see it through)",
    ),
    "waiting": (found("waiting"), "ag is waiting for you (roost attach ag)"),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_a_refusal_says_what_to_do(case: str) -> None:
    given, words = REFUSALS[case]
    assert words in decide(given, command=False, has_hooks=True).why


BUDGETS = {
    # (total, phase, seconds since the start) -> seconds the phase may take
    "no total": ((None, 60.0, 10.0), 60.0),
    "total shorter than the phase": ((5.0, 60.0, 1.0), 4.0),
    "phase shorter than what is left": ((600.0, 15.0, 100.0), 15.0),
    "total spent": ((5.0, 15.0, 9.0), 0.0),
}


@pytest.mark.parametrize("case", BUDGETS)
def test_one_deadline_bounds_every_phase(case: str) -> None:
    (total, phase, since), left = BUDGETS[case]
    assert Budget(start=100.0, total=total).left(100.0 + since, phase) == left


def test_time_limits_must_be_positive() -> None:
    assert delivery.check_timeouts(600.0, 60.0) is None
    assert (
        delivery.check_timeouts(0.0, 60.0)
        == "--timeout must be a positive number of seconds, not 0"
    )
    assert "--ready-timeout" in (delivery.check_timeouts(5.0, -1.0) or "")


# ---- drafts on each provider's screen ------------------------------------------------------------
CLAUDE_BOX = "● echo: hi\n\n" + "─" * 40 + "\n❯ {}\n" + "─" * 40 + "\n  ? for shortcuts\n"
CODEX = "› earlier prompt\n\n• echo\n  Worked for 1s\n\n› {}\n\n  ? for shortcuts\n"
GEMINI = "✦ answer\n╭────────────╮\n│ > {}   │\n╰────────────╯\n  ~/work   model\n"
AIDER = "> earlier prompt\nanswer\nTokens: 1k sent\n\n> {}\n"
SCREENS = {
    # name: (provider, screen) -> the draft seen
    "claude, draft": ("claude", CLAUDE_BOX.format("draft-words"), "draft-words"),
    "claude, empty": ("claude", CLAUDE_BOX.format(""), None),
    "claude, failed turn's hint": (
        "claude",
        CLAUDE_BOX.format("Resend your message to try again"),
        None,
    ),
    "claude, suggestion": ("claude", CLAUDE_BOX.format('Try "refactor <filepath>"'), None),
    "claude, old box": ("claude", "╭───╮\n│ > half typed   │\n╰───╯\n", "half typed"),
    "claude fake": ("claude", "fake-claude session x\n● echo: a\n❯ half\n", "half"),
    "codex, draft": ("codex", CODEX.format("fix the tests"), "fix the tests"),
    "codex, placeholder": ("codex", CODEX.format("Ask Codex to do anything"), None),
    "codex, follow-up placeholder": ("codex", CODEX.format("Ask a follow-up question"), None),
    "codex, empty, earlier prompt above": ("codex", CODEX.format(""), None),
    "gemini, draft": ("gemini", GEMINI.format("explain this"), "explain this"),
    "gemini, placeholder": ("gemini", GEMINI.format("Type your message or @path/to/file"), None),
    "aider, draft": ("aider", AIDER.format("half"), "half"),
    "aider, empty prompt": ("aider", AIDER.format("").rstrip() + "\n", None),
    "aider, only earlier prompts": ("aider", "> earlier prompt\nanswer\n", None),
    "nothing on screen": ("claude", "", None),
}


@pytest.mark.parametrize("case", SCREENS)
def test_a_draft_is_read_off_each_providers_input_line(case: str) -> None:
    provider, screen, draft = SCREENS[case]
    line = traits.INPUT_LINES[provider]
    assert status.draft(screen, line.markers, line.window, line.placeholders) == draft


def test_a_command_agent_has_no_input_line() -> None:
    assert "command" not in traits.INPUT_LINES  # roost cannot know where its input is


# ---- starts that die at once ---------------------------------------------------------------------
VERDICTS = {
    # (alive, showing, still_for, has_patterns, elapsed) -> verdict
    "dead": ((False, None, 0.0, True, 0.1), starts.DIED),
    "dead late in the window": ((False, "idle", 0.0, True, 2.9), starts.DIED),
    "prompt shown": ((True, "idle", 0.0, True, 0.2), starts.HELD),
    "busy": ((True, "working", 0.0, True, 0.2), starts.HELD),
    "a dialog": ((True, "waiting", 0.0, True, 0.2), starts.HELD),
    "an error screen, alive": ((True, "error", 0.0, True, 0.2), starts.PENDING),
    "nothing yet": ((True, None, 0.0, True, 1.0), starts.PENDING),
    "lived through the window": ((True, None, 0.0, True, 3.0), starts.HELD),
    "a command, still screen": ((True, None, 0.3, False, 0.5), starts.HELD),
    "a command, moving screen": ((True, None, 0.1, False, 0.5), starts.PENDING),
}


@pytest.mark.parametrize("case", VERDICTS)
def test_whether_a_start_held(case: str) -> None:
    given, verdict = VERDICTS[case]
    assert starts.verdict(*given) == verdict


AUTH_401 = (
    'API Error: 401 {"type":"error","error":{"type":"authentication_error","message":'
    '"invalid x-api-key"},"request_id":"req_%s"}'
)


def test_identical_auth_failures_stop_a_provider() -> None:
    one, two = AUTH_401 % "0a1b2c3d4e5f", AUTH_401 % "ffeeddccbbaa"
    assert starts.stopped_providers([("claude", one)]) == {}
    assert starts.stopped_providers([("claude", one), ("claude", two)]) == {"claude": two}
    # another provider's, other failures, and different auth words do not add up
    assert starts.stopped_providers([("claude", one), ("codex", two)]) == {}
    assert starts.stopped_providers([("claude", "Error: boom"), ("claude", "Error: boom")]) == {}
    assert starts.stopped_providers([("claude", one), ("claude", "Invalid API key")]) == {}
    advice = starts.advice({"claude": one})
    assert advice == [
        f"stopped starting claude agents after 2 identical authentication failures ({one}): "
        "log in to claude once (or fix its API key), then `roost restore`"
    ]


def test_last_words_are_bounded_and_leave_tmux_out() -> None:
    screen = "\n".join(f"line {i}" for i in range(10)) + "\n\nPane is dead (status 1, Mon)\n"
    assert starts.last_words(screen) == "line 7 / line 8 / line 9"
    assert len(starts.last_words("x" * 1000)) == starts.REASON_LIMIT
    assert starts.died_reason("", 1) == "its start failed at once (exit 1): it printed nothing"


def test_restore_report_says_what_was_not_started_and_fails() -> None:
    report = Report(
        live=3,
        started=["a"],
        already_running=[],
        hibernated=[],
        failed={"b": "its start failed at once (exit 1): API Error: 401"},
        peak=1,
        seconds=1.0,
        skipped={"c": "not started: ..."},
        advice=["stopped starting claude agents ..."],
    )
    assert not report.ok
    text = report.text()
    assert "1 failed, 1 not started" in text and "failed b: its start failed" in text
    assert "  not started c: ...\n" in text and "stopped starting claude agents" in text
    assert report.as_json()["not_started_agents"] == {"c": "not started: ..."}
    assert Report(1, ["a"], [], [], {}, 1, 1.0).ok
