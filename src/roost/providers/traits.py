"""What roost must know about each agent CLI, as plain data: whether it reports its status by
hooks, how its session id becomes known, how long to wait between a paste and its Enter, what
its screen shows in each state, what it prints when a conversation to resume is gone, and the
version of the CLI all this was verified against (`roost doctor` compares the installed one).

The Provider classes (providers/base.py and one module per CLI) carry these traits; `roost ls`'s
fast path reads them here, because importing the classes costs shutil, pathlib and dataclasses.
Plain data (dataclasses and core.ids only), nothing computed at import time.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass

# How a provider's session id becomes known: MINTED (roost chooses it and passes it on the CLI's
# command line), DISCOVERED (the CLI chooses it; roost finds it in the CLI's files afterwards) or
# NO_SESSION_ID (the CLI has none; its conversation, if any, is found another way).
from roost.core.ids import DISCOVERED as DISCOVERED
from roost.core.ids import MINTED as MINTED
from roost.core.ids import NO_SESSION_ID as NO_SESSION_ID
from roost.core.status import Status

# The screen patterns' version (shown by `roost doctor`): bump it with any change to them.
PATTERNS_VERSION = 6


@dataclass(frozen=True, slots=True, eq=False)
class Traits:
    """One CLI's quirks. `patterns` maps each screen kind to the texts that show it on the last
    lines of the screen (core/status.py checks them in this order; each kind may be left out):

    - "waiting": a dialog or question the user must answer;
    - "error": the CLI is broken or its last turn failed (it lost its server, an authentication
      failure, an API error, a usage limit). The line that matches is the status's reason, so
      prefer the CLI's own error words; and match only what shows while the failure is current
      (a line that stays in the scrollback after the CLI recovered would pin the agent in
      error, unless "turn" patterns mark the turns after it): it is checked before the busy
      and idle cues;
    - "working": the busy cue of a turn (a spinner footer);
    - "idle": the prompt, ready for input;
    - "turn" (not a status): texts that show a turn went on (a finished turn's footer, a busy
      line, an answer's mark). An error above the last such line is over: the way to keep a
      CLI's scrollback of old errors from reading as a current one.

    A pattern is found anywhere in a line unless anchored: "^text" starts a line, "text$" ends
    the screen's last non-empty line.

    `verified` is the version of the CLI these traits were checked against (the first
    dotted number `<cli> --version` prints); "" for a program roost knows nothing about."""

    name: str
    _: KW_ONLY
    hooks: bool  # reports its status (and session id changes) through roost's hooks
    session_id: str  # MINTED, DISCOVERED or NO_SESSION_ID
    enter_delay: float  # seconds: an Enter that comes with a paste is a newline
    patterns: dict[str, tuple[str, ...]]
    conversation_gone: tuple[str, ...] = ()  # its words when a resume finds nothing
    verified: str = ""
    # Seconds it took, at the slowest, to show its ready screen in a pane on a loaded machine
    # (bench/bench_starts.py; docs/PROVIDERS.md): a start is held once that screen shows, or
    # once it lived well past this (core.status.start_window).
    start_time: float = 1.0
    # The heading under which it lists the prompts it took and holds until it is ready
    # (core.delivery.held_in_queue).
    queued: tuple[str, ...] = ()


# Screen cues: Claude Code's were read off v2.1.332 (its `❯` prompt box stays drawn while it
# works, which is why "working" is checked before "idle"); the others follow their CLIs' wording.
# Claude Code reports a failed turn by its StopFailure hook (its words: "API Error: 500 ...",
# "Invalid API key · Fix external API key", "Please run /login · API Error: 403 ...", "Credit
# balance is too low"); on its screen the failure shows in the empty prompt box, which reads
# "Resend your message to try again" (an API error, a rate limit, no connection) or "Once fixed,
# resend your message" (authentication, billing) until the next message: those are its error
# patterns. While it retries (up to 10 times) it shows "<status> <message> · retrying in Ns ·
# attempt n/10" above its busy footer: working, which it is.
CLAUDE = Traits(
    "claude",
    hooks=True,
    session_id=MINTED,
    enter_delay=0.3,
    patterns={
        Status.WAITING: (
            "Do you want to proceed?",
            "Yes, allow once",
            "Do you want to make this edit",
            "Do you want to create",
            "Waiting for permission",
            "Esc to cancel",
            "Yes, I trust this folder",
            "Enter to confirm",
            # its start-up questions in a folder or a home it has not seen (2.1.332)
            "Is this a project you created or one you trust?",
            "Do you want to use this API key?",
            "New MCP server found in this project",  # a project's .mcp.json
        ),
        Status.ERROR: ("Resend your message to try again", "Once fixed, resend your message"),
        Status.WORKING: ("esc to interrupt", "ctrl+c to interrupt"),
        Status.IDLE: ("❯", "? for shortcuts"),
    },
    conversation_gone=("No conversation found with session ID",),
    verified="2.1.332",
    start_time=9.0,
)
# Codex CLI's were read off 0.169.0 in tmux (tests/test_real_codex.py checks them on the real
# TUI). Its composer line "› Ask Codex to do anything" and the footer "? for shortcuts" stay drawn
# while it works, with "• Working (3s • esc to interrupt)" above them. A dialog ends in "Press
# enter to confirm or esc to cancel". A failed turn leaves one "■ <its words>" line right above
# the composer, which scrolls up but stays on the screen after the next turn: so an error counts
# only below the last line that shows a turn went on ("turn": the busy footer, and "Worked for
# 2s" under each finished turn). Its words: "■ unexpected status 401 Unauthorized: ..." (any
# HTTP error; a 400's raw JSON body, '■ {"error": ...}'), "■ exceeded retry limit, last status:
# 429 ...", "■ We're currently experiencing high demand ..." (5xx), "■ You've hit your usage
# limit. ...", "Please log out and sign in again"; "◦ Reconnecting to server… (23s)" when the
# shared app-server it used went away (never resolves); "Reconnecting... waiting for network
# (5s • esc to interrupt)" over "└ Connection failed: error sending request" when the API is
# unreachable. "■ Conversation interrupted" (Esc) is not an error.
CODEX = Traits(
    "codex",
    hooks=False,
    session_id=DISCOVERED,
    enter_delay=0.3,
    patterns={
        "waiting": (
            "Would you like to run the following command?",
            "Would you like to make the following edits?",
            "Would you like to grant these permissions?",
            "Press enter to confirm or esc to cancel",
            # its folder trust in a git checkout it has not seen (every new worktree)
            "Trust this folder?",
            "enter continue · esc back",
        ),
        "error": (
            "Reconnecting to server",
            "Connection failed",
            "unexpected status ",
            '{"error"',
            "exceeded retry limit",
            "experiencing high demand",
            "hit your usage limit",
            "reached your usage limit",
            "Usage limit reached",
            "out of credits",
            "sign in again",
            "stream disconnected before completion",
        ),
        "working": ("esc to interrupt", "Waiting for startup"),
        "turn": ("esc to interrupt", "Worked for "),
        "idle": ("? for shortcuts", "› "),
    },
    conversation_gone=("No saved session found",),
    verified="0.169.0",
    start_time=2.0,
)
# Gemini CLI's were read off 0.61.0: its prompt box stays drawn while it works and while an
# error shows above it; a failed turn ends with "This request failed."; a daily quota opens a
# "Usage limit reached" dialog. It answers a turn under "✦ " and works on "(esc to cancel, Ns)".
# A resumed session draws the input box, then loads under "Resuming session..." with no input
# line (an Enter then is lost), then draws the box again. A prompt taken while its MCP servers
# start is held under "Queued (press ↑ to edit):" until they are up.
# It restarts on a trust answer, the answered dialog drawn above "Gemini CLI is restarting to
# apply the trust changes..." (for seconds on a loaded machine).
GEMINI_LOADING = ("Resuming session...", "is restarting to apply")  # work before input: no turn
GEMINI = Traits(
    "gemini",
    hooks=False,
    session_id=MINTED,
    enter_delay=0.3,
    patterns={
        "waiting": (
            "Allow execution of",
            "Apply this change?",
            "Do you want to proceed?",
            "Allow once",
            "Waiting for user confirmation",
            # its folder trust (folderTrust on, the default): the question sits higher than
            # the window looked at, its first choice does not
            "Do you trust the files in this folder?",
            "Trust folder (",
        ),
        "error": ("[API Error:", "This request failed.", "Usage limit reached for"),
        "working": ("esc to cancel", *GEMINI_LOADING),
        "idle": ("Type your message", "? for shortcuts"),
        "turn": ("✦ ", "esc to cancel", "Request cancelled"),
        "loading": GEMINI_LOADING,
    },
    conversation_gone=(
        "Error resuming session: Invalid session identifier",
        "No previous session found",
    ),
    verified="0.61.0",
    start_time=32.0,
    queued=("Queued (press ↑ to edit):",),
)
# Aider's were read off 0.86.2: a turn shows "Waiting for <model name>" (a spinner) until the
# answer streams in and ends with "Tokens: ..."; its idle prompt is ">" alone on the last line
# (each prompt it took stays on the screen as "> <text>"); a question waits on the last line,
# ending in its default ("[Yes]:"); a failed call prints litellm's error and aider's advice, and
# retries those that may pass (rate limits, server errors) for about a minute. Between a prompt
# taken and its spinner (its model client loading: seconds on a loaded machine) the screen
# stands still on "> <text>", which no capture tells from a draft: the chat history, which has
# the prompt by then, says the turn is under way (providers/records.py).
AIDER = Traits(
    "aider",
    hooks=False,
    session_id=NO_SESSION_ID,
    enter_delay=0.3,
    patterns={
        "waiting": ("[Yes]:$", "[No]:$"),
        "error": (
            "litellm.AuthenticationError",
            "litellm.RateLimitError",
            "litellm.InternalServerError",
            "litellm.APIError",
            "litellm.APIConnectionError",
            "litellm.BadRequestError",
            "The API provider is not able to authenticate you",
            "The API provider has rate limited you",
            "The API provider's servers are down or overloaded",
        ),
        "working": ("Waiting for ",),
        "idle": ("^>$",),
        "turn": ("^> ", "Tokens: "),
    },
    verified="0.86.2",
    start_time=34.0,
)
# Any program: no patterns, so its status is its screen's movement (working while it moves,
# idle when still, a silent program too once the start grace is over).
COMMAND = Traits(
    "command",
    hooks=False,
    session_id=NO_SESSION_ID,
    enter_delay=0.1,
    patterns={Status.WAITING: (), Status.WORKING: (), Status.IDLE: ()},
)

BY_NAME = {t.name: t for t in (CLAUDE, CODEX, GEMINI, AIDER, COMMAND)}


@dataclass(frozen=True, slots=True)
class InputLine:
    """Where a CLI's input line is on its screen, so a half-typed draft can be seen there: the
    line that starts with one of `markers` (box edges and spaces around it aside), the last such
    line among the screen's last `window` non-empty lines; what follows the marker is the draft,
    unless it is one of `placeholders` (the hints an empty input shows, which a plain capture
    cannot tell from typed text: it carries no colours)."""

    markers: tuple[str, ...]
    window: int
    placeholders: tuple[str, ...] = ()


# Claude Code (2.1.332): the `❯` line between two rules, footers below it (older versions drew
# a `│ > ` box); its empty box shows a failed turn's hint or a 'Try "..."' suggestion. Codex
# (0.169.0): the composer's `›` line above its footer, its hints read off the binary. Gemini: the
# `>` line in its input box, "Type your message or @path/to/file" when empty. Aider: its `>`
# prompt is always the last line (the prompts it took stay above as "> text", so look no
# higher). A `command` agent has none: roost cannot know where an arbitrary program's input is.
INPUT_LINES = {
    "claude": InputLine(
        ("❯", "> "),
        12,
        ("Resend your message to try again", "Once fixed, resend your message", 'Try "'),
    ),
    "codex": InputLine(("›",), 12, ("Ask Codex to do anything", "Ask a follow-up question")),
    "gemini": InputLine(
        (">", "❯"),
        12,
        # its vim mode's empty input says which mode it is in
        ("Type your message", "Press 'Esc' for NORMAL mode.", "Press 'i' for INSERT mode."),
    ),
    "aider": InputLine((">",), 1),
}


# CLIs seen to drop a paste that lands before their input is ready, with no trace: Gemini CLI
# 0.61 resumed with `-r` shows its prompt, then loads the session and empties the input (the
# real CLI's test caught "who am I" pasted, gone, its Enter pressed on nothing). A send to one
# just resumed checks the paste is on the input line before its Enter, and pastes again into
# the empty line (ops/send._paste_held).
PASTE_MAY_DROP = frozenset({"gemini"})


def of(provider: str) -> Traits:
    """A provider's traits; a name this roost does not know (a record written by a newer one)
    gets a plain command's: no hooks, no session id, no patterns."""
    return BY_NAME.get(provider, COMMAND)


# How each provider's session ids become known, by name (the import's checks need it).
SESSION_IDS = {name: t.session_id for name, t in BY_NAME.items()}
