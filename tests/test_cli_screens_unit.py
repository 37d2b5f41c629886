"""The status patterns of Gemini CLI 0.61.0 and Aider 0.86.2 on screens captured from the real
CLIs in tmux (trailing blanks trimmed, long rules shortened): pure, no tmux."""

from __future__ import annotations

import pytest

from roost.core import status
from roost.providers import traits

GEMINI = status.patterns_for(traits.GEMINI.patterns)
AIDER = status.patterns_for(traits.AIDER.patterns)

G_FOOTER = """\
────────────────────────────────────────────────
 Shift+Tab to accept edits
 >   Type your message or @path/to/file
 workspace (/directory)                    sandbox                       /model
 /tmp/gx/work                              no sandbox                      Auto
"""
G_IDLE = (
    """\
 ▝▜▄     Gemini CLI v0.61.0
Tips for getting started:
4. Be specific for the best results
 > hello gemini
✦ stub reply: hello gemini
                                                                  ? for shortcuts
"""
    + G_FOOTER
)
G_WORKING = (
    """\
 > hello gemini
 ⠋ Thinking... (esc to cancel, 0s)                                ? for shortcuts
"""
    + G_FOOTER
)
G_WAITING = """\
 > run something
╭──────────────────────────────────────────────────╮
│ ? Shell  touch made-by-tool                      │
│ ╭──────────────────────────────────────────────╮ │
│ │ touch made-by-tool                           │ │
│ ╰──────────────────────────────────────────────╯ │
│ Allow execution of [Shell]?                      │
│                                                  │
│ ● 1. Allow once                                  │
│   2. Allow for this session                      │
│   3. No, suggest changes (esc)                   │
╰──────────────────────────────────────────────────╯
"""
G_ERROR = (
    """\
✦ stub reply: run something
 > auth please
✕ [API Error: {"error":{"code":401,"message":"API key not valid. Please pass a valid API
  key.","status":"UNAUTHENTICATED"}}]
ℹ This request failed. Press F12 for diagnostics, or run /settings and change "Error Verbosity"
  to full for full details.
                                                                  ? for shortcuts
"""
    + G_FOOTER
)
G_USAGE_LIMIT = """\
 > quota please
╭──────────────────────────────────────────────────╮
│                                                  │
│ Usage limit reached for all Pro models.          │
│ /stats model for usage details                   │
│ /model to switch models.                         │
│                                                  │
│                                                  │
│ ● 1. Keep trying                                 │
│   2. Stop                                        │
│                                                  │
│                                                  │
╰──────────────────────────────────────────────────╯
"""
G_TYPED = """\
✦ stub reply: hello gemini
────────────────────────────────────────────────
 Shift+Tab to accept edits
 > minted hello
 workspace (/directory)                    sandbox                       /model
 /tmp/gx/work                              no sandbox                      Auto
"""

A_HEAD = """\
Aider v0.86.2
Main model: openai/gpt-4o with diff edit format
Repo-map: disabled
──────────────────────────────────────────────────
"""
A_IDLE = A_HEAD + ">  \n"
A_TOOK = A_HEAD + "> slow one" + " " * 60 + "\n"  # taken, before the spinner shows
A_WORKING = A_HEAD + "> slow one\n  █░       Waiting for openai/gpt-4o\n"
A_AUTH = (
    A_HEAD
    + """\
> auth please
litellm.AuthenticationError: AuthenticationError: OpenAIException - Incorrect API key provided:
sk-roost*****test. You can find your API key at https://platform.openai.com/account/api-keys.
The API provider is not able to authenticate you. Check your API key.
https://platform.openai.com/account/api-keys
"""
)
A_QUESTION = A_AUTH + "     ░█    Waiting for openai/gpt-4oD)on't ask again [Yes]: \n"
A_ANSWERED = (
    A_AUTH
    + """\
Open URL for more info? (Y)es/(N)o/(D)on't ask again [Yes]: n
──────────────────────────────────────────────────
"""
    + ">  \n"
)
A_ACCEPTED = (
    A_HEAD
    + """\
> make a file
Run shell command? (Y)es/(N)o [Yes]:
touch made
stub reply: done
Tokens: 2.4k sent, 5 received. Cost: $0.0061 message, $0.01 session.
──────────────────────────────────────────────────
>
"""
)
A_RETRYING = (
    A_HEAD
    + """\
> quota please
litellm.RateLimitError: RateLimitError: OpenAIException - You exceeded your current quota, please
check your plan and billing details.
The API provider has rate limited you. Try again later or check your quotas.
Retrying in 0.5 seconds...
     █░    Waiting for openai/gpt-4o
"""
)
A_NEXT_TURN = A_ANSWERED + "> better now\n  █░       Waiting for openai/gpt-4o\n"
A_RECOVERED = (
    A_ANSWERED
    + """\
> better now
stub reply: better now
Tokens: 2.4k sent, 5 received. Cost: $0.0061 message, $0.01 session.
──────────────────────────────────────────────────
>
"""
)


@pytest.mark.parametrize(
    ("screen", "patterns", "kind"),
    [
        pytest.param(G_IDLE, GEMINI, "idle", id="gemini-idle"),
        pytest.param(G_WORKING, GEMINI, "working", id="gemini-working"),
        pytest.param(G_WAITING, GEMINI, "waiting", id="gemini-tool-approval"),
        pytest.param(G_ERROR, GEMINI, "error", id="gemini-401"),
        pytest.param(G_USAGE_LIMIT, GEMINI, "error", id="gemini-usage-limit"),
        pytest.param(
            G_ERROR.replace(G_FOOTER, "")
            + " > next\n ⠋ Thinking... (esc to cancel, 0s)\n"
            + G_FOOTER,
            GEMINI,
            "working",
            id="gemini-next-turn-after-error",
        ),
        pytest.param(
            G_ERROR.replace(G_FOOTER, "") + " > next\n✦ stub reply: next\n" + G_FOOTER,
            GEMINI,
            "idle",
            id="gemini-error-over",
        ),
        pytest.param(G_TYPED, GEMINI, None, id="gemini-text-in-its-input"),
        pytest.param(A_IDLE, AIDER, "idle", id="aider-idle"),
        pytest.param(A_TOOK, AIDER, None, id="aider-echo-is-not-idle"),
        pytest.param(A_WORKING, AIDER, "working", id="aider-working"),
        pytest.param(A_QUESTION, AIDER, "waiting", id="aider-question"),
        pytest.param(A_ANSWERED, AIDER, "error", id="aider-401-answered"),
        pytest.param(A_ACCEPTED, AIDER, "idle", id="aider-question-accepted-long-ago"),
        pytest.param(A_RETRYING, AIDER, "error", id="aider-retrying-a-rate-limit"),
        pytest.param(A_NEXT_TURN, AIDER, "working", id="aider-next-turn-after-error"),
        pytest.param(A_RECOVERED, AIDER, "idle", id="aider-error-over"),
    ],
)
def test_real_screens(screen: str, patterns: dict[str, list[str]], kind: str | None) -> None:
    assert status.from_screen(screen, patterns) == kind


@pytest.mark.parametrize(
    ("screen", "patterns", "words"),
    [
        (G_ERROR, GEMINI, '[API Error: {"error":{"code":401,"message":"API key not valid.'),
        (G_USAGE_LIMIT, GEMINI, "Usage limit reached for all Pro models."),
        (A_ANSWERED, AIDER, "litellm.AuthenticationError: AuthenticationError"),
        (A_RETRYING, AIDER, "litellm.RateLimitError: RateLimitError"),
    ],
)
def test_an_error_comes_with_the_clis_first_words_on_one_line(
    screen: str, patterns: dict[str, list[str]], words: str
) -> None:
    found = status.reading(screen, patterns)
    assert found is not None and found[0] == "error"
    assert found[1] is not None and found[1].startswith(words) and "\n" not in found[1]


@pytest.mark.parametrize(
    ("line", "pattern", "last", "found"),
    [
        pytest.param(">  ", "^>$", True, True, id="end-on-the-last-line"),
        # "$": the screen's last line only
        pytest.param(">", "^>$", False, False, id="end-above-the-last-line"),
        pytest.param("> hi", "^>$", True, False, id="end-after-text"),
        pytest.param("> hi", "^> ", False, True, id="start"),
        # trailing blanks are not text
        pytest.param(">  ", "^> ", False, False, id="start-then-blanks"),
        pytest.param("x [Yes]:   ", "[Yes]:$", True, True, id="end-then-blanks"),
        pytest.param("x [Yes]: n", "[Yes]:$", True, False, id="end-then-a-word"),
        # a lone "$" is a plain text, as is a lone "^"
        pytest.param("costs $5", "$", False, True, id="lone-dollar"),
        pytest.param("^_^", "^", False, True, id="lone-caret"),
    ],
)
def test_anchored_patterns(line: str, pattern: str, last: bool, found: bool) -> None:
    assert status.matches(line, pattern, last=last) is found


def test_a_users_patterns_replace_a_kind_and_may_name_the_turn_marks() -> None:
    merged = status.patterns_for(traits.AIDER.patterns, {"error": ["boom"], "turn": ["--"]})
    assert merged["error"] == ["boom"] and merged["turn"] == ["--"]
    assert merged["idle"] == list(traits.AIDER.patterns["idle"])
    assert status.from_screen("boom\n--\n>", merged) == "idle"
    assert status.from_screen("--\nboom\n>", merged) == "error"


BEFORE_PROMPT = "Analytics have been permanently disabled.\n──────────\n"


@pytest.mark.parametrize(
    ("screen", "patterns", "now", "expected"),
    [
        pytest.param(BEFORE_PROMPT, AIDER, 105.0, ("starting", "process", None), id="no-prompt"),
        pytest.param(A_IDLE, AIDER, 105.0, ("idle", "screen", None), id="its-prompt"),
        # past the grace after its start, the screen is read as it is
        pytest.param(BEFORE_PROMPT, AIDER, 160.0, ("idle", "screen", None), id="past-the-grace"),
        # a command with no prompt of its own: still is idle
        pytest.param("$ ", status.patterns_for({}), 105.0, ("idle", "screen", None), id="command"),
    ],
)
def test_a_cli_is_starting_until_it_draws_its_prompt(
    screen: str,
    patterns: dict[str, list[str]],
    now: float,
    expected: tuple[str, str, str | None],
) -> None:
    """Started at 100 and running, no hook yet."""
    assert (
        status.classify(
            alive=True,
            has_window=True,
            base_state="running",
            roost_stopped=False,
            hook=None,
            activity=100.0,
            started_at=100.0,
            screen=screen,
            patterns=patterns,
            now=now,
        )
        == expected
    )
