"""Claude Code hooks: the settings file roost passes with `--settings`, and the hook log.

roost never edits the user's ~/.claude/settings.json; each claude it starts gets
`--settings <ROOST_HOME/agents/<id>/claude-settings.json>`, whose hooks run hook.sh, which appends
`<epoch seconds>\\t<event>\\t<launch token>\\t<payload json>` to `ROOST_HOME/agents/<id>/hooks.log`
(roosts before launch tokens wrote no token field; core/lineage.py says what a token proves).
Import-light: `roost ls` reads the log's last event on its fast path.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from typing import TYPE_CHECKING

from roost.core.errors import RoostError
from roost.core.lineage import token_refused
from roost.core.present import command
from roost.core.status import Status, one_line

if TYPE_CHECKING:
    from typing import BinaryIO

EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Notification",
    "Stop",
    "StopFailure",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
)
# Hook event -> status. A Notification's status depends on its type; a SubagentStop or a
# PreCompact counts only inside a turn (see `fold`).
HOOK_STATUS = {
    "SessionStart": "idle",
    "UserPromptSubmit": "working",
    "PreToolUse": "working",
    "PostToolUse": "working",
    "Stop": "idle",
    "StopFailure": "error",  # the turn ended on an API error: 401, 429, 500, usage limit, ...
    "SubagentStop": "working",
    "PreCompact": "working",
    "SessionEnd": "exited",
}
# A child done, a parent free again, or (SessionStart) a parent woken by its person: the notices
# held for it while it was stopped arrive then.
NOTIFY_ON = ("Stop", "Notification", "SessionEnd", "SessionStart")
NOTIFICATION_STATUS = {
    "permission_prompt": "waiting",
    "idle_prompt": "idle",
    "elicitation_dialog": "waiting",
}
# A turn runs from the prompt (or a tool call seen without it) to its Stop or StopFailure.
# Outside a turn, a SubagentStop is a side job of an idle claude (the "※ recap" it writes a few
# minutes after the user left) and a PreCompact is a `/compact` typed at the prompt, which may
# end with no event at all ("Not enough messages to compact"): neither says anything, and the
# screen shows a compaction at work.
TURN_BEGINS = ("UserPromptSubmit", "PreToolUse", "PostToolUse")
TURN_ENDS = ("Stop", "StopFailure", "SessionStart", "SessionEnd")
OUTSIDE_A_TURN_SAYS_NOTHING = ("SubagentStop", "PreCompact")
KEEP_TRANSCRIPTS_DAYS = 36500  # hibernated agents must stay resumable (Claude's default is 30)
# roost/hook.sh: the path existing settings files name
HOOK_SH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hook.sh")


def agent_dir(roost_home: str, agent_id: str) -> str:
    return os.path.join(roost_home, "agents", agent_id)


def log_path(roost_home: str, agent_id: str) -> str:
    return os.path.join(agent_dir(roost_home, agent_id), "hooks.log")


# ---- Codex's notify program and Gemini's hooks: the CLI event log the service watches ----
# roost/cli_hook.sh appends their events to a log of their own (not hooks.log, whose lines are
# Claude's status): the service's monitor stat()s it and looks at the agent the moment it grows.
CLI_HOOK_SH = os.path.join(os.path.dirname(HOOK_SH), "cli_hook.sh")
CLI_LOGGED = ("codex", "gemini")  # the providers whose CLI appends to the CLI event log
# The user's own Codex notify program, one word per line, which cli_hook.sh runs after its own.
USER_NOTIFY_ENV = "ROOST_USER_NOTIFY"
CODEX_NOTIFY = "CodexNotify"  # the event name of a line Codex's notify program wrote
# Gemini CLI 0.61.0's hook events that end or pause a turn (its bundle's HookEventName).
GEMINI_EVENTS = ("AfterAgent", "Notification", "SessionEnd")


def cli_log_path(roost_home: str, agent_id: str) -> str:
    return os.path.join(agent_dir(roost_home, agent_id), "cli-events.log")


def watched_log(roost_home: str, agent_id: str, provider: str, reports: bool) -> str | None:
    """The log whose growth says the agent's CLI reported something: Claude's hook log (a CLI
    that `reports` by hooks), the CLI event log of Codex and Gemini, none for the others."""
    if reports:
        return log_path(roost_home, agent_id)
    return cli_log_path(roost_home, agent_id) if provider in CLI_LOGGED else None


def brief(payload: dict[str, object]) -> dict[str, str]:
    """What a `hook` event keeps of a Codex or Gemini payload: its type and message, one line
    each (the CLI's own words, for a notification)."""
    found = {}
    for key, name in (("type", "type"), ("notification_type", "type"), ("message", "message")):
        value = payload.get(key)
        if isinstance(value, str) and value.strip():
            found[name] = one_line(value)[:200]
    return found


def codex_notify(roost_home: str, agent_id: str) -> list[str]:
    """Codex's `notify` program (it appends its JSON payload as the last argument, checked on
    0.169.0: at each agent-turn-complete)."""
    _private_folder(roost_home, agent_id)
    return ["sh", CLI_HOOK_SH, cli_log_path(roost_home, agent_id), CODEX_NOTIFY]


def gemini_hooks(roost_home: str, agent_id: str) -> dict[str, list[object]]:
    """Gemini's `hooks` setting (its payload on stdin, 0.61.0) for the events in GEMINI_EVENTS
    (the agent's folder is made with the settings file that holds them)."""
    log = _sh_quote(cli_log_path(roost_home, agent_id))
    return {
        event: [
            {
                "hooks": [
                    {"type": "command", "command": f"sh {_sh_quote(CLI_HOOK_SH)} {log} {event}"}
                ]
            }
        ]
        for event in GEMINI_EVENTS
    }


def settings(log: str, allow_mcp: bool = False) -> dict[str, object]:
    def command(event: str) -> str:
        # Paths are quoted for the shell Claude Code runs hooks with; no user text is in here.
        # With roost mcp, the events that end a turn also start `roost _notify` (ops/notify.py).
        notify = f" {_sh_quote(sys.executable)}" if allow_mcp and event in NOTIFY_ON else ""
        return f"sh {_sh_quote(HOOK_SH)} {_sh_quote(log)} {event}{notify}"

    found: dict[str, object] = {
        "cleanupPeriodDays": KEEP_TRANSCRIPTS_DAYS,
        "hooks": {
            event: [{"hooks": [{"type": "command", "command": command(event)}]}] for event in EVENTS
        },
    }
    if allow_mcp:  # roost's own tools run without a permission prompt (scoped by roost mcp)
        found["permissions"] = {"allow": ["mcp__roost"]}
    return found


def write_settings(roost_home: str, agent_id: str, allow_mcp: bool = False) -> str:
    """Write the agent's settings file (0600) through a fresh temporary file: a stale or planted
    `.tmp` (a symlink to some file of the user's) is removed first, never written through."""
    import json

    path = os.path.join(_private_folder(roost_home, agent_id), "claude-settings.json")
    tmp = path + ".tmp"
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(settings(log_path(roost_home, agent_id), allow_mcp), fh, indent=2)
    os.replace(tmp, path)  # replaces a symlink at `path` itself, not its target
    return path


LAUNCH = "RoostLaunch"


def mark_launch(roost_home: str, agent_id: str, when: float, token: str) -> None:
    """A line in the log at each launch, with the launch's token: events before it belong to an
    earlier process and say nothing about this one (a killed claude's SessionEnd must not read
    as this one's status). Which lines are this launch's is the store's token's to say
    (recent_events), never this line's: anyone may append a launch line.
    The log is 0600 and never appended to through a symlink: one planted there is removed (its
    target is left alone) and a new log is started."""
    _private_folder(roost_home, agent_id)
    path = log_path(roost_home, agent_id)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        os.unlink(path)
        fd = os.open(path, flags | os.O_EXCL, 0o600)
    try:
        if os.fstat(fd).st_mode & 0o077:  # a log an older roost made 0644
            os.fchmod(fd, 0o600)
        os.write(fd, f"{when:.3f}\t{LAUNCH}\t{token}\t{{}}\n".encode())
    finally:
        os.close(fd)


def _private_folder(roost_home: str, agent_id: str) -> str:
    """The agent's folder, made 0700 if missing; refused if its id could name another folder
    or the folder is a symlink (roost writes an agent's files in a real folder of its own)."""
    if not agent_id or agent_id in (".", "..") or any(ch in agent_id for ch in "/\0"):
        raise RoostError(f"{agent_id!r} is not an agent id roost would write files for")
    folder = agent_dir(roost_home, agent_id)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    if os.path.islink(folder):
        raise RoostError(
            f"{folder} is a symlink; roost keeps an agent's files in a real folder "
            f"(remove it: {command('rm', str(folder))})"
        )
    return folder


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def parse_entry(line: str) -> tuple[float, str, dict[str, object], str | None] | None:
    """A log line as (time, event, payload, launch token); the token is None in a line written
    before hook.sh wrote tokens, "" in one written with no token in its environment."""
    import json  # here, not at the top: `roost ls` reads no hook line when no claude runs

    parts = line.rstrip("\n").split("\t", 3)
    if len(parts) < 3:
        return None
    token = parts[2] if len(parts) == 4 else None
    try:
        payload = json.loads(parts[-1]) if parts[-1].strip() else {}
        return float(parts[0]), parts[1], payload if isinstance(payload, dict) else {}, token
    except ValueError:
        return None


def parse_line(line: str) -> tuple[float, str, dict[str, object]] | None:
    entry = parse_entry(line)
    return entry[:3] if entry is not None else None


def read_entries_since(
    path: str, offset: int, limit: int = 4 << 20
) -> tuple[list[tuple[float, str, dict[str, object], str | None]], int]:
    """Complete lines appended since `offset` (at most `limit` bytes) as parse_entry reads
    them, and the new offset."""
    fh = _open_log(path)
    if fh is None:
        return [], 0
    with fh:
        size = os.fstat(fh.fileno()).st_size
        if size < offset:  # truncated or replaced: read it again from the start
            offset = 0
        fh.seek(max(offset, size - limit))
        data = fh.read(limit)
    end = data.rfind(b"\n") + 1  # a line still being written is read next time
    entries = [
        e
        for e in (parse_entry(line) for line in data[:end].decode(errors="replace").splitlines())
        if e is not None
    ]
    return entries, max(offset, size - limit) + end


def read_since(
    path: str, offset: int, launch_token: str | None, limit: int = 4 << 20
) -> tuple[list[tuple[float, str, dict[str, object]]], int]:
    """The current launch's events (`launch_token`, the store's: core/lineage.py's rule, the
    one status and lineage use) in the complete lines appended since `offset` (at most `limit`
    bytes), and the new offset. A line with any other token (a forged launch line's, an
    orphaned twin's) is no delivery, reply or turn of this agent's."""
    entries, end = read_entries_since(path, offset, limit)
    return [e[:3] for e in entries if token_refused(e[3], launch_token) is None], end


def size(path: str) -> int:
    """The log's size; 0 for none, or for anything but a regular file (as _open_log reads it)."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return 0
    return found.st_size if stat.S_ISREG(found.st_mode) else 0


def _open_log(path: str) -> BinaryIO | None:
    """The log, open for reading; None when it is missing or is not a regular file of its own: a
    symlink or a FIFO planted at its path is neither read through nor waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):  # a symlink (EMLINK: the BSDs)
            return None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return os.fdopen(fd, "rb")


def recent_events(
    path: str, launch_token: str | None, tail: int = 65536
) -> list[tuple[float, str, dict[str, object]]]:
    """The events that decide the status now, oldest first: those of the current launch
    (`launch_token`, the store's; None for a launch made before tokens) from its last turn
    boundary (a turn's begin or end, or its launch line) on, in the log's last `tail` bytes.
    Lines with another token (a forged launch line too) are not read, and the log's order, not
    its times, says which came last. Only they are parsed: usually a line or two."""
    fh = _open_log(path)
    if fh is None:
        return []
    with fh:
        length = os.fstat(fh.fileno()).st_size
        fh.seek(max(0, length - tail))
        data = fh.read(tail)  # the log may grow as it is read: no more than asked
    lines = data.decode(errors="replace").splitlines()
    if length > tail and lines:
        lines = lines[1:]  # the first line read may be the end of a longer one
    lines = [line for line in lines if token_refused(_token_of(line), launch_token) is None]
    start = 0
    for i in range(len(lines) - 1, -1, -1):
        name = lines[i].split("\t", 2)[1:2]
        if name and (name[0] in TURN_BEGINS or name[0] in TURN_ENDS or name[0] == LAUNCH):
            start = i
            break
    return [e for e in (parse_line(line) for line in lines[start:]) if e is not None]


def _token_of(line: str) -> str | None:
    parts = line.split("\t", 3)
    return parts[2] if len(parts) == 4 else None


def status_of(event: str, payload: dict[str, object]) -> str | None:
    """The status a hook event says the agent is in; None for events that say nothing."""
    if event == "Notification":
        return NOTIFICATION_STATUS.get(str(payload.get("notification_type", "")))
    return HOOK_STATUS.get(event)


def failure_reason(payload: dict[str, object]) -> str | None:
    """A StopFailure's reason in the CLI's words: what it printed (e.g. "API Error: 500 ...",
    "Invalid API key · Fix external API key"), else its error details or code."""
    for key in ("last_assistant_message", "error_details", "error"):
        value = payload.get(key)
        if isinstance(value, str) and value.strip():
            return one_line(value)
    return None


def fold(
    events: list[tuple[float, str, dict[str, object]]],
) -> tuple[str, float, str | None] | None:
    """The status the events give, oldest first: that of the last event that says one, when it
    fired, and an error's reason. A launch line starts afresh; a SubagentStop or PreCompact
    outside a turn says nothing."""
    found: tuple[str, float, str | None] | None = None
    in_turn: bool | None = None  # unknown until the events show a turn begin or end
    for at, event, payload in events:
        if event == LAUNCH:
            found, in_turn = None, False
            continue
        if event in TURN_BEGINS:
            in_turn = True
        elif event in TURN_ENDS:
            in_turn = False
        if event in OUTSIDE_A_TURN_SAYS_NOTHING and in_turn is False:
            continue
        status = status_of(event, payload)
        if status is not None:
            found = (status, at, failure_reason(payload) if status == Status.ERROR else None)
    return found


def last_status(
    roost_home: str, agent_id: str, launch_token: str | None
) -> tuple[str, float, str | None] | None:
    """The status the agent's hook log gives now (`fold` of its current launch's last events,
    `launch_token` being the store's): the status, when the event that gave it fired, and an
    error's reason."""
    return fold(recent_events(log_path(roost_home, agent_id), launch_token))
