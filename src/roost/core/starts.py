"""Whether a start held: an agent CLI that dies within a few seconds of its start (a refused
flag, an expired login, a broken install) is a failed start, with its last words as the reason.
And when a restore should stop starting a provider's agents: after repeated identical
authentication failures (one shared expired login would otherwise fail a whole fleet one by one).
Pure: ops/holding.py watches the panes."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from roost.core.status import HOLD_WINDOW as HOLD_WINDOW  # send.py's import
from roost.core.status import Status

STILL = 0.3  # seconds a pattern-less program's screen must stay still to count as up
LAST_LINES = 3  # lines of a dead start's screen kept as its reason
REASON_LIMIT = 300  # characters of that reason
AUTH_STOP = 2  # identical authentication failures of one provider that stop its other starts
# Words of an authentication failure in the CLIs' errors (an HTTP 401 or 403, an expired or
# invalid key or login).
AUTH_WORDS = (
    "authentication_error",
    "authentication_failed",
    "401",
    "403 ",
    "Unauthorized",
    "invalid x-api-key",
    "Invalid API key",
    "/login",
    "OAuth token has expired",
    "sign in again",
    "not logged in",
    "Not logged in",
)
# What varies between two reports of the same failure: request ids, long numbers, hex runs.
VOLATILE = re.compile(r"req_\w+|\b[0-9a-f]{12,}\b|\b\d{6,}\b")
# tmux's own line in a dead pane (remain-on-exit), not the program's words.
PANE_DEAD = "Pane is dead"
# A CLI's own complaint, which a usage dump after it may push far above its last lines (Gemini
# CLI 0.61: "Unknown arguments: ..." then 45 lines of usage; aider: usage, then "aider: error").
COMPLAINT = ("Unknown argument", "nrecognized argument", "error:", "Error:")

# What an argument parser (clap, argparse, click, commander) prints after its error line.
USAGE = re.compile(r"(?i)^\s*usage:")
HELP_HINT = re.compile(r"(?i)^\s*(for more|try|run)\b.*--help")

HELD, DIED, PENDING = "held", "died", "pending"


def verdict(
    alive: bool,
    showing: str | None,
    still_for: float,
    has_patterns: bool,
    elapsed: float,
    window: float = HOLD_WINDOW,
    typed: bool = False,
) -> str:
    """held / died / pending for one start, `elapsed` seconds after it: dead is died; its
    provider's screen patterns reading a live status (idle, working, waiting: `showing`), or a
    draft on its input line (`typed`), or, for a program with no patterns, a non-empty screen
    still for STILL seconds, is held; so is living through the whole window, which must be well
    past the CLI's start (status.start_window): a bad flag kills some CLIs only near its end.

    >>> verdict(False, None, 0.0, True, 0.5)
    'died'
    >>> verdict(True, "idle", 0.0, True, 0.2), verdict(True, None, 0.0, True, 0.2)
    ('held', 'pending')
    >>> verdict(True, "error", 0.0, True, 3.5), verdict(True, None, 0.5, False, 0.6)
    ('held', 'held')
    >>> verdict(True, None, 0.0, True, 20.0, 90.0), verdict(True, None, 0.0, True, 1.0, 90.0, True)
    ('pending', 'held')
    >>> verdict(True, "error", 0.0, True, 1.0, 90.0), verdict(True, "error", 0.0, True, 3.0, 90.0)
    ('pending', 'held')
    """
    if not alive:
        return DIED
    if elapsed >= window:
        return HELD
    if has_patterns:
        if typed or showing in (Status.IDLE, Status.WORKING, Status.WAITING):
            return HELD
        # up and showing an error (an invalid key): held, its status says so; a short wait
        # first, as a CLI's last words before it exits read the same
        return HELD if showing == Status.ERROR and elapsed >= HOLD_WINDOW else PENDING
    return HELD if still_for >= STILL else PENDING


def last_words(screen: str, lines: int = LAST_LINES, limit: int = REASON_LIMIT) -> str:
    """The last non-empty lines a dead program left on its screen, on one line, bounded; without
    the usage and `--help` hints an argument parser prints after its error line (a refused flag),
    which would push that line out.

    >>> last_words("fake\\n\\nError: boom\\n\\nPane is dead (status 1, Mon)\\n")
    'fake / Error: boom'

    Its complaint first when a usage dump pushed it above them:

    >>> last_words("Unknown arguments: x\\nUsage: cli\\n-a\\n-b\\n-c", lines=2)
    'Unknown arguments: x / -b / -c'

    An argument parser's usage block and its pointer to --help are no words of the CLI:

    >>> last_words("error: bad\\n\\nUsage: x [OPTS]\\n       x run\\n\\nFor more, try 'x --help'.")
    'error: bad'
    """
    said = [
        " ".join(line.split())
        for line in _without_parser_hints(screen.splitlines())
        if line.strip() and not line.strip().startswith(PANE_DEAD)
    ]
    kept = said[-lines:]
    complaint = next((line for line in said[:-lines] if any(w in line for w in COMPLAINT)), None)
    if complaint is not None and not any(any(w in line for w in COMPLAINT) for line in kept):
        kept = [complaint, *kept]
    words = " / ".join(kept)
    return words if len(words) <= limit else "…" + words[-(limit - 1) :]


def _without_parser_hints(lines: list[str]) -> list[str]:
    """`lines` without a usage block (its `Usage:` line and the indented lines under it) and
    the pointers to `--help`."""
    out: list[str] = []
    in_usage = False
    for line in lines:
        if USAGE.match(line):
            in_usage = True
        elif in_usage and line[:1].isspace() and line.strip():
            continue  # a usage block's next line
        else:
            in_usage = False
            if not HELP_HINT.match(line):
                out.append(line)
    return out


def died_reason(words: str, exit_status: int | None) -> str:
    """A dead start's reason for the user and `last_error`."""
    status = f" (exit {exit_status})" if exit_status is not None else ""
    return f"its start failed at once{status}: {words or 'it printed nothing'}"


def is_auth_failure(words: str) -> bool:
    return any(w in words for w in AUTH_WORDS)


def signature(words: str) -> str:
    """A failure's words without what differs between two reports of it (request ids).

    >>> signature('API Error: 401 {"request_id":"req_011CU"}')
    'API Error: 401 {"request_id":"…"}'
    """
    return VOLATILE.sub("…", words)


def stopped_providers(failures: Sequence[tuple[str, str]]) -> dict[str, str]:
    """provider -> the authentication failure (its words) that happened AUTH_STOP times to its
    starts, from (provider, words) of each failed start so far."""
    counts: dict[tuple[str, str], int] = {}
    stopped: dict[str, str] = {}
    for provider, words in failures:
        if not is_auth_failure(words):
            continue
        key = (provider, signature(words))
        counts[key] = counts.get(key, 0) + 1
        if counts[key] >= AUTH_STOP:
            stopped.setdefault(provider, words)
    return stopped


def not_started_reason(provider: str) -> str:
    """An agent left unstarted for its provider's failed login; what to do is said once for
    the whole fleet (`advice`), not once per agent."""
    return f"not started: {provider}'s login failed (see the advice)"


def advice(stopped: Mapping[str, str]) -> list[str]:
    """What to do about each provider whose starts were stopped: one line per provider, its
    CLI's words, and one login for all its agents (they share it).

    >>> advice({"claude": "API Error: 401"})  # doctest: +NORMALIZE_WHITESPACE
    ['stopped starting claude agents after 2 identical authentication failures (API Error:
    401): log in to claude once (or fix its API key), then `roost restore`']
    """
    return [
        f"stopped starting {provider} agents after {AUTH_STOP} identical authentication "
        f"failures ({stopped[provider]}): log in to {provider} once (or fix its API key), "
        "then `roost restore`"
        for provider in sorted(stopped)
    ]
