"""Issue 10, pure parts: the `error` status and its reason, claude's hook log read as a turn
(a recap's SubagentStop outside a turn is not work), slash commands confirmed by their effect,
a silent program's status, the version check's parsing. No tmux, no sleeping."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from roost.core import confirming, delivery, observation, present, status
from roost.core.model import Agent
from roost.core.observation import Observation
from roost.ops import doctor, send
from roost.providers import hooks, traits

CLAUDE = status.patterns_for(traits.CLAUDE.patterns)
COMMAND = status.patterns_for(traits.COMMAND.patterns)
NOW = 1_000_000.0
TESTS = Path(__file__).resolve().parent

# Claude Code 2.1.332's screens after a failed turn (the stand-in answering 500, then 401), as
# `capture-pane` shows them in a 120-column pane.
FAILED_500 = "\n".join(
    [
        "❯ hello there",
        "● API Error: 500 Internal server error. This is a server-side issue, usually temporary — "
        "try again in a moment.",
        "  If it persists, check your inference gateway (127.0.0.1:37587).",
        "                  tmux focus-events off · add 'set -g focus-events on' to "
        "~/.tmux.conf and "
        "reattach for focus tracking",
        "─" * 120,
        "❯ Resend your message to try again",
        "─" * 120,
        "  ⏵⏵ auto mode on (shift+tab to cycle)",
        "",
    ]
)
FAILED_401 = """\
❯ hello there
  ⎿  Invalid API key · Fix external API key
────────────────────────────────────────────────────────────────────────────────────────────────────────────────
❯ Once fixed, resend your message
────────────────────────────────────────────────────────────────────────────────────────────────────────────────
  ⏵⏵ auto mode on (shift+tab to cycle)
"""
# While it retries (CLAUDE_CODE_MAX_RETRIES, 10 by default) it is still at work.
RETRYING = """\
❯ hello there
✻ 401 invalid x-api-key · retrying in 12s · attempt 6/10
────────────────────────────────────────────────────────────────────────────────────────────────────────────────
❯
────────────────────────────────────────────────────────────────────────────────────────────────────────────────
  ⏵⏵ auto mode on (shift+tab to cycle) · esc to interrupt
"""
# The next turn went well: the old error is still on screen, above it.
RECOVERED = FAILED_500.replace(
    "❯ Resend your message to try again",
    "❯ again\n● stub reply: again\n✻ Worked for 1s\n" + "─" * 40 + "\n❯ ",
)


def classify(**kw: Any) -> tuple[str, str, str | None]:
    base: dict[str, Any] = {
        "alive": True,
        "has_window": True,
        "base_state": "running",
        "roost_stopped": False,
        "hook": None,
        "screen": None,
        "activity": None,
        "started_at": NOW - 100,
        "patterns": CLAUDE,
        "now": NOW,
    }
    return status.classify(**{**base, **kw})


@pytest.mark.parametrize(
    ("kw", "expected"),
    [
        pytest.param(
            {"screen": FAILED_500},
            ("error", "screen", "Resend your message to try again"),
            id="failed-turn-hint",
        ),
        pytest.param(
            {"screen": FAILED_401},
            ("error", "screen", "Once fixed, resend your message"),
            id="fix-then-resend-hint",
        ),
        pytest.param({"screen": RETRYING}, ("working", "screen", None), id="retrying-is-work"),
        pytest.param({"screen": RECOVERED}, ("idle", "screen", None), id="old-error-scrolled-up"),
        pytest.param(
            {
                "hook": ("error", NOW - 5, "API Error: 500 Internal server error"),
                "screen": FAILED_500,
                "activity": NOW - 6,
            },
            ("error", "hook", "API Error: 500 Internal server error"),
            id="hook-error",
        ),
        pytest.param(
            {
                "hook": ("error", NOW - 50, "Invalid API key · Fix external API key"),
                "screen": "❯ half-typed",
                "activity": NOW - 1,
            },
            ("error", "hook", "Invalid API key · Fix external API key"),
            id="hook-error-outlives-typing",
        ),
        pytest.param(
            {"hook": ("idle", NOW - 50, None), "screen": FAILED_500, "activity": NOW - 2},
            ("error", "screen", "Resend your message to try again"),
            id="screen-error-after-a-quiet-hook",
        ),
        pytest.param(
            {"hook": ("idle", NOW - 5, "stale words")},
            ("idle", "hook", None),
            id="only-an-error-has-a-reason",
        ),
        pytest.param(
            {"alive": False, "base_state": "stopped"}, ("exited", "process", None), id="dead"
        ),
    ],
)
def test_error_status_and_its_reason(
    kw: dict[str, Any], expected: tuple[str, str, str | None]
) -> None:
    assert classify(**kw) == expected


@pytest.mark.parametrize(
    ("kw", "expected"),
    [
        pytest.param(
            {"screen": "\n" * 40, "activity": NOW - 100, "started_at": NOW - 5},
            ("starting", "process"),
            id="silent-in-the-grace",
        ),
        pytest.param(
            {"screen": "\n" * 40, "activity": NOW - 100, "started_at": NOW - 60},
            ("idle", "screen"),
            id="silent-after-the-grace",
        ),
        pytest.param(
            {"screen": "\n" * 40, "activity": None, "started_at": NOW - 60},
            ("idle", "screen"),
            id="silent-never-any-output",
        ),
        pytest.param(
            {"screen": "tick 41\ntick 42", "activity": NOW - 1, "started_at": NOW - 60},
            ("working", "screen"),
            id="moving",
        ),
        pytest.param(
            {"screen": None, "started_at": NOW - 60}, ("unknown", "process"), id="no-screen"
        ),
    ],
)
def test_a_pattern_less_program(kw: dict[str, Any], expected: tuple[str, str]) -> None:
    assert classify(patterns=COMMAND, **kw)[:2] == expected


def test_error_patterns_are_generic_and_checked_before_busy_and_idle() -> None:
    mine = {
        "waiting": ["Allow?"],
        "error": ["Reconnecting to server"],
        "working": ["esc to"],
        "idle": ["›"],
    }
    screen = "• Reconnecting to server… (esc to interrupt)\n› "
    assert status.reading(screen, mine) == ("error", "Reconnecting to server… (esc to interrupt)")
    # a question outranks it, its words the reason (no choices here: the line that shows it)
    assert status.reading("Allow?\n" + screen, mine) == ("waiting", "Allow?")
    # a provider without error patterns (or a caller's table without the kind) reads as before
    assert status.reading(screen, {"working": ["esc to"], "idle": ["›"]}) == ("working", None)
    # config.toml may set a provider's error patterns like any other kind
    assert status.patterns_for(traits.CODEX.patterns, {"error": ["lost it"]})["error"] == [
        "lost it"
    ]
    assert "error" in status.KINDS and status.KINDS.index("error") < status.KINDS.index("working")


def test_an_error_above_the_last_turn_is_over() -> None:
    """A CLI that leaves its error words in the scrollback marks its turns ("turn" patterns:
    a finished turn's footer, a busy line): only an error below the last such line counts."""
    mine = {"error": ["■ unexpected status"], "turn": ["Worked for "], "idle": ["^›$"]}
    failed = "› hi\n■ unexpected status 401 Unauthorized\n›"
    assert status.reading(failed, mine) == ("error", "unexpected status 401 Unauthorized")
    assert status.reading(failed + " again\n• hello\n─ Worked for 2s ─\n›", mine) == ("idle", None)
    # anchors: "^" starts a line, "$" ends the screen's last line
    assert status.reading("› typed text", mine) is None
    assert status.matches("Proceed? [Yes]: ", "[Yes]:$", True)
    assert not status.matches("Proceed? [Yes]: ", "[Yes]:$", False)
    assert status.patterns_for({}, {"turn": ["✦ "]})["turn"] == ["✦ "]


def test_a_reason_is_one_bounded_line() -> None:
    assert (
        status.one_line("  ⎿  Invalid API key · Fix external API key  ")
        == "Invalid API key · Fix external API key"
    )
    long = status.one_line("API Error: 500 " + "x" * 500 + "\nsecond line")
    assert len(long) == status.REASON_LIMIT and long.endswith("…") and "\n" not in long


# ---- claude's hook log: a turn, its failure, its recap --------------------------------------
Hook = tuple[str, Mapping[str, object]]  # an event's name and payload, as the log holds them


def fold(*events: Hook) -> tuple[str, float, str | None] | None:
    """What the hook log of these events, a second apart from NOW, gives."""
    return hooks.fold([(NOW + i, name, dict(payload)) for i, (name, payload) in enumerate(events)])


def status_of(*events: Hook) -> str | None:
    """The status alone that those events give (None: they say none)."""
    folded = fold(*events)
    return folded[0] if folded else None


def test_a_recap_outside_a_turn_is_not_work() -> None:
    recap = ("SubagentStop", {"agent_type": "", "last_assistant_message": "recap: ..."})
    # Claude Code 2.1.332, measured: Stop, then idle_prompt, then the recap's SubagentStop
    assert fold(
        ("SessionStart", {}),
        ("UserPromptSubmit", {}),
        ("Stop", {}),
        ("Notification", {"notification_type": "idle_prompt"}),
        recap,
    ) == ("idle", NOW + 3, None)
    assert fold(("SessionStart", {"source": "startup"}), recap) == ("idle", NOW, None)
    # inside a turn a subagent's end is work going on
    assert fold(("UserPromptSubmit", {}), ("PreToolUse", {}), recap) == ("working", NOW + 2, None)
    # a log whose tail shows no turn at all: as before, working
    assert fold(recap) == ("working", NOW, None)
    # a new launch forgets the last process's events
    assert fold(("Stop", {}), (hooks.LAUNCH, {})) is None


def test_a_compact_typed_at_the_prompt_leaves_the_status_to_the_screen() -> None:
    # `/compact` with too little to compact: PreCompact, then nothing (2.1.332, measured)
    assert fold(("Stop", {}), ("PreCompact", {"trigger": "manual"})) == ("idle", NOW, None)
    # compacting inside a turn is work; a compaction's new session ends it
    assert status_of(("UserPromptSubmit", {}), ("PreCompact", {"trigger": "auto"})) == "working"
    assert fold(("Stop", {}), ("PreCompact", {}), ("SessionStart", {"source": "compact"})) == (
        "idle",
        NOW + 2,
        None,
    )
    # the screen moving after the hook shows the compaction at work
    busy = "✻ Compacting conversation… (esc to interrupt)\n" + "─" * 20 + "\n❯ \n" + "─" * 20
    assert classify(hook=("idle", NOW - 10, None), screen=busy, activity=NOW - 1)[:2] == (
        "working",
        "screen",
    )


def test_a_failed_turn_is_an_error_in_the_clis_words_until_the_next_prompt() -> None:
    failure = (
        "StopFailure",
        {
            "error": "server_error",
            "last_assistant_message": "API Error: 500 Internal server error. This is a server-side "
            "issue, usually temporary — try again in a moment.",
        },
    )
    assert fold(("UserPromptSubmit", {}), failure) == (
        "error",
        NOW + 1,
        "API Error: 500 Internal server error. This is a server-side issue, "
        "usually temporary — try again in a moment.",
    )
    assert status_of(failure, ("Notification", {"notification_type": "idle_prompt"})) == "idle"
    assert status_of(failure, ("UserPromptSubmit", {})) == "working"
    assert fold(("StopFailure", {"error": "rate_limit"})) == ("error", NOW, "rate_limit")
    assert "StopFailure" in hooks.EVENTS  # roost's settings file asks for it


def test_the_status_is_read_from_the_last_turn_boundary(tmp_path: Path) -> None:
    log = Path(hooks.log_path(str(tmp_path), "id-a"))
    log.parent.mkdir(parents=True)
    lines = [
        f"{NOW + i}\t{name}\t{json.dumps(payload)}\n"
        for i, (name, payload) in enumerate(
            [
                ("SessionStart", {}),
                ("UserPromptSubmit", {"prompt": "x" * 200}),
                ("Stop", {}),
                ("Notification", {"notification_type": "idle_prompt"}),
                ("SubagentStop", {}),
            ]
        )
    ]
    log.write_text("".join(lines * 300))  # ~200 KiB: more than the tail that is read
    assert [e[1] for e in hooks.recent_events(str(log), None)] == [
        "Stop",
        "Notification",
        "SubagentStop",
    ]
    assert hooks.last_status(str(tmp_path), "id-a", None) == ("idle", NOW + 3, None)
    with log.open("a") as fh:
        fh.write(f"{NOW + 9}\tStopFailure\t{json.dumps({'error': 'billing_error'})}\n")
    assert hooks.last_status(str(tmp_path), "id-a", None) == ("error", NOW + 9, "billing_error")


# ---- the reason on its way out: ls --json, the table, the event log -------------------------
def observed(reason: str | None, status_: str = "error") -> Observation:
    record = Agent("id-a", "cc", "claude", "/w", "cc", status="idle", status_source="hook")
    return Observation(record, None, True, "running", 42, None, status_, "hook", "t0", reason)


def test_ls_shows_the_reason() -> None:
    words = (
        "API Error: 500 Internal server error. This is a server-side issue, usually "
        "temporary — try again in a moment."
    )
    o = observed(words)
    item = present.agent_json(o)
    assert tuple(item) == present.JSON_FIELDS and "status_reason" in present.JSON_FIELDS
    assert item["status"] == "error" and item["status_reason"] == words
    row = present.table([o]).splitlines()[1]
    assert f"error: {words[: present.TABLE_REASON - 1]}…" in row
    assert present.agent_json(observed(None, "idle"))["status_reason"] is None
    assert observation.status_event(o) == {
        "status": "error",
        "previous": "idle",
        "source": "hook",
        "reason": words,
    }
    assert observation.recorded(o, "t1").status_reason == words


# ---- send ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("/clear", True),
        ("  /compact keep the plan\n", True),
        ("/model opus", True),
        ("/mcp__srv__do:thing x", True),
        ("/tmp/build is empty", False),
        ("hello /clear", False),
        ("/clear\nand more", False),
        ("/", False),
        ("//", False),
    ],
)
def test_slash_commands(text: str, command: bool) -> None:
    assert send.is_slash_command(text) == command


def test_a_slash_command_is_confirmed_by_its_effect() -> None:
    def events(*names_payloads: tuple[str, dict[str, object]]) -> list[Any]:
        return [(NOW, n, p) for n, p in names_payloads]

    clear = events(
        ("SessionEnd", {"session_id": "s1", "reason": "clear"}),
        ("SessionStart", {"session_id": "s2", "source": "clear"}),
    )
    assert confirming.by_hooks(clear, "/clear", True, "s1") == "new session id"
    assert confirming.by_hooks(clear[:1], "/clear", True, "s1") == "effect"
    assert confirming.by_hooks(events(("PreCompact", {})), "/compact", True, "s1") == "effect"
    # a message is confirmed by its own prompt only, never by a session change
    assert confirming.by_hooks(clear, "hello", False, "s1") is None
    assert (
        confirming.by_hooks(
            events(("UserPromptSubmit", {"prompt": "hello "})), "hello", False, "s1"
        )
        == "hook"
    )
    # an idle claude's unrelated events confirm nothing
    idle = events(("Notification", {"notification_type": "idle_prompt"}), ("SubagentStop", {}))
    assert confirming.by_hooks(idle, "/clear", True, "s1") is None


def test_an_agent_in_error_is_refused_with_its_reason() -> None:
    def refusal(reason: str | None, status_: str = "error") -> str:
        plan = delivery.decide(
            delivery.Found("cc", status_, True, 0.0, reason), command=False, has_hooks=True
        )
        assert not plan.deliver
        return plan.why

    assert (
        refusal("Invalid API key · Fix external API key")
        == "cc shows an error: Invalid API key · Fix external API key (roost attach cc to see it "
        "through)"
    )
    assert refusal(None, "waiting") == "cc is waiting for you (roost attach cc)"


# ---- doctor: versions ---------------------------------------------------------------------------
def test_installed_versions_are_read_from_the_clis(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "FAKE_AGENT_PYTHON": sys.executable}
    assert doctor.installed_version(str(TESTS / "bin" / "claude"), env) == "2.1.332"
    assert doctor.installed_version(str(TESTS / "bin" / "codex"), env) == "0.169.0"
    silent = tmp_path / "silent"
    silent.write_text("#!/bin/sh\nexit 3\n")
    silent.chmod(0o755)
    assert doctor.installed_version(str(silent), env) == "?exit 3"


def test_a_version_that_writes_without_end_is_kept_to_its_first_bytes(tmp_path: Path) -> None:
    """A program that is not roost's own is untrusted: 64 MiB of output (and a version at its
    very end) leave roost holding VERSION_BYTES of it, and no version read past them."""
    from roost.tmux import run

    loud = tmp_path / "loud"
    loud.write_text("#!/bin/sh\nhead -c 67108864 /dev/zero\necho ' 9.9.9'\n")
    loud.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin"}
    code, out, err = run.call([str(loud)], env, 60, most=doctor.VERSION_BYTES)
    assert code == 0 and len(out) == doctor.VERSION_BYTES and err == b""
    assert doctor.installed_version(str(loud), env) == "?exit 0"
