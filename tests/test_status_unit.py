"""Status classification: pure, table-driven."""

import functools
import operator
from typing import Any

import pytest

from roost.core import status
from roost.providers import hooks, traits

CLAUDE = status.patterns_for(traits.CLAUDE.patterns)
COMMAND = status.patterns_for(traits.COMMAND.patterns)
NOW = 1_000_000.0


def classify(**kw: object) -> tuple[str, str]:
    """(status, source): reasons have their own tests (test_error_status_unit.py)."""
    base = dict(
        alive=True,
        has_window=True,
        base_state="running",
        roost_stopped=False,
        hook=None,
        screen=None,
        activity=None,
        started_at=NOW - 100,
        patterns=CLAUDE,
        now=NOW,
    )
    base.update(kw)
    found, source, _reason = status.classify(**base)  # type: ignore[arg-type]
    return found, source


@pytest.mark.parametrize(
    ("kw", "expected"),
    [
        pytest.param(
            dict(alive=False, base_state="hibernated", has_window=False),
            ("hibernated", "store"),
            id="hibernated",
        ),
        pytest.param(dict(alive=False, base_state="failed"), ("failed", "store"), id="failed"),
        pytest.param(dict(alive=False, base_state="stopped"), ("exited", "process"), id="exited"),
        pytest.param(
            dict(alive=False, base_state="stopped", roost_stopped=True),
            ("stopped", "process"),
            id="killed-by-roost",
        ),
        pytest.param(
            dict(alive=False, base_state="stopped", has_window=False),
            ("lost", "process"),
            id="home-gone",
        ),
        pytest.param(dict(hook=("working", NOW - 5, None)), ("working", "hook"), id="hook-working"),
        pytest.param(
            dict(hook=("idle", NOW - 5, None), screen="❯ ", activity=NOW - 6),
            ("idle", "hook"),
            id="hook-idle-screen-quiet",
        ),
        pytest.param(
            dict(
                hook=("idle", NOW - 50, None),
                activity=NOW - 2,
                screen="Model picker\nEsc to cancel",
            ),
            ("waiting", "screen"),
            id="dialog-after-hook",
        ),
        pytest.param(
            dict(
                hook=("working", NOW - 50, None),
                activity=NOW - 1,
                screen="✻ Razzle-dazzling… (esc to interrupt)\n❯ ",
            ),
            ("working", "hook"),
            id="spinner-keeps-hook-status",
        ),
        pytest.param(
            dict(screen="Do you want to proceed?\n❯ 1. Yes\n  2. No\nEsc to cancel"),
            ("waiting", "screen"),
            id="screen-waiting",
        ),
        pytest.param(
            dict(screen="❯ first prompt\n✻ Working… (esc to interrupt)\n────\n❯ \n────"),
            ("working", "screen"),
            id="prompt-box-drawn-while-busy",
        ),
        pytest.param(
            dict(screen="● done\n────\n❯ \n────\n  ? for shortcuts"),
            ("idle", "screen"),
            id="screen-idle",
        ),
        pytest.param(dict(screen="", started_at=NOW - 2), ("starting", "process"), id="starting"),
        pytest.param(
            dict(screen="compiling...", activity=NOW - 1, patterns=COMMAND),
            ("working", "screen"),
            id="busy-output",
        ),
        pytest.param(
            dict(screen="$ ", activity=NOW - 30, patterns=COMMAND),
            ("idle", "screen"),
            id="quiet-output",
        ),
    ],
)
def test_classify(kw: dict[str, Any], expected: tuple[str, str]) -> None:
    assert classify(**kw) == expected


def test_only_the_last_lines_count() -> None:
    old_dialog = "Do you want to proceed?\n" + "output\n" * 30 + "❯ "
    assert status.from_screen(old_dialog, CLAUDE) == "idle"


def test_config_overrides_replace_a_kind_for_one_provider() -> None:
    overrides = {"codex": {"waiting": ["Approve this? [y/N]"]}, "claude": {"idle": ["nope"]}}
    patterns = status.patterns_for(traits.CODEX.patterns, overrides.get("codex"))
    assert patterns["waiting"] == ["Approve this? [y/N]"]
    assert patterns["working"] == list(traits.CODEX.patterns["working"])
    assert status.from_screen("Approve this? [y/N]", patterns) == "waiting"
    assert CLAUDE["idle"] == list(traits.CLAUDE.patterns["idle"])


@pytest.mark.parametrize(
    ("event", "payload", "expected"),
    [
        pytest.param("UserPromptSubmit", {}, "working", id="prompt"),
        pytest.param("Stop", {}, "idle", id="stop"),
        pytest.param(
            "Notification", {"notification_type": "permission_prompt"}, "waiting", id="permission"
        ),
        pytest.param("Notification", {"notification_type": "idle_prompt"}, "idle", id="idle"),
        pytest.param("RoostLaunch", {}, None, id="launch"),
    ],
)
def test_hooks_map_to_statuses(
    event: str, payload: dict[str, object], expected: str | None
) -> None:
    assert hooks.status_of(event, payload) == expected


@pytest.mark.parametrize(
    ("has_hooks", "hook_at", "activity", "needed"),
    [
        pytest.param(False, None, NOW, True, id="no-hooks-always"),
        pytest.param(True, None, NOW, True, id="no-event-yet"),
        pytest.param(True, NOW - 10, NOW - 20, False, id="quiet-since-the-hook"),
        pytest.param(True, NOW - 10, NOW - 2, True, id="output-after-the-hook"),
    ],
)
def test_screens_are_captured_only_when_needed(
    has_hooks: bool, hook_at: float | None, activity: float, needed: bool
) -> None:
    assert status.needs_screen(has_hooks, hook_at, activity) is needed


def test_conversation_text_above_the_bottom_is_not_a_status() -> None:
    codex = status.patterns_for(traits.CODEX.patterns)
    screen = (
        "› Approve the plan: Press enter to confirm or esc to cancel it, esc to interrupt\n"
        + "• ok\n" * 12
        + "› Ask Codex to do anything\n  ? for shortcuts"
    )
    assert status.from_screen(screen, codex) == "idle"
    reply = "● It says: press Esc to cancel, or esc to interrupt\n" + "  more\n" * 8 + "❯ \n"
    assert status.from_screen(reply, CLAUDE) == "idle"


def test_capture_batches_keep_each_tmux_command_small() -> None:
    from roost.tmux import format as panefmt

    ids = [f"%{i}" for i in range(1000)]
    batches = panefmt.capture_batches(ids, "\x1e")
    assert len(panefmt.capture_batches(ids[:250], "\x1e")) == 1  # 250 screens: still one call
    assert functools.reduce(operator.iadd, batches, []) == ids and len(batches) >= 3
    for batch in batches:
        assert sum(len(a.encode()) + 1 for a in panefmt.capture_args(batch, "\x1e")) < 16000
    captured = "hello\n\n\x1e%1\nworld\n\x1e%2\n"
    assert panefmt.split_captures(captured, "\x1e") == {"%1": "hello\n", "%2": "world"}


def test_a_cli_record_is_asked_only_of_a_still_screen_no_pattern_reads() -> None:
    aider = status.patterns_for(traits.AIDER.patterns)
    asked: list[bool] = []

    def in_flight() -> bool:
        asked.append(True)
        return True

    def seen(screen: str, activity: float) -> tuple[str, str]:
        return classify(screen=screen, activity=activity, patterns=aider, in_flight=in_flight)

    assert seen("> slow one", NOW - 30) == ("working", "screen")  # taken, nothing shown yet
    assert len(asked) == 1
    assert seen("answered\n>", NOW - 30) == ("idle", "screen")  # its prompt: never asked
    assert seen("> slow one\n  Waiting for gpt-4o", NOW - 30) == ("working", "screen")
    assert seen("> slow one", NOW - 1) == ("working", "screen")  # moving: no need to ask
    assert len(asked) == 1
