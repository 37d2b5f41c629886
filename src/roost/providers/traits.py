"""What roost must know about each agent CLI, as plain data: whether it reports its status by
hooks, how its session id becomes known, how long to wait between a paste and its Enter, what
its screen shows in each state, and what it prints when a conversation to resume is gone.

The Provider classes (providers/base.py and one module per CLI) carry these traits; `roost ls`'s
fast path reads them here, because importing the classes costs shutil, pathlib and dataclasses.
Import-light (core.ids only), nothing computed at import time.
"""

from __future__ import annotations

# How a provider's session id becomes known: MINTED (roost chooses it and passes it on the CLI's
# command line), DISCOVERED (the CLI chooses it; roost finds it in the CLI's files afterwards) or
# NO_SESSION_ID (the CLI has none; its conversation, if any, is found another way).
from roost.core.ids import DISCOVERED, MINTED, NO_SESSION_ID

# The screen patterns' version (shown by `roost doctor`): bump it with any change to them.
PATTERNS_VERSION = 2


class Traits:
    """One CLI's quirks. `patterns` maps each screen kind (waiting, error, working, idle; and
    "turn", the texts that show a turn went on after an error) to the texts that show it on the
    last lines of the screen (core/status.py says how they are matched)."""

    __slots__ = ("name", "hooks", "session_id", "enter_delay", "patterns", "conversation_gone")

    def __init__(self, name: str, *, hooks: bool, session_id: str, enter_delay: float,
                 patterns: dict[str, tuple[str, ...]],
                 conversation_gone: tuple[str, ...] = ()) -> None:
        self.name = name
        self.hooks = hooks  # reports its status (and session id changes) through roost's hooks
        self.session_id = session_id  # MINTED, DISCOVERED or NO_SESSION_ID
        self.enter_delay = enter_delay  # seconds: an Enter that comes with a paste is a newline
        self.patterns = patterns
        self.conversation_gone = conversation_gone  # its words when a resume finds nothing


# Screen cues: Claude Code's were read off v2.1.332 (its `❯` prompt box stays drawn while it
# works, which is why "working" is checked before "idle"); the others follow their CLIs' wording.
CLAUDE = Traits(
    "claude", hooks=True, session_id=MINTED, enter_delay=0.3,
    patterns={
        "waiting": ("Do you want to proceed?", "Yes, allow once", "Do you want to make this edit",
                    "Do you want to create", "Waiting for permission", "Esc to cancel",
                    "Yes, I trust this folder", "Enter to confirm"),
        "working": ("esc to interrupt", "ctrl+c to interrupt"),
        "idle": ("❯", "? for shortcuts"),
    },
    conversation_gone=("No conversation found with session ID",))
CODEX = Traits(
    "codex", hooks=False, session_id=DISCOVERED, enter_delay=0.3,
    patterns={
        "waiting": ("Allow command?", "[y/N]", "Do you want to proceed?", "Esc to cancel"),
        "working": ("esc to interrupt",),
        "idle": ("❯", "›"),
    },
    conversation_gone=("No saved session found",))
# Gemini CLI's were read off 0.61.0: its prompt box stays drawn while it works and while an
# error shows above it; a failed turn ends with "This request failed."; a daily quota opens a
# "Usage limit reached" dialog. It answers a turn under "✦ " and works on "(esc to cancel, Ns)".
GEMINI = Traits(
    "gemini", hooks=False, session_id=MINTED, enter_delay=0.3,
    patterns={
        "waiting": ("Allow execution of", "Apply this change?", "Do you want to proceed?",
                    "Allow once", "Waiting for user confirmation"),
        "error": ("[API Error:", "This request failed.", "Usage limit reached for"),
        "working": ("esc to cancel",),
        "idle": ("Type your message", "? for shortcuts"),
        "turn": ("✦ ", "esc to cancel", "Request cancelled"),
    },
    conversation_gone=("Error resuming session: Invalid session identifier",
                       "No previous session found"))
# Aider's were read off 0.86.2: a turn shows "Waiting for <model name>" (a spinner) until the
# answer streams in and ends with "Tokens: ..."; its idle prompt is ">" alone on the last line
# (each prompt it took stays on the screen as "> <text>"); a question waits on the last line,
# ending in its default ("[Yes]:"); a failed call prints litellm's error and aider's advice, and
# retries those that may pass (rate limits, server errors) for about a minute.
AIDER = Traits(
    "aider", hooks=False, session_id=NO_SESSION_ID, enter_delay=0.3,
    patterns={
        "waiting": ("[Yes]:$", "[No]:$"),
        "error": ("litellm.AuthenticationError", "litellm.RateLimitError",
                  "litellm.InternalServerError", "litellm.APIError", "litellm.APIConnectionError",
                  "litellm.BadRequestError", "The API provider is not able to authenticate you",
                  "The API provider has rate limited you",
                  "The API provider's servers are down or overloaded"),
        "working": ("Waiting for ",),
        "idle": ("^>$",),
        "turn": ("^> ", "Tokens: "),
    })
COMMAND = Traits("command", hooks=False, session_id=NO_SESSION_ID, enter_delay=0.1,
                 patterns={"waiting": (), "working": (), "idle": ()})

BY_NAME = {t.name: t for t in (CLAUDE, CODEX, GEMINI, AIDER, COMMAND)}


def of(provider: str) -> Traits:
    """A provider's traits; a name this roost does not know (a record written by a newer one)
    gets a plain command's: no hooks, no session id, no patterns."""
    return BY_NAME.get(provider, COMMAND)

# How each provider's session ids become known, by name (the import's checks need it).
SESSION_IDS = {name: t.session_id for name, t in BY_NAME.items()}
