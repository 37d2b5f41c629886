"""What an agent is doing, from the best signal available: its CLI's hooks (for a CLI that has
them), then the screen (each provider's patterns, last lines only; for a still one no pattern
reads, the CLI's own record of a prompt it took), then process facts. Pure: `roost ls`
classifies on its fast path.

Statuses: starting, working, idle, waiting (the CLI asks the user something), error (the CLI
is broken or its last turn failed: lost its server, an authentication failure, an API error, a
usage limit; it comes with a reason, the CLI's own words on one line), exited, stopped (the
user stopped it), lost (meant to run, its window gone: a tmux server loss or a reboot),
hibernated, failed, unknown. Sources: hook, screen, title, process, store.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence


class Status(StrEnum):
    """What an agent is doing. Each is its value, a plain string: stored, printed, compared and
    sent as it is (the store, `ls --json`, the event log, hooks, hosts)."""

    STARTING = "starting"
    WORKING = "working"
    IDLE = "idle"
    WAITING = "waiting"  # the CLI asks the user something
    ERROR = "error"  # the CLI is broken or its last turn failed; with a reason
    LIMITED = "limited"  # an error or a dialog that tells of a usage limit (core/observation)
    EXITED = "exited"
    STOPPED = "stopped"  # the user stopped it
    LOST = "lost"  # meant to run, its window gone
    HIBERNATED = "hibernated"
    FAILED = "failed"
    UNKNOWN = "unknown"


# `Status.X` is a lookup through the enum's metaclass (0.1 us, ten times a global's), and
# `Status(value)` a call: classify runs for every agent at every look (a thousand per `roost
# ls`), so it and observation.classify read these names instead.
STARTING, WORKING, IDLE, WAITING, ERROR, LIMITED = (
    Status.STARTING,
    Status.WORKING,
    Status.IDLE,
    Status.WAITING,
    Status.ERROR,
    Status.LIMITED,
)
EXITED, STOPPED, LOST, UNKNOWN = Status.EXITED, Status.STOPPED, Status.LOST, Status.UNKNOWN
MEMBER: dict[str, Status] = dict(Status._value2member_map_)


# No turn runs: what a send waits for after its message, and an answer for after its choice.
SETTLED = (IDLE, WAITING, ERROR, LIMITED, EXITED, STOPPED, LOST, Status.FAILED)


# The signal a status came from: core/status.py's, a turn begun that a send or a parent
# recorded (store/status.py), a CLI loading (LOADING).
Source = Literal["hook", "screen", "title", "loading", "process", "store", "send", "parent"]

STARTING_GRACE = 20.0  # seconds after a start with no other signal: "starting", at least
HOLD_WINDOW = 3.0  # seconds a start must live (or show its prompt) to count as held, at least
# A start that shows no ready screen is held once it lived this many times the slowest start
# measured for its CLI: a CLI that dies of a bad flag lives through most of a start first (on a
# loaded machine Gemini CLI 0.61 died after 19-26 s, and showed its prompt after 20-32 s).
START_FACTOR = 3.0


def start_window(start_time: float) -> float:
    """Seconds a start may take before it counts as held without showing it is ready, from its
    CLI's slowest measured start (providers.traits: start_time).

    >>> start_time = 30.0
    >>> start_window(start_time), start_window(0.2)
    (90.0, 3.0)
    """
    return max(HOLD_WINDOW, START_FACTOR * start_time)


QUIET = 3.0  # seconds without screen activity before a pattern-less screen counts as idle
# How far up each kind is looked for: dialogs and error boxes are tall, busy footers and prompts
# sit at the bottom. Looking no higher keeps the conversation above (which may quote any of
# these words) from reading as a status.
WINDOW = {WAITING: 8, ERROR: 12, WORKING: 6, IDLE: 4}
REASON_LIMIT = 200  # characters of a reason: one line, whatever the CLI printed
# Bullets, prompts, marks and box edges drawn around a CLI's words.
DECORATION = "●•◦✦※⎿❯›>│┃╭╮╰╯─└✗✘✕⚠ℹ■▌ "

# Screen kinds, checked in this order on the last lines; the first kind that matches wins. Each
# provider's patterns for them are its own (providers/traits.py). A dialog is what the user must
# answer first; an error outranks the busy and idle cues a broken CLI may still draw (its prompt,
# a stuck spinner), so a provider's error patterns must match only while the failure is current.
KINDS = (WAITING, ERROR, WORKING, IDLE)
# Not a status: a provider's texts that show a turn went on (a prompt taken, an answer, a busy
# footer). Many CLIs leave an error's words in the scrollback; an error above the last of these
# lines is over, one below it is current.
TURN = "turn"
# Not a status either: a provider's texts for work it does before it takes any input (Gemini CLI
# loading a resumed session). Such a screen reads `working` with the source `loading`: the CLI
# took no prompt (a budget waits for a turn: budgets/rules.began_turn).
LOADING: Source = "loading"

# A pattern is a text found anywhere in a line, unless anchored: "^" in front, it starts the
# line; "$" behind, it ends the screen's last line (trailing spaces aside), where a prompt or a
# question the CLI waits on sits.
START, END = "^", "$"


# The terminal title's first character while a CLI works (the title comes with the pane listing,
# at no extra tmux call): a braille spinner (Codex 0.169 and many CLIs: ⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏), the half
# circles Claude Code 2.1.332 alternates (◐◑; outside tmux only: under tmux it keeps its still
# "✳", which it also shows when idle, so that mark says nothing), Gemini CLI 0.61's working marks
# (✦, ⏲; "◇" is its ready one).
TITLE_WORKING = "◐◑◒◓✦⏲"


def title_working(title: str) -> bool:
    """The pane's title shows a CLI at work (a spinner or a working mark first).

    >>> title_working("⠙ Fix the tests"), title_working("✳ Claude Code"), title_working("")
    (True, False, False)
    """
    head = title.lstrip()[:1]
    return bool(head) and ("\u2801" <= head <= "\u28ff" or head in TITLE_WORKING)


def patterns_for(
    defaults: Mapping[str, Sequence[str]], override: Mapping[str, Sequence[str]] | None = None
) -> dict[str, list[str]]:
    """A provider's patterns (`defaults`), each kind replaced by the user's list for it when its
    `[status.patterns.<provider>]` table in config.toml (`override`, checked) gives one."""
    merged = {kind: list(defaults.get(kind, ())) for kind in (*KINDS, TURN, LOADING)}
    for kind, values in (override or {}).items():
        if kind in merged:
            merged[kind] = list(values)
    return merged


def matches(line: str, pattern: str, last: bool) -> bool:
    """Whether `pattern` (anchored or not) is on `line`, which is the screen's last non-empty
    line when `last` is true.

    >>> matches(">  ", "^>$", True), matches("> hello", "^>$", True)
    (True, False)
    >>> matches("Run shell command? (Y)es/(N)o [Yes]: ", "[Yes]:$", False)
    False
    """
    if len(pattern) > 1 and pattern.endswith(END):
        if not last:
            return False
        line, pattern = line.rstrip(), pattern[:-1]
        if len(pattern) > 1 and pattern.startswith(START):
            return line == pattern[1:]
        return line.endswith(pattern)
    if len(pattern) > 1 and pattern.startswith(START):
        return line.rstrip().startswith(pattern[1:])
    return pattern in line


def reading(text: str, patterns: Mapping[str, Sequence[str]]) -> tuple[Status, str | None] | None:
    """(kind, reason) from the last non-empty lines, or None when nothing matches. An error
    counts below the last line that shows a turn went on (TURN); its reason is the first line
    that shows it, as one_line makes it. A question's reason is what it asks (its words, else
    the line that shows it)."""
    lines = [line for line in text.splitlines() if line.strip()]
    last = len(lines) - 1
    if lines and any(matches(lines[last], p, True) for p in patterns.get(LOADING, ())):
        return WORKING, None  # above all: a CLI restarting keeps its answered dialog drawn
    for kind in KINDS:
        wanted = patterns.get(kind, ())
        if not wanted:
            continue
        first = max(0, len(lines) - WINDOW[kind])
        if kind == ERROR:
            turns = [
                i
                for i in range(first, len(lines))
                if any(matches(lines[i], p, False) for p in patterns.get(TURN, ()))
            ]
            first = turns[-1] + 1 if turns else first
        for i in range(first, len(lines)):
            if any(matches(lines[i], p, i == last) for p in wanted):
                if kind == WAITING:
                    return kind, asked(text) or one_line(lines[i])
                return kind, one_line(lines[i]) if kind == ERROR else None
    return None


def asked(screen: str) -> str | None:
    """The words of the question a waiting screen shows (core/questions.py), or None. Loaded
    only for a waiting screen: `roost ls`'s fast path stays light for the rest."""
    from roost.core import questions  # its patterns compile at import (~2.5 ms)

    found = questions.read(screen)
    return found.text if found is not None else None


def loading(text: str, patterns: Mapping[str, Sequence[str]]) -> bool:
    """Whether the screen shows the CLI at work before it takes input (its LOADING patterns,
    looked for where its `working` ones are)."""
    wanted = patterns.get(LOADING, ())
    return bool(wanted) and reading(text, {"working": wanted}) is not None


def from_screen(text: str, patterns: Mapping[str, Sequence[str]]) -> str | None:
    """waiting / error / working / idle from the last non-empty lines, or None."""
    found = reading(text, patterns)
    return found[0] if found else None


def one_line(text: str) -> str:
    """A CLI's words as a reason: one line, without the bullets and box edges drawn around
    them, at most REASON_LIMIT characters."""
    words = " ".join(text.split()).strip(DECORATION)
    return words if len(words) <= REASON_LIMIT else words[: REASON_LIMIT - 1] + "…"


def classify(
    *,
    alive: bool,
    has_window: bool,
    base_state: str,
    roost_stopped: bool,
    hook: tuple[str, float, str | None] | None,
    screen: str | None,
    activity: float | None,
    started_at: float | None,
    patterns: Mapping[str, Sequence[str]],
    now: float,
    title: str = "",
    grace: float = STARTING_GRACE,
    typed: bool = False,
    spawning: bool = False,
    in_flight: Callable[[], bool] | None = None,
) -> tuple[Status, Source, str | None]:
    """(status, source, reason); the reason (the CLI's words) comes with an error, and with
    a question read off the screen (what it asks).
    `base_state` is state.derive's answer (running/stopped/hibernated/failed); `hook` is the
    status the last hook event gave, when it fired, and its reason; `screen` is the pane's text
    when it was captured; `activity` is tmux's last output time of the window; `title` is the
    pane's title (a spinner there is work, under a dialog or an error); `grace` how long a start
    with no other signal reads "starting"; `typed`: a draft sits on the CLI's input line (so it
    is up: its start held, whatever the grace); `spawning`: a spawn stored it a moment ago and
    has not launched it yet (its window may not exist yet); `in_flight`: asked only of a still
    screen no pattern reads, whether the CLI's own record ends with a prompt it took and nothing
    after it (a turn under way whose CLI shows nothing yet)."""
    spinning = title_working(title)
    if not alive:
        if base_state in ("hibernated", "failed"):
            return Status(base_state), "store", None
        if has_window and not roost_stopped:
            return EXITED, "process", None
        if roost_stopped:
            return STOPPED, "process", None
        # Meant to run with no window: being spawned, or lost with its window (a server loss);
        # "stopped" is kept for what the user stopped.
        return (STARTING, "store", None) if spawning else (LOST, "process", None)
    # Hooks first, unless the screen moved after the last hook (a dialog or an error that hooks
    # do not report). The hook status is the current launch's already (its launch token and the
    # log's order say so: providers/hooks.py), so its time is not held against the start: the
    # agent's clock may be set apart from roost's.
    if hook is not None:
        stale = screen is not None and activity is not None and activity > hook[1] + 1
        seen = reading(screen or "", patterns) if stale else None
        if (
            seen is not None
            and hook[0] != ERROR
            and (seen[0] in (WAITING, ERROR) or (hook[0] == IDLE and seen[0] == WORKING))
        ):
            return seen[0], "screen", seen[1]
        if hook[0] == IDLE and spinning:
            return WORKING, "title", None
        return MEMBER[hook[0]], "hook", hook[2] if hook[0] == ERROR else None
    seen = reading(screen, patterns) if screen is not None else None
    if seen is not None and seen[0] in (WAITING, ERROR):
        return seen[0], "screen", seen[1]
    if screen is not None and loading(screen, patterns):
        return WORKING, LOADING, None
    if spinning:
        return WORKING, "title", None
    if seen is not None:
        return seen[0], "screen", seen[1]
    # Just started, and nothing shows yet, or not yet the prompt of a CLI that draws one (a
    # still screen would read idle below, and a message typed now would go before its prompt).
    if (
        started_at is not None
        and now - started_at < grace
        and hook is None
        and not typed
        and (screen is None or not screen.strip() or patterns.get("idle"))
    ):
        return STARTING, "process", None
    if screen is not None:
        # No pattern matched (or the provider has none, like any command): the screen moving
        # is work, a still one (a silent program, a shell prompt) is idle, unless the CLI's
        # record says it took a prompt and works on it (aider loads its model client for
        # seconds after the first prompt, the prompt's line the last on its screen).
        busy = activity is not None and now - activity < QUIET
        busy = busy or (in_flight is not None and in_flight())
        return (WORKING if busy else IDLE), "screen", None
    return UNKNOWN, "process", None


def settles_at(
    found: str,
    source: str | None,
    started_at: float | None,
    activity: float | None,
    grace: float,
    now: float,
) -> float | None:
    """When a status read now may change with time alone, no output or hook event coming: a
    start's grace running out, a screen QUIET seconds after its last output (a pattern-less
    screen goes from working to idle so). None: only an event changes it (a moment already
    past, too: a still screen that a pattern reads as working stays so).

    >>> settles_at("starting", "process", 100.0, None, 20.0, 110.0)
    120.0
    >>> settles_at("working", "screen", 0, 50.0, 20, 51)
    53.0
    >>> settles_at("working", "screen", 0, 50, 2, 60)  # past: a pattern reads it working
    >>> settles_at("idle", "screen", 100, 50, 20, 51), settles_at("working", "hook", 1, 2, 20, 3)
    (None, None)
    """
    at = None
    if found == STARTING and source == "process" and started_at is not None:
        at = started_at + grace
    elif found == WORKING and source == "screen" and activity is not None:
        at = activity + QUIET
    return at if at is not None and at > now else None


def needs_screen(has_hooks: bool, hook_at: float | None, activity: float | None) -> bool:
    """Capture a live pane only when its status may need it: a provider without hooks, one with
    hooks before its first event, or screen output after the last hook event."""
    if not has_hooks or hook_at is None:
        return True
    return activity is not None and activity > hook_at + 1


BOX_EDGES = "│┃ "


def draft(
    text: str, markers: Sequence[str], window: int, placeholders: Sequence[str] = ()
) -> str | None:
    """What sits typed on a CLI's input line, or None when it is empty (or shows only a
    placeholder, or no input line is in sight): the last line among the last `window` non-empty
    ones that starts with one of `markers` (box edges aside), after the marker.

    >>> draft("fake-claude session x\\n❯ draft-words\\n", ("❯",), 12)
    'draft-words'
    >>> draft("│ > Type your message or @path/to/file  │", (">",), 12, ("Type your message",))
    >>> draft("> an earlier prompt\\nanswer\\n>", (">",), 1)
    """
    lines = [line for line in text.splitlines() if line.strip()][-window:]
    for line in reversed(lines):
        inner = line.strip(BOX_EDGES)
        marker = next((m for m in markers if inner.startswith(m.strip())), None)
        if marker is None:
            continue
        typed = inner[len(marker.strip()) :].strip()
        if not typed or any(typed.startswith(p) for p in placeholders):
            return None
        return typed
    return None
