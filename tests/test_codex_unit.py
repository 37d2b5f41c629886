"""Codex CLI 0.169.0's screens, as the real TUI drew them in tmux (120x40, blank lines dropped),
read by roost's status classification: idle, working, waiting, and `error` with the CLI's own
words as the reason; an error that the next turn left behind in the scrollback is over.
tests/test_real_codex.py checks the same cues on the real CLI."""

from __future__ import annotations

import pytest

from roost.core import status
from roost.providers import traits

CODEX = status.patterns_for(traits.CODEX.patterns)
NOW = 1_000_000.0
FOOTER = [
    "› Ask Codex to do anything",
    "  stub-model default · /tmp/work · Stub title",
    "  ← for agents · ? for shortcuts                            ⚠ 2 warnings · f2 to view",
]
DONE = ["› first prompt", "• stub reply: first prompt", "  Worked for 1s • 19:45"]


def screen(*lines: str) -> str:
    return "\n".join(["  >_ OpenAI Codex (v0.169.0)", "     /tmp/work", *lines])


def classify(text: str) -> tuple[str, str]:
    """(status, source); the reason is checked on its own below."""
    found = status.classify(
        alive=True,
        has_window=True,
        base_state="running",
        roost_stopped=False,
        hook=None,
        screen=text,
        activity=NOW - 30,
        started_at=NOW - 100,
        patterns=CODEX,
        now=NOW,
    )
    return found[0], found[1]


SCREENS = [
    pytest.param(
        screen("› Ask Codex to do anything", "  ? for shortcuts"), "idle", None, id="idle-at-start"
    ),
    pytest.param(screen(*DONE, *FOOTER), "idle", None, id="idle-after-a-turn"),
    pytest.param(
        screen("› first prompt", "  Waiting for startup  · esc cancel"),
        "working",
        None,
        id="queued-while-starting",
    ),
    pytest.param(
        screen("› first prompt", "• Working (0s • esc to interrupt)", *FOOTER),
        "working",
        None,
        id="working",
    ),
    pytest.param(
        screen(
            "› make a file",
            "• Running touch /tmp/x",
            "  Would you like to run the following command?",
            "  Environment: local",
            "  Reason: roost test wants a file",
            "  $ touch /tmp/x",
            "› 1. Yes, proceed (y)",
            "  2. Yes, and don't ask again for commands that start with `touch` (p)",
            "  3. No, and tell Codex what to do differently (esc)",
            "  Press enter to confirm or esc to cancel",
        ),
        "waiting",
        "Would you like to run the following command?",  # the question is the reason
        id="approval",
    ),
    pytest.param(
        screen(
            *DONE,
            "› second prompt",
            "■ unexpected status 401 Unauthorized: Incorrect API key provided, url: "
            "http://127.0.0.1:33247/v1/responses",
            *FOOTER,
        ),
        "error",
        "unexpected status 401 Unauthorized: Incorrect API key provided, url: "
        "http://127.0.0.1:33247/v1/responses",
        id="auth-failure",
    ),
    pytest.param(
        screen(
            "› fourth prompt", "■ exceeded retry limit, last status: 429 Too Many Requests", *FOOTER
        ),
        "error",
        "exceeded retry limit, last status: 429 Too Many Requests",
        id="rate-limit",
    ),
    pytest.param(
        screen(
            "› first prompt",
            "■ You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explor"
            "e/pro), visit https://chatgpt.com/settings/",
            "usage to purchase more credits or try again at 8:49 PM.",
            *FOOTER,
        ),
        "error",
        "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explor"
        "e/pro), visit https://chatgpt.com/settings/",
        id="usage-limit",
    ),
    pytest.param(
        screen(
            "› second prompt",
            "■ We’re currently experiencing high demand, which may cause temporary errors.",
            *FOOTER,
        ),
        "error",
        "We’re currently experiencing high demand, which may cause temporary errors.",
        id="server-error",
    ),
    pytest.param(
        screen(
            "› fourth prompt",
            '■ {"error": {"message": "Invalid request: bad '
            'things", "type": "invalid_request_error", "code": null}}',
            *FOOTER,
        ),
        "error",
        '{"error": {"message": "Invalid request: bad things", "type": '
        '"invalid_request_error", "code": null}}',
        id="api-error-body",
    ),
    pytest.param(
        screen(
            "◦ Reconnecting to server… (45s)",
            "› are you there",
            "  stub-model default · /tmp/work",
            "  ^c quit",
        ),
        "error",
        "Reconnecting to server… (45s)",
        id="lost-its-app-server",
    ),
    pytest.param(
        screen(
            *DONE,
            "› seventh prompt",
            "• Reconnecting... waiting for network (15s • esc to interrupt)",
            "  └ Connection failed: error sending request",
            *FOOTER,
        ),
        "error",
        "Connection failed: error sending request",
        id="api-unreachable",
    ),
    pytest.param(
        screen(
            "› third prompt",
            "■ Conversation interrupted - use /feedback if something went wrong",
            *FOOTER,
        ),
        "idle",
        None,
        id="interrupted-is-no-error",
    ),
    # the next turn leaves the error in the scrollback: over once the turn went on
    pytest.param(
        screen(
            "› first prompt",
            "■ exceeded retry limit, last status: 429 Too Many Requests",
            "› second prompt",
            "• stub reply: second prompt",
            "  Worked for <1s • 19:49",
            *FOOTER,
        ),
        "idle",
        None,
        id="error-then-a-good-turn",
    ),
    pytest.param(
        screen(
            "■ exceeded retry limit, last status: 429 Too Many Requests",
            "› second prompt",
            "◦ Working (1s • esc to interrupt)",
            *FOOTER,
        ),
        "working",
        None,
        id="error-then-working",
    ),
]


@pytest.mark.parametrize(("text", "kind", "reason"), SCREENS)
def test_real_codex_screens_read_as_their_status(text: str, kind: str, reason: str | None) -> None:
    assert classify(text) == (kind, "screen")
    assert status.reading(text, CODEX) == (kind, reason)


def test_the_error_outranks_a_hook_that_said_idle_once_the_screen_moved() -> None:
    text = screen("■ unexpected status 403 Forbidden: nope", *FOOTER)
    found = status.classify(
        alive=True,
        has_window=True,
        base_state="running",
        roost_stopped=False,
        hook=("idle", NOW - 50, None),
        screen=text,
        activity=NOW - 2,
        started_at=NOW - 100,
        patterns=CODEX,
        now=NOW,
    )
    assert found == ("error", "screen", "unexpected status 403 Forbidden: nope")


def test_a_reason_is_one_line_and_bounded() -> None:
    assert status.one_line("  ■ bad   thing \t happened  ") == "bad thing happened"
    long = status.one_line("■ " + "x" * 500)
    assert len(long) == status.REASON_LIMIT and long.endswith("…")
