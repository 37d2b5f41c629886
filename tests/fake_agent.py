#!/usr/bin/env python3
"""Stand-in for the AI coding agent CLIs that roost drives (Claude Code, Codex, Gemini, Aider).

It behaves like the real programs where roost cares -- session ids and their
failure modes, the files they leave on disk, hooks, the terminal cues roost
reads from the screen -- so the test-suite never needs an API key or network.

Usage: ``fake_agent.py --flavor {claude,codex,gemini,aider} [the CLI's own args]``
(normally through the tiny wrappers in ``tests/bin``).  Stdlib only.

Environment knobs (all optional):
  FAKE_AGENT_LOG=<file>            append one JSON line per process start
  FAKE_AGENT_EXIT_ON_START=<code>  exit with <code> right after logging
  FAKE_AGENT_AUTH_ERROR=1          print the API's authentication error (a 401, with a new
                                   request id each start, as Claude Code prints it) and exit 1
  FAKE_AGENT_AS_ROOT=1             run as if by root: claude refuses --dangerously-skip-permissions
  FAKE_AGENT_START_DELAY=<secs>    sleep before the idle prompt appears
  FAKE_AGENT_DROP_EARLY_INPUT=1    discard keys typed before the prompt appears
  FAKE_AGENT_LAZY_TRANSCRIPT=1     (claude) create the transcript on the first message only
  FAKE_AGENT_RECEIVED_DIR=<dir>    write each echoed message verbatim to <dir>/<n>.txt
  FAKE_AGENT_ORPHAN_FILE=<file>    append the pids started by the ``orphan`` command
  FAKE_AGENT_HOOK_TIMEOUT=<secs>   kill a hook (and its process group) after this long; default 10
  FAKE_AGENT_LOG_ENV=<A,B,...>     also log these variables of the start's environment (when set)
  FAKE_AGENT_IGNORE_HUP=1          ignore SIGHUP and outlive the terminal (as a daemonised
                                   child or a CLI deaf to hangups would): a tmux server's death
                                   leaves it running
  FAKE_AGENT_DAEMON_LINGER=<secs>  (codex) how long the shared app-server outlives its last TUI; 30

Codex (as 0.169.0 does, see tests/test_real_codex.py): the TUI starts a shared background
``codex app-server --managed-daemon`` for its CODEX_HOME (its own session and process group, a
child of the TUI, with the TUI's environment) unless ``--no-daemon``; a TUI that uses it and sees
it go shows "Reconnecting to server…" and takes no prompt. The rollout file is written at the
first message and held open while the process runs. ``fail auth|usage|server|rate`` shows the
real CLI's error line for a failed turn.
  FAKE_AGENT_RECAP_AFTER=<secs>    (claude) idle this long after the terminal lost focus, write
                                   a recap (a SubagentStop outside any turn); default 180
  FAKE_AGENT_VERSION=<text>        what ``--version`` prints instead of the flavor's own line
  FAKE_AGENT_LIMIT_WORDS=<text>    (claude) the usage-limit words ``fail limit`` shows
  FAKE_AGENT_LIMIT_FILE=<file>     (claude) while this file exists, every prompt hits the usage
                                   limit as ``fail limit`` does (the account's limit: a test
                                   removes the file at the reset)

Claude flavor, like Claude Code 2.1.332: a slash command (``/clear``, ``/compact``, ``/exit``)
fires no UserPromptSubmit and no Stop, only its effect's hooks; ``fail auth|500|429`` ends the
turn with the CLI's error words, a StopFailure hook and the failed-turn hint in the empty prompt
box.

Prompts it acts on: ``work <secs>`` (busy), ``ask`` (a permission dialog), ``api-error`` (the API
refused the turn: the flavor's error words, then its prompt again), ``orphan``, ``crash <code>``,
``/clear``, ``/exit``; anything else is echoed.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import re
import select
import signal
import sys
import termios
import threading
import time
import tty
from collections import deque
from pathlib import Path

TYPE_CHECKING = False  # mypy reads it as True; typing's import is 4 ms of each start
if TYPE_CHECKING:
    from typing import Any, ClassVar

FLAVORS = ("claude", "codex", "gemini", "aider")
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
HOOK_TIMEOUT = float(os.environ.get("FAKE_AGENT_HOOK_TIMEOUT") or 10.0)  # Claude Code's is 60 s
IGNORE_HUP = bool(os.environ.get("FAKE_AGENT_IGNORE_HUP"))
ESC_WAIT = 0.05  # how long a lone ESC waits for the rest of an escape sequence
LOGGED_ENV_PREFIXES = ("ROOST_", "FAKE_", "LANG", "LC_", "TMUX", "MY_")
# What each real CLI prints for --version (the versions roost's traits were verified against).
VERSIONS = {
    "claude": "2.1.332 (Claude Code)",
    "codex": "codex-cli 0.169.0",
    "gemini": "0.61.0",
    "aider": "aider 0.86.2",
}
SLASH_COMMAND = re.compile(r"/[A-Za-z][\w:.-]*(?:[ \t].*)?")
RECAP_AFTER = float(os.environ.get("FAKE_AGENT_RECAP_AFTER") or 180.0)
# Claude Code 2.1.332's failed turns (API stand-in answering 401, 500, 429): StopFailure's
# error code, the words it prints, and the hint its empty prompt box shows until the next message.
FAILURES = {
    "fail auth": (
        "authentication_failed",
        "Invalid API key · Fix external API key",
        "Once fixed, resend your message",
    ),
    "fail 500": (
        "server_error",
        "API Error: 500 Internal server error. This is a server-side "
        "issue, usually temporary — try again in a moment.",
        "Resend your message to try again",
    ),
    "fail 429": (
        "rate_limit",
        "API Error: Request rejected (429) · Number of request tokens has "
        "exceeded your per-minute rate limit",
        "Resend your message to try again",
    ),
}


# --------------------------------------------------------------------------- small helpers


def limit_holds() -> bool:
    """The account's usage limit, as the test set it (FAKE_AGENT_LIMIT_FILE)."""
    path = os.environ.get("FAKE_AGENT_LIMIT_FILE")
    return path is not None and os.path.exists(path)


def now_iso() -> str:
    # as datetime's isoformat(timespec="milliseconds"), without importing datetime at each start
    ms = int(time.time() * 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def new_uuid() -> str:
    """A random (version 4) UUID's text, as str(uuid.uuid4()): the uuid module (and the
    platform module it loads) is 4 ms of each start."""
    raw = bytearray(os.urandom(16))
    raw[6] = raw[6] & 0x0F | 0x40  # version 4
    raw[8] = raw[8] & 0x3F | 0x80  # the RFC 4122 variant
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def is_uuid(text: str) -> bool:
    return bool(UUID_RE.match(text))


def sha256_hex(text: str) -> str:
    import hashlib  # here, not at the top: each start's imports are CPU the suite waits for

    return hashlib.sha256(text.encode()).hexdigest()


def append_jsonl(path: Path, obj: dict[str, Any]) -> None:
    """Append one line and close, so readers (and hooks fired next) see it at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(obj, ensure_ascii=False) + "\n")


def write_json_atomic(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


class Fail(Exception):
    """A start-up failure: message for stderr and the exit code the real CLI uses."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


# --------------------------------------------------------------------------- argument parsing

# Per flavor: option -> (destination, takes_a_value).  Deliberately strict: the real
# CLIs reject unknown options, and a silently accepted typo would hide roost bugs.
OPTIONS: dict[str, dict[str, tuple[str, bool]]] = {
    "claude": {
        "--session-id": ("session_id", True),
        "--resume": ("resume", True),
        "-r": ("resume", True),
        "--continue": ("continue_", False),
        "-c": ("continue_", False),
        "--fork-session": ("fork", False),
        "--settings": ("settings", True),
        "--mcp-config": ("mcp_config", True),
        "--dangerously-skip-permissions": ("skip_permissions", False),
        "--permission-mode": ("permission_mode", True),
        "--model": ("model", True),
    },
    "codex": {
        "--dangerously-bypass-approvals-and-sandbox": ("skip_permissions", False),
        "--yolo": ("skip_permissions", False),
        "--last": ("continue_", False),  # only meaningful after `resume`
        "-c": ("config", True),
        "--config": ("config", True),
        "-m": ("model", True),
        "--model": ("model", True),
        "--no-daemon": ("no_daemon", False),
    },
    "gemini": {
        "--session-id": ("session_id", True),
        "-r": ("resume", True),
        "--resume": ("resume", True),
        "-i": ("prompt_interactive", True),
        "--prompt-interactive": ("prompt_interactive", True),
        "-y": ("skip_permissions", False),
        "--yolo": ("skip_permissions", False),
        "-m": ("model", True),
        "--model": ("model", True),
    },
    "aider": {
        "--chat-history-file": ("chat_history_file", True),
        "--restore-chat-history": ("restore_chat_history", False),
        "--yes-always": ("skip_permissions", False),
        "--model": ("model", True),
    },
}


def unknown_option(flavor: str, flag: str) -> Fail:
    """Each CLI's own wording (commander.js, clap, yargs, argparse)."""
    if flavor == "codex":
        return Fail(f"error: unexpected argument '{flag}' found", 2)
    if flavor == "gemini":
        return Fail(f"Unknown argument: {flag.lstrip('-')}", 1)
    if flavor == "aider":
        return Fail(f"aider: error: unrecognized arguments: {flag}", 2)
    return Fail(f"error: unknown option '{flag}'", 1)


class Options:
    """The command line as parsed (a plain class: with subprocess, importing dataclasses cost each
    of the suite's ~900 fake starts about 10 ms of CPU)."""

    subcommand: str | None = None  # codex: "resume"
    session_id: str | None = None
    resume: str | None = None
    continue_: bool = False
    fork: bool = False
    settings: str | None = None
    mcp_config: str | None = None
    skip_permissions: bool = False
    permission_mode: str | None = None
    model: str | None = None
    prompt_interactive: str | None = None
    chat_history_file: str | None = None
    restore_chat_history: bool = False
    no_daemon: bool = False  # codex: run without the shared app-server

    def __init__(self, flavor: str = "claude", argv: list[str] | None = None) -> None:
        self.flavor = flavor
        self.argv = argv if argv is not None else []
        self.positionals: list[str] = []
        self.config: list[str] = []

    @property
    def prompt(self) -> str | None:
        """The first user message given on the command line, if any."""
        if self.flavor == "aider":
            return None  # aider's positionals are files to add to the chat
        if self.flavor == "gemini" and self.prompt_interactive is not None:
            return self.prompt_interactive
        return " ".join(self.positionals) if self.positionals else None


def split_flavor(argv: list[str]) -> tuple[str, list[str]]:
    """Strip a leading ``--flavor X`` (or ``--flavor=X``); default claude."""
    if argv[:1] == ["--flavor"] and len(argv) >= 2:
        flavor, rest = argv[1], argv[2:]
    elif argv[:1] and argv[0].startswith("--flavor="):
        flavor, rest = argv[0].split("=", 1)[1], argv[1:]
    else:
        flavor, rest = "claude", argv
    if flavor not in FLAVORS:
        raise Fail(f"fake_agent: unknown flavor {flavor!r} (choose from {', '.join(FLAVORS)})", 2)
    return flavor, rest


def parse_args(flavor: str, argv: list[str]) -> Options:
    opts = Options(flavor=flavor, argv=list(argv))
    table = OPTIONS[flavor]
    args = deque(argv)
    only_positionals = False
    while args:
        arg = args.popleft()
        if only_positionals or arg == "-" or not arg.startswith("-"):
            if (
                flavor == "codex"
                and arg == "resume"
                and opts.subcommand is None
                and not opts.positionals
            ):
                opts.subcommand = "resume"
            else:
                opts.positionals.append(arg)
            continue
        if arg == "--":
            only_positionals = True
            continue
        name, inline_value = arg, None
        if arg.startswith("--") and "=" in arg:  # --opt=value
            name, inline_value = arg.split("=", 1)
        if name not in table:
            raise unknown_option(flavor, name)
        dest, takes_value = table[name]
        if not takes_value:
            setattr(opts, dest, True)
            continue
        if inline_value is None:
            if not args:
                raise Fail(f"error: option '{name} <value>' argument missing", 1)
            inline_value = args.popleft()
        if dest == "config":
            opts.config.append(inline_value)
        else:
            setattr(opts, dest, inline_value)
    if opts.skip_permissions and flavor == "claude" and opts.permission_mode is None:
        opts.permission_mode = "bypassPermissions"
    return opts


# --------------------------------------------------------------------------- sessions & storage


class Session:
    """The provider's notion of a conversation (aider has none: id is None)."""

    def __init__(
        self,
        id: str | None,
        path: Path,  # transcript / rollout / chat file / history file
        cwd: str,
        source: str,  # how it began: startup | resume | clear
        messages: list[dict[str, Any]] | None = None,  # gemini keeps the whole file
        start_time: str | None = None,
        last_uuid: str | None = None,  # claude: parentUuid chain
        fork_from: Path | None = None,  # claude --fork-session: transcript to copy on begin()
    ) -> None:
        self.id, self.path, self.cwd, self.source = id, path, cwd, source
        self.messages = messages if messages is not None else []
        self.start_time = start_time if start_time is not None else now_iso()
        self.last_uuid, self.fork_from = last_uuid, fork_from


class Store:
    """Where one flavor keeps its sessions.  Subclasses mirror the real CLI's layout."""

    def __init__(self, opts: Options, cwd: str) -> None:
        self.opts = opts
        self.cwd = cwd
        self.home = Path(os.environ.get("HOME") or Path.home())

    def open(self) -> Session:
        """Decide which session this start creates or continues, or raise Fail.

        No side effects: a start that fails (or FAKE_AGENT_EXIT_ON_START) leaves the disk
        as it was, like a CLI that dies before its first write."""
        raise NotImplementedError

    def new_session(self, source: str) -> Session:
        """A fresh session (no side effects either)."""
        raise NotImplementedError

    def begin(self, session: Session) -> None:
        """Create the session's files once the start has succeeded."""

    def record(self, session: Session, role: str, text: str) -> None:
        raise NotImplementedError

    def end(self, session: Session) -> None:
        """What the CLI does to its files when it exits."""


class ClaudeStore(Store):
    """~/.claude/projects/<cwd, non-alphanumerics as '-'>/<session-id>.jsonl"""

    @property
    def projects(self) -> Path:
        return self.home / ".claude" / "projects"

    def project_dir(self) -> Path:
        return self.projects / re.sub(r"[^A-Za-z0-9]", "-", self.cwd)

    def transcript(self, sid: str) -> Path:
        return self.project_dir() / f"{sid}.jsonl"

    def id_in_use(self, sid: str) -> bool:
        # The real CLI refuses an id that exists anywhere, not just in this cwd.
        import glob

        return any(self.projects.glob(f"*/{glob.escape(sid)}.jsonl"))

    def open(self) -> Session:
        o = self.opts
        if o.session_id is not None:
            if not is_uuid(o.session_id):
                raise Fail("Error: Invalid session ID. Must be a valid UUID.")
            if (o.resume or o.continue_) and not o.fork:
                raise Fail(
                    "Error: --session-id can only be used with --continue or --resume "
                    "if --fork-session is also specified."
                )
            if self.id_in_use(o.session_id):
                raise Fail(f"Error: Session ID {o.session_id} is already in use.")
        old = self.find_resumable()
        if old is None:
            return self.new_session("startup", o.session_id)
        if o.fork:
            new_id = o.session_id or new_uuid()
            return Session(
                id=new_id,
                path=self.transcript(new_id),
                cwd=self.cwd,
                source="resume",
                fork_from=old,
            )
        return Session(
            id=old.stem, path=old, cwd=self.cwd, source="resume", last_uuid=self.last_uuid(old)
        )

    def find_resumable(self) -> Path | None:
        o = self.opts
        if o.resume is not None:
            path = self.transcript(o.resume) if "/" not in o.resume else None
            if path is None or not path.is_file():
                raise Fail(f"No conversation found with session ID: {o.resume}")
            return path
        if o.continue_:
            candidates = sorted(self.project_dir().glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
            if not candidates:
                raise Fail("No conversation found to continue")
            return candidates[-1]
        return None

    def begin(self, session: Session) -> None:
        if session.fork_from is not None:
            self.copy_transcript(session.fork_from, session)
        elif session.source != "resume" and not os.environ.get("FAKE_AGENT_LAZY_TRANSCRIPT"):
            session.path.parent.mkdir(parents=True, exist_ok=True)
            session.path.touch()

    def copy_transcript(self, old: Path, session: Session) -> None:
        """--fork-session: the old transcript under the new id, sessionId rewritten like the real CLI."""
        lines = []
        for line in old.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and "sessionId" in entry:
                entry["sessionId"] = session.id
            lines.append(json.dumps(entry, ensure_ascii=False) + "\n")
        session.path.parent.mkdir(parents=True, exist_ok=True)
        session.path.write_text("".join(lines), encoding="utf-8")
        session.last_uuid = self.last_uuid(session.path)

    @staticmethod
    def last_uuid(path: Path) -> str | None:
        last = None
        for line in path.read_text(encoding="utf-8").splitlines():
            with contextlib.suppress(ValueError, AttributeError):
                last = json.loads(line).get("uuid") or last
        return last

    def new_session(self, source: str, sid: str | None = None) -> Session:
        sid = sid or new_uuid()
        return Session(id=sid, path=self.transcript(sid), cwd=self.cwd, source=source)

    def record(self, session: Session, role: str, text: str) -> None:
        entry_uuid = new_uuid()
        content: Any = text if role == "user" else [{"type": "text", "text": text}]
        append_jsonl(
            session.path,
            {
                "type": role,
                "uuid": entry_uuid,
                "parentUuid": session.last_uuid,
                "sessionId": session.id,
                "cwd": session.cwd,
                "message": {"role": role, "content": content},
                "timestamp": now_iso(),
            },
        )
        session.last_uuid = entry_uuid


class CodexStore(Store):
    """${CODEX_HOME:-~/.codex}/sessions/YYYY/MM/DD/rollout-<local time>-<uuid>.jsonl, written at
    the first message (not at start) and held open from then on, as codex 0.169.0 does."""

    def __init__(self, opts: Options, cwd: str) -> None:
        super().__init__(opts, cwd)
        self.held: dict[Path, Any] = {}  # rollout path -> its open file, for the process's life

    @property
    def sessions(self) -> Path:
        return Path(os.environ.get("CODEX_HOME") or self.home / ".codex") / "sessions"

    def open(self) -> Session:
        o = self.opts
        if o.subcommand != "resume":
            return self.new_session("startup")
        if o.continue_:  # codex resume --last: newest rollout recorded in this cwd
            mine = [p for p in self.rollouts("*") if self.meta(p).get("cwd") == self.cwd]
            if not mine:
                raise Fail("No saved session found for this directory")
            path = max(mine, key=lambda p: p.stat().st_mtime)
        else:
            if not o.positionals:
                raise Fail("error: `codex resume` needs a session id (or --last)", 2)
            sid = o.positionals.pop(0)  # the rest, if any, is the prompt
            import glob

            found = [
                p for p in self.rollouts(glob.escape(sid)) if self.meta(p).get("cwd") == self.cwd
            ]
            if not found:
                raise Fail(f"No saved session found with ID {sid}")
            path = found[0]
        return Session(id=self.meta(path)["id"], path=path, cwd=self.cwd, source="resume")

    def rollouts(self, id_pattern: str) -> list[Path]:
        """Rollout files whose id matches a glob pattern (escape literal ids)."""
        return sorted(self.sessions.glob(f"*/*/*/rollout-*-{id_pattern}.jsonl"))

    @staticmethod
    def meta(path: Path) -> dict[str, Any]:
        try:
            with path.open(encoding="utf-8") as f:
                first = json.loads(f.readline())
            return first["payload"] if first.get("type") == "session_meta" else {}
        except (OSError, ValueError, KeyError, AttributeError):
            return {}

    def new_session(self, source: str) -> Session:
        sid = new_uuid()
        local = time.localtime()
        path = (
            self.sessions
            / time.strftime("%Y/%m/%d", local)
            / f"rollout-{time.strftime('%Y-%m-%dT%H-%M-%S', local)}-{sid}.jsonl"
        )
        return Session(id=sid, path=path, cwd=self.cwd, source=source)

    def begin(self, session: Session) -> None:
        if session.source == "resume":
            self.hold(session.path)  # `codex resume` opens its rollout at start

    def hold(self, path: Path) -> Any:
        if path not in self.held:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.held[path] = path.open("a", encoding="utf-8")
        return self.held[path]

    def append(self, path: Path, obj: dict[str, Any]) -> None:
        out = self.hold(path)
        out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        out.flush()

    def record(self, session: Session, role: str, text: str) -> None:
        if not session.path.exists():  # the first message of a new conversation
            ts = session.start_time
            meta = {"id": session.id, "timestamp": ts, "cwd": self.cwd, "originator": "codex-tui",
                    "cli_version": "0.169.0"}  # fmt: skip
            self.append(session.path, {"timestamp": ts, "type": "session_meta", "payload": meta})
        kind = "input_text" if role == "user" else "output_text"
        payload = {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}
        self.append(
            session.path, {"timestamp": now_iso(), "type": "response_item", "payload": payload}
        )
        # and as 0.169.0's turn events, where roost reads replies (tests/test_real_replies.py)
        item = {
            "type": "UserMessage" if role == "user" else "AgentMessage",
            "content": [{"type": "text" if role == "user" else "Text", "text": text}],
        }
        self.append(
            session.path,
            {
                "timestamp": now_iso(),
                "type": "event_msg",
                "payload": {"type": "item_completed", "item": item},
            },
        )


class GeminiStore(Store):
    """Gemini CLI 0.61: ``~/.gemini/tmp/<slug>/chats/session-<YYYY-MM-DDTHH-MM>-<id[:8]>.jsonl``,
    the slug being the cwd's entry in ``~/.gemini/projects.json`` (``$GEMINI_CLI_HOME``
    replaces ``~``). Line 1 holds sessionId, projectHash (sha256 of the cwd) and startTime; each
    message is appended as a line, with a ``$set`` line after it. The file exists from start-up
    and is deleted at exit while it holds no message."""

    EXISTS = (
        'Error starting session: Session ID "{}" already exists. Use --resume to resume '
        "it, or provide a different ID."
    )
    INVALID = 'Error resuming session: Invalid session identifier "{}".'

    @property
    def root(self) -> Path:
        return Path(os.environ.get("GEMINI_CLI_HOME") or self.home) / ".gemini"

    def slug(self, create: bool) -> str | None:
        path = self.root / "projects.json"
        try:
            projects = json.loads(path.read_text(encoding="utf-8")).get("projects", {})
        except (OSError, ValueError, AttributeError):
            projects = {}
        if self.cwd in projects or not create:
            return projects.get(self.cwd)
        base = re.sub(r"[^a-z0-9-]", "-", Path(self.cwd).name.lower()) or "project"
        taken, slug, n = set(projects.values()), base, 1
        while slug in taken:
            slug, n = f"{base}-{n}", n + 1
        projects[self.cwd] = slug
        write_json_atomic(path, {"projects": projects})
        return slug

    def chats(self, create: bool = False) -> Path | None:
        slug = self.slug(create)
        return self.root / "tmp" / slug / "chats" if slug else None

    def load_all(self) -> list[tuple[Path, dict[str, Any]]]:
        chats = self.chats()
        found = []
        for path in chats.glob("session-*.jsonl") if chats else ():
            head = self.head(path)
            if head.get("sessionId"):
                found.append((path, head))
        return sorted(found, key=lambda pd: str(pd[1].get("startTime", "")))

    @staticmethod
    def head(path: Path) -> dict[str, Any]:
        try:
            with path.open(encoding="utf-8") as f:
                first = json.loads(f.readline())
            return first if isinstance(first, dict) else {}
        except (OSError, ValueError):
            return {}

    def open(self) -> Session:
        o = self.opts
        sessions = self.load_all()
        if o.session_id is not None and o.resume is None:
            if any(head["sessionId"] == o.session_id for _, head in sessions):
                raise Fail(self.EXISTS.format(o.session_id), 42)
            return self.new_session("startup", o.session_id)
        ref = o.resume
        if ref is None:
            return self.new_session("startup")
        hit: tuple[Path, dict[str, Any]] | None = None
        if ref == "latest" and sessions:
            hit = sessions[-1]
        elif ref.isdigit() and 1 <= int(ref) <= len(sessions):
            hit = sessions[int(ref) - 1]  # indices as listed by --list-sessions: oldest first
        else:
            hit = next((pd for pd in sessions if pd[1]["sessionId"] == ref), None)
        if hit is None:
            raise Fail(self.INVALID.format(ref), 42)
        path, head = hit
        return Session(
            id=head["sessionId"],
            path=path,
            cwd=self.cwd,
            source="resume",
            start_time=head.get("startTime", now_iso()),
            messages=[{"type": "user"}] * self.count_user(path),
        )

    @staticmethod
    def count_user(path: Path) -> int:
        count = 0
        for line in path.read_text(encoding="utf-8").splitlines():
            with contextlib.suppress(ValueError, AttributeError):
                count += json.loads(line).get("type") == "user"
        return count

    def new_session(self, source: str, sid: str | None = None) -> Session:
        sid = sid or new_uuid()
        stamp = time.strftime("%Y-%m-%dT%H-%M", time.gmtime())
        chats = self.chats(create=True)
        assert chats is not None
        return Session(
            id=sid, path=chats / f"session-{stamp}-{sid[:8]}.jsonl", cwd=self.cwd, source=source
        )

    def begin(self, session: Session) -> None:
        if session.source != "resume":
            append_jsonl(
                session.path,
                {
                    "sessionId": session.id,
                    "projectHash": sha256_hex(self.cwd),
                    "startTime": session.start_time,
                    "lastUpdated": session.start_time,
                    "kind": "main",
                },
            )

    def record(self, session: Session, role: str, text: str) -> None:
        stamp = now_iso()
        content: Any = [{"text": text}] if role == "user" else text
        append_jsonl(
            session.path,
            {
                "id": new_uuid(),
                "timestamp": stamp,
                "type": "user" if role == "user" else "gemini",
                "content": content,
            },
        )
        append_jsonl(session.path, {"$set": {"lastUpdated": stamp}})
        if role == "user":
            session.messages.append({"type": "user"})

    def end(self, session: Session) -> None:
        """At exit: a session that holds no message leaves no file."""
        if not session.messages:
            with contextlib.suppress(OSError):
                session.path.unlink()


class AiderStore(Store):
    """A markdown chat history: ``#### `` before each user line, the reply as plain text."""

    def open(self) -> Session:
        session = self.new_session("startup")
        if self.opts.restore_chat_history and session.path.is_file():
            session.source = "resume"
        return session

    def begin(self, session: Session) -> None:
        session.path.parent.mkdir(parents=True, exist_ok=True)
        with session.path.open("a", encoding="utf-8") as f:
            f.write(f"\n# aider chat started at {time.strftime('%Y-%m-%d %H:%M:%S')}\n\n")

    @staticmethod
    def count_messages(path: Path) -> int:
        """User blocks plus reply blocks; a new ``# aider chat started`` header separates runs."""
        count, kind = 0, None
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("# aider chat started"):
                kind = None
            elif line.startswith("####"):
                count, kind = (count + 1, "user") if kind != "user" else (count, kind)
            elif line.strip() and kind == "user":
                count, kind = count + 1, "assistant"
        return count

    def new_session(self, source: str) -> Session:
        return Session(
            id=None,
            path=Path(self.cwd, self.opts.chat_history_file or ".aider.chat.history.md"),
            cwd=self.cwd,
            source=source,
        )

    def record(self, session: Session, role: str, text: str) -> None:
        if role == "user":
            # as aider 0.86 writes it: a markdown line break ("  ") after each line
            block = "".join(f"#### {line}  \n" for line in text.split("\n")) + "\n"
        else:
            block = text + "\n\n"
        with session.path.open("a", encoding="utf-8") as f:
            f.write(block)


STORES: dict[str, type[Store]] = {
    "claude": ClaudeStore, "codex": CodexStore, "gemini": GeminiStore, "aider": AiderStore,
}  # fmt: skip


# --------------------------------------------------------------------------- hooks


class Hooks:
    """Claude-style command hooks from ``--settings`` (plus codex's ``-c notify=[...]``)."""

    # Which payload field an event's ``matcher`` is compared with.
    MATCHER_FIELD: ClassVar[dict[str, str]] = {
        "SessionStart": "source",
        "Notification": "notification_type",
        "SessionEnd": "reason",
    }

    def __init__(self, settings: dict[str, Any], notify: list[str] | None = None) -> None:
        self.config = settings.get("hooks") or {}
        self.notify = notify

    @classmethod
    def from_options(cls, opts: Options) -> Hooks:
        settings: dict[str, Any] = {}
        if opts.settings is not None:
            text = opts.settings
            try:
                if not text.lstrip().startswith("{"):
                    text = Path(text).read_text(encoding="utf-8")
                settings = json.loads(text)
                check_settings(settings)
            except (OSError, ValueError) as e:
                raise Fail(f"Error: Invalid settings {opts.settings}: {e}") from None
        import tomllib

        notify = None
        for item in opts.config:
            key, _, value = item.partition("=")
            if key.strip() == "notify":
                try:
                    notify = tomllib.loads(f"v = {value}")["v"]
                except tomllib.TOMLDecodeError as e:
                    raise Fail(f"Error loading config: {e}") from None
                if not (
                    isinstance(notify, list) and notify and all(isinstance(a, str) for a in notify)
                ):
                    raise Fail("Error loading config: notify must be a non-empty array of strings")
        return cls(settings, notify)

    def commands(self, event: str, payload: dict[str, Any]) -> list[str]:
        found = []
        subject = str(payload.get(self.MATCHER_FIELD.get(event, ""), ""))
        for group in self.config.get(event) or []:
            matcher = group.get("matcher") or "*"
            if matcher != "*" and not self.matches(matcher, subject):
                continue
            found += [
                h["command"]
                for h in group.get("hooks", [])
                if h.get("type") == "command" and h.get("command")
            ]
        return found

    @staticmethod
    def matches(matcher: str, subject: str) -> bool:
        try:
            return re.fullmatch(matcher, subject) is not None
        except re.error:
            return matcher == subject

    def fire(self, event: str, session: Session, **fields: Any) -> None:
        payload = {
            "session_id": session.id,
            "transcript_path": str(session.path),
            "cwd": session.cwd,
            "hook_event_name": event,
            **fields,
        }
        env = {**os.environ, "CLAUDE_PROJECT_DIR": session.cwd}
        for command in self.commands(event, payload):
            run_quietly(["/bin/sh", "-c", command], json.dumps(payload).encode(), session.cwd, env)

    def notify_turn(self, session: Session, prompt: str, reply: str) -> None:
        """Codex's notify program gets the JSON as its last argument."""
        if not self.notify:
            return
        payload = {
            "type": "agent-turn-complete",
            "thread-id": session.id,
            "turn-id": new_uuid(),
            "cwd": session.cwd,
            "input-messages": [prompt],
            "last-assistant-message": reply,
        }
        run_quietly([*self.notify, json.dumps(payload)], b"", session.cwd, dict(os.environ))


class GeminiHooks(Hooks):
    """Gemini CLI 0.61.0's command hooks, from the ``hooks`` of its system settings file
    (``$GEMINI_CLI_SYSTEM_SETTINGS_PATH``): its own event names, the payload on stdin."""

    NAMES: ClassVar[dict[str, str]] = {
        "SessionStart": "SessionStart",
        "UserPromptSubmit": "BeforeAgent",
        "Stop": "AfterAgent",
        "Notification": "Notification",
        "SessionEnd": "SessionEnd",
    }
    TYPES: ClassVar[dict[str, str]] = {"permission_prompt": "ToolPermission"}

    @classmethod
    def from_environment(cls) -> GeminiHooks:
        path = os.environ.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
        try:
            settings = json.loads(Path(path).read_text(encoding="utf-8")) if path else {}
        except (OSError, ValueError):
            settings = {}
        return cls(settings if isinstance(settings, dict) else {})

    def fire(self, event: str, session: Session, **fields: Any) -> None:
        name = self.NAMES.get(event)
        if name is None:
            return
        if "notification_type" in fields:
            fields["notification_type"] = self.TYPES.get(fields["notification_type"], "")
        if "last_assistant_message" in fields:
            fields = {"prompt_response": fields["last_assistant_message"]}
        super().fire(name, session, **fields)


def check_settings(settings: Any) -> None:
    """Reject malformed hooks at start (as the real CLI does) rather than mid-session."""
    if not isinstance(settings, dict):
        raise ValueError("settings must be a JSON object")
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        raise ValueError("hooks must be an object")

    def well_formed(group: Any) -> bool:
        inner = group.get("hooks", []) if isinstance(group, dict) else None
        return isinstance(inner, list) and all(isinstance(h, dict) for h in inner)

    for event, groups in hooks.items():
        if not isinstance(groups, list) or not all(well_formed(g) for g in groups):
            raise ValueError(f"hooks.{event} must be a list of {{matcher, hooks: [...]}} objects")


def run_quietly(argv: list[str], stdin: bytes, cwd: str, env: dict[str, str]) -> None:
    """Run a hook to completion; its output must not scribble over our screen, and
    a failing or hanging hook must never take the agent down.  Its own process group
    lets a timeout kill whatever the hook started too."""
    import subprocess  # here, not at the top: a start that runs no hook never pays for it

    try:
        with subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
        ) as proc:
            try:
                proc.communicate(stdin, timeout=HOOK_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
    except OSError:
        pass


# --------------------------------------------------------------------------- codex's app-server


def codex_home() -> Path:
    return Path(
        os.environ.get("CODEX_HOME") or Path(os.environ.get("HOME") or Path.home()) / ".codex"
    )


def process_alive(pid: int) -> bool:
    """Running, and not a zombie (a dead child of ours is reaped here)."""
    with contextlib.suppress(ChildProcessError, OSError):
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


class AppServer:
    """Codex's shared ``app-server --managed-daemon``: one per CODEX_HOME. The first TUI that
    needs it starts it as its own child in a new session (so its own process group) with the
    TUI's environment; later TUIs on that CODEX_HOME use the running one. It outlives the TUI
    that started it (the real one lives on; this one leaves once no TUI used it for
    FAKE_AGENT_DAEMON_LINGER seconds, so tests leak nothing)."""

    def __init__(self, home: Path) -> None:
        self.dir = home / "fake-app-server"
        self.pidfile = self.dir / "pid"
        self.clients = self.dir / "clients"

    def running(self) -> int | None:
        with contextlib.suppress(OSError, ValueError):
            pid = int(self.pidfile.read_text())
            if process_alive(pid):
                return pid
        return None

    def ensure(self) -> int:
        """The running server's pid, started first if none runs; this TUI is its client."""
        import fcntl
        import subprocess

        self.clients.mkdir(parents=True, exist_ok=True)
        (self.clients / str(os.getpid())).touch()
        with open(self.dir / "lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            pid = self.running()
            if pid is None:
                proc = subprocess.Popen(
                    [
                        sys.executable,
                        os.path.abspath(__file__),
                        "--flavor",
                        "codex",
                        "app-server",
                        "--listen",
                        "unix://",
                        "--managed-daemon",
                    ],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
                pid = proc.pid
                self.pidfile.write_text(str(pid))
        return pid

    def serve(self) -> int:
        """The server's own loop: stay while some TUI uses it, then linger a while."""
        linger = float(os.environ.get("FAKE_AGENT_DAEMON_LINGER") or 30)
        last_used = time.monotonic()
        while time.monotonic() - last_used < linger:
            time.sleep(0.2)
            for client in self.clients.glob("*"):
                if client.name.isdigit() and process_alive(int(client.name)):
                    last_used = time.monotonic()
                else:
                    client.unlink(missing_ok=True)
        with contextlib.suppress(OSError, ValueError):
            if int(self.pidfile.read_text()) == os.getpid():
                self.pidfile.unlink()
        return 0


CODEX_ERRORS = {  # what codex 0.169.0 shows for a failed turn (tests/test_real_codex.py)
    "auth": "unexpected status 401 Unauthorized: Incorrect API key provided, url: "
    "http://127.0.0.1/v1/responses",
    "usage": "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), or "
    "try again at 8:49 PM.",
    "server": "We’re currently experiencing high demand, which may cause temporary errors.",
    "rate": "exceeded retry limit, last status: 429 Too Many Requests",
}


# --------------------------------------------------------------------------- terminal


class Key:
    """One key event (a plain class: typing's NamedTuple is 4 ms of each start)."""

    __slots__ = ("kind", "text")

    def __init__(self, kind: str, text: str = "") -> None:
        # text | paste | enter | backspace | esc | ctrl_c | ctrl_d | eof | focus_in | focus_out
        self.kind = kind
        self.text = text


class Keyboard:
    """Turns raw stdin bytes into key events; understands bracketed paste.

    The same parser serves a tty in raw mode and a plain pipe (where lines end
    in ``\\n``), so scripted tests can exercise pastes without a terminal.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = ""
        self.eof = False
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def fill(self, timeout: float | None) -> bool:
        """Read what is available; False on timeout or end of input."""
        if self.eof:
            return False
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # EIO once the terminal is gone
            data = b""
        if not data:
            self.eof = True
            return False
        self.buf += self.decoder.decode(data)
        return True

    def discard_pending(self) -> None:
        self.buf = ""
        while self.fill(0):
            self.buf = ""

    def next(self, timeout: float | None = None) -> Key | None:
        """The next key, or None if nothing arrived within ``timeout``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self.buf:
                key = self.parse()
                if key is not None:
                    return key
                continue  # an ignored sequence was consumed
            if self.eof:
                return Key("eof")
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not self.fill(left) and not self.eof:
                return None

    def parse(self) -> Key | None:
        c = self.buf[0]
        if c == "\x1b":
            return self.parse_escape()
        self.buf = self.buf[1:]
        if c in "\r\n":
            return Key("enter")
        if c in "\x7f\x08":
            return Key("backspace")
        if c == "\x03":
            return Key("ctrl_c")
        if c == "\x04":
            return Key("ctrl_d")
        if c < " " and c != "\t":
            return None  # other control keys mean nothing here
        run = re.match(r"[^\x00-\x08\x0a-\x1f\x7f]*", self.buf)
        text = c + (run.group(0) if run else "")
        self.buf = self.buf[len(text) - 1 :]
        return Key("text", text)

    def parse_escape(self) -> Key | None:
        # A lone ESC is the Escape key only if nothing follows it quickly.
        while len(self.buf) < 2 and self.fill(ESC_WAIT):
            pass
        if len(self.buf) < 2:
            self.buf = ""
            return Key("esc")
        if self.buf[1] == "O" and len(self.buf) >= 3 and self.buf[2] in "AB":
            key, self.buf = self.buf[2], self.buf[3:]  # an arrow in application cursor mode
            return Key("up" if key == "A" else "down")
        if self.buf[1] != "[":
            self.buf = self.buf[2:]  # Alt+key: ignore
            return None
        while not (m := re.match(r"\x1b\[[0-?]*[ -/]*[@-~]", self.buf)):
            if not self.fill(ESC_WAIT):
                self.buf = self.buf[2:]  # truncated sequence: drop it
                return None
        seq, self.buf = m.group(0), self.buf[m.end() :]
        if seq == "\x1b[200~":
            return self.read_paste()
        if seq in ("\x1b[I", "\x1b[O"):  # the terminal gained / lost focus
            return Key("focus_in" if seq == "\x1b[I" else "focus_out")
        if seq in ("\x1b[A", "\x1b[B"):  # Up, Down: move a dialog's selection
            return Key("up" if seq == "\x1b[A" else "down")
        return None  # other keys: not needed by the fake

    def read_paste(self) -> Key:
        end = "\x1b[201~"
        while end not in self.buf and self.fill(5.0):
            pass
        text, _, self.buf = self.buf.partition(end)
        # tmux's paste-buffer turns LF into CR; either way a pasted line break is a newline.
        return Key("paste", text.replace("\r\n", "\n").replace("\r", "\n"))


class Screen:
    """Output side: raw-mode tty (needs CRLF) or plain stream."""

    def __init__(self, interactive: bool) -> None:
        self.interactive = interactive
        self.saved_attrs: list[Any] | None = None

    def start(self) -> None:
        if not self.interactive:
            return
        fd = sys.stdin.fileno()
        self.saved_attrs = termios.tcgetattr(fd)
        # TCSANOW, not tty.setraw's default TCSAFLUSH: keys typed early must survive
        # unless a test asks for them to be dropped.
        tty.setraw(fd, termios.TCSANOW)
        self.write("\x1b[?2004h")

    def restore(self) -> None:
        if self.saved_attrs is None:
            return
        self.write("\x1b[?2004l")
        with contextlib.suppress(OSError, termios.error):
            termios.tcsetattr(sys.stdin.fileno(), termios.TCSANOW, self.saved_attrs)
        self.saved_attrs = None

    def write(self, text: str) -> None:
        if self.interactive:
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except (OSError, ValueError):
            pass  # the terminal went away (SIGHUP); keep going so hooks still fire

    def line(self, text: str = "") -> None:
        self.write(text + "\n")

    def erase_lines(self, count: int) -> None:
        """Remove the last ``count`` lines (cursor on the last one), as TUIs do
        when a spinner or dialog goes away."""
        if self.interactive:
            self.write("\r" + ("\x1b[1A" * (count - 1)) + "\x1b[J")
        else:
            self.write("\n")


# --------------------------------------------------------------------------- the agent


class Cues:
    """What a flavor draws for roost to read (each as its real CLI does, where roost cares)."""

    def __init__(
        self,
        prompt: str = "❯ ",  # the input line; a prompt it took stays on the screen with it
        hint: str | None = None,  # a line above the prompt while it waits for input
        busy: str = "✻ Working… (esc to interrupt)",  # the line while a turn runs
        answer: str = "● ",  # in front of a reply
        after: str | None = None,  # a line after each reply
        ask: str = "Do you want to proceed?\n❯ 1. Yes\n  2. No\nEsc to cancel",  # a dialog
        error: str = "API Error: 401 invalid x-api-key",  # a failed turn's words (``api-error``)
    ) -> None:
        self.prompt = prompt
        self.hint = hint
        self.busy = busy
        self.answer = answer
        self.after = after
        self.ask = ask
        self.error = error


CUES = {
    "claude": Cues(),
    # Codex CLI 0.169: its composer "› ", "• Working (0s • esc to interrupt)" while it works, and
    # "Worked for <1s" under each answer.
    "codex": Cues(
        prompt="› ", busy="• Working (0s • esc to interrupt)", answer="• ", after="  Worked for <1s"
    ),
    # Gemini CLI 0.61: "✦ " before an answer, "(esc to cancel, Ns)" while it works, and
    # "? for shortcuts" above its input box.
    "gemini": Cues(
        prompt=" > ",
        hint="? for shortcuts",
        busy="⠋ Thinking... (esc to cancel, 0s)",
        answer="✦ ",
        ask="Allow execution of [Shell]?\n● 1. Allow once\n  2. Allow for this session\n"
        "  3. No, suggest changes (esc)",
        error='✕ [API Error: {"error":{"code":401,"message":"API key not valid. Please '
        'pass a valid API key.","status":"UNAUTHENTICATED"}}]\nℹ This request '
        "failed. Press F12 for diagnostics.",
    ),
    # Aider 0.86: "Waiting for <model>" while it works, "Tokens: ..." after each answer, and its
    # ">" prompt alone on the last line.
    "aider": Cues(
        prompt="> ",
        busy="░█  Waiting for {model}",
        answer="",
        after="Tokens: 2.4k sent, 5 received. Cost: $0.0061 message, $0.01 session.",
        ask="Run shell command? (Y)es/(N)o [Yes]: ",
        error="litellm.AuthenticationError: AuthenticationError: OpenAIException - "
        "Incorrect API key provided\nThe API provider is not able to "
        "authenticate you. Check your API key.",
    ),
}


_CHOICE = re.compile(r"^(\s*)([❯●›]\s)?(\d\.\s.*)$")


def _choice_rows(dialog: str) -> list[int]:
    """The indexes of a dialog's numbered rows."""
    return [i for i, line in enumerate(dialog.split("\n")) if _CHOICE.match(line)]


def _with_selection(dialog: str, selected: int) -> str:
    """The dialog with its marker on choice `selected`: the numbers stay in their column, the
    marker (its first row's) goes in front of the selected one."""
    lines = dialog.split("\n")
    rows = _choice_rows(dialog)
    marker = next((m.group(2) for i in rows if (m := _CHOICE.match(lines[i])) and m.group(2)), "❯ ")
    column = max(
        len(m.group(1) + (m.group(2) or "")) for i in rows if (m := _CHOICE.match(lines[i]))
    )
    for n, i in enumerate(rows):
        m = _CHOICE.match(lines[i])
        assert m is not None
        lead = marker.rjust(column) if n == selected else " " * column
        lines[i] = lead + m.group(3)
    return "\n".join(lines)


class Exit(Exception):
    """Leave the main loop with this exit code (after any SessionEnd was fired)."""

    def __init__(self, code: int) -> None:
        self.code = code


class Agent:
    def __init__(
        self, opts: Options, store: Store, session: Session, hooks: Hooks, screen: Screen
    ) -> None:
        self.opts = opts
        self.store = store
        self.session = session
        self.hooks = hooks
        self.screen = screen
        self.keys = Keyboard(sys.stdin.fileno())
        self.pending: deque[Key] = deque()  # type-ahead received while busy
        self.input = ""
        self.ctrl_c_armed = False
        self.ending = False
        self.cues = CUES[opts.flavor]
        self.prompt_mark = self.cues.prompt
        self.codex = opts.flavor == "codex"
        self.server: int | None = None  # codex: the pid of the shared app-server it uses
        self.lost_server_at: float | None = None
        self.failed: str | None = None  # codex: this turn's error line
        self.placeholder = ""  # the empty prompt's hint after a failed turn (claude)
        self.blurred_at: float | None = None  # when the terminal lost focus (claude's recap)
        self.recapped = False

    # ---- lifecycle

    def header(self) -> str:
        if self.opts.flavor == "aider":
            return f"fake-aider chat history {self.session.path}"
        return f"fake-{self.opts.flavor} session {self.session.id}"

    def run(self) -> int:
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(sig, self.on_signal)
        if IGNORE_HUP:
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
        self.screen.start()
        try:
            return self.main_loop()
        except Exit as e:
            return e.code
        finally:
            self.store.end(self.session)
            self.screen.restore()

    def main_loop(self) -> int:
        self.screen.line(self.header())
        if isinstance(self.store, AiderStore):
            self.aider_banner()
        self.hooks.fire("SessionStart", self.session, source=self.session.source)
        delay = float(os.environ.get("FAKE_AGENT_START_DELAY") or 0)
        if delay > 0:
            time.sleep(delay)
        if os.environ.get("FAKE_AGENT_DROP_EARLY_INPUT"):
            self.drop_early_input()
        self.show_prompt()
        if self.opts.prompt:
            self.input = self.opts.prompt
            self.screen.write(self.input)
            self.submit()
            if self.opts.flavor == "gemini" and self.opts.prompt_interactive is None:
                return 0  # gemini's positional prompt is one-shot
        while True:
            if self.server is None:
                key = self.next_key(self.recap_wait())
                if key is None and self.recap_wait() == 0:
                    self.recap()
                self.handle_key(key)
                continue
            key = self.next_key(0.3)
            self.watch_server()
            self.handle_key(key)

    def watch_server(self) -> None:
        """Codex on a shared app-server: once it is gone, say so (for good: the real one never
        reconnects to a new one)."""
        if self.server is None or self.lost_server_at is not None or process_alive(self.server):
            return
        self.lost_server_at = time.monotonic()
        self.screen.line()
        self.screen.line("◦ Reconnecting to server… (0s)")
        self.show_prompt()

    def slash_command(self, command: str) -> None:
        """Claude Code's commands: their effect only (/clear: a new session; /exit: the end;
        /compact: a PreCompact, and with this little to compact, nothing more)."""
        if command == "/exit":
            self.end("exit", 0)
        elif command == "/clear":
            self.clear()
        elif command.split()[0] == "/compact":
            self.hooks.fire(
                "PreCompact",
                self.session,
                trigger="manual",
                custom_instructions=command[len("/compact") :].strip(),
            )
            self.screen.line("  ⎿  Not enough messages to compact.")
        else:
            self.screen.line(f"  ⎿  fake-claude has no command {command.split()[0]}")

    def fail(self, error: str, message: str, hint: str) -> None:
        """A turn the API refused (after the retries): the words, StopFailure, the hint."""
        self.screen.line(f"● {message}")
        self.hooks.fire("StopFailure", self.session, error=error, last_assistant_message=message)
        self.placeholder = hint

    def recap_wait(self) -> float | None:
        """Seconds until an idle, unfocused claude writes its recap; None when it will not."""
        if self.opts.flavor != "claude" or self.blurred_at is None or self.recapped or self.input:
            return None
        return max(0.0, self.blurred_at + RECAP_AFTER - time.monotonic())

    def recap(self) -> None:
        """Claude Code's "※ recap" of an idle session, written by a subagent: a SubagentStop
        outside any turn (no UserPromptSubmit before it, no Stop after it)."""
        self.recapped = True
        text = "recap: you asked for echoes; next, send another message"
        self.screen.write(f"\r\x1b[2K※ {text}\n")
        self.show_prompt()  # the prompt stays drawn under it, as Claude Code's box does
        agent_id = os.urandom(9).hex()[:17]
        subagents = self.session.path.with_suffix("") / "subagents"
        self.hooks.fire(
            "SubagentStop",
            self.session,
            agent_id=agent_id,
            agent_type="",
            agent_transcript_path=str(subagents / f"agent-{agent_id}.jsonl"),
            stop_hook_active=False,
            last_assistant_message=text,
        )

    def aider_banner(self) -> None:
        for f in self.opts.positionals:
            self.screen.line(f"Added {f} to the chat.")
        if self.opts.restore_chat_history and self.session.source == "resume":
            self.screen.line(f"Restored {AiderStore.count_messages(self.session.path)} messages")

    def drop_early_input(self) -> None:
        if self.screen.interactive:
            termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)
        self.keys.discard_pending()

    def end(self, reason: str, code: int) -> None:
        self.ending = True
        self.hooks.fire("SessionEnd", self.session, reason=reason)
        if self.codex and self.session.path.exists():
            self.screen.line("To continue this session, run:")
            self.screen.line(f"  codex resume {self.session.id}")
        raise Exit(code)

    def on_signal(self, signum: int, _frame: Any) -> None:
        """SIGTERM/SIGHUP (tmux kill-pane) / SIGINT: end the session like the real CLI."""
        if self.ending:
            return
        self.ending = True
        self.hooks.fire("SessionEnd", self.session, reason="other")
        self.store.end(self.session)
        self.screen.restore()
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os._exit(128 + signum)

    # ---- input line

    def next_key(self, timeout: float | None = None) -> Key | None:
        return self.pending.popleft() if self.pending else self.keys.next(timeout)

    def show_prompt(self) -> None:
        if self.cues.hint:
            self.screen.line(self.cues.hint)
        self.screen.write(self.prompt_mark + self.input)
        if self.placeholder and not self.input and self.screen.interactive:
            # dim hint, cursor back at the start of the input
            self.screen.write(f"\x1b[2m{self.placeholder}\x1b[0m\x1b[{len(self.placeholder)}D")

    def handle_key(self, key: Key | None) -> None:
        if key is None:
            return
        if key.kind in ("focus_in", "focus_out"):
            self.blurred_at = time.monotonic() if key.kind == "focus_out" else None
            self.recapped = False
            return
        if key.kind != "ctrl_c":
            self.ctrl_c_armed = False
        if key.kind in ("text", "paste"):
            if self.placeholder and not self.input:
                self.screen.write("\x1b[K")  # the hint goes as soon as something is typed
            self.input += key.text  # newlines inside a paste stay in the input
            self.screen.write(key.text)
        elif key.kind == "backspace" and self.input:
            gone, self.input = self.input[-1], self.input[:-1]
            if gone == "\n":
                self.join_previous_line()
            else:
                self.screen.write("\b \b")
        elif key.kind == "enter":
            if self.input.strip():
                self.submit()
        elif key.kind == "ctrl_c":
            self.on_ctrl_c()
        elif key.kind == "ctrl_d" and not self.input:
            self.screen.line()
            self.end("other", 0)
        elif key.kind == "eof":
            if IGNORE_HUP:  # the terminal is gone: live on without one, as an orphan does
                while True:
                    time.sleep(3600)
            if self.input.strip():
                self.submit()
            self.screen.line()
            self.end("other", 0)

    def join_previous_line(self) -> None:
        """Backspace over a pasted newline: clear this line, redraw the previous one."""
        if not self.screen.interactive:
            return
        _, newline, last = self.input.rpartition("\n")
        prefix = "" if newline else self.prompt_mark
        self.screen.write(f"\r\x1b[2K\x1b[1A\r\x1b[2K{prefix}{last}")

    def on_ctrl_c(self) -> None:
        if self.ctrl_c_armed:
            self.screen.line()
            self.end("other", 0)
        self.ctrl_c_armed = True
        self.input = ""
        self.screen.line()
        self.screen.line("Press Ctrl-C again to exit")
        self.show_prompt()

    # ---- one turn

    def submit(self) -> None:
        if self.lost_server_at is not None:  # codex without its server: the text stays typed
            waited = int(time.monotonic() - self.lost_server_at)
            self.screen.line()
            self.screen.line(f"• Reconnecting to server… ({waited}s)")
            self.show_prompt()
            return
        text, self.input = self.input, ""
        self.placeholder = ""
        self.screen.line()
        prompt = text.strip()
        # Disk first, then hooks: a hook may read the transcript it is pointed at. (Codex and
        # Gemini record no slash command: /quit alone never writes a rollout.)
        if not (self.opts.flavor in ("codex", "gemini") and prompt.startswith("/")):
            self.store.record(self.session, "user", text)
        if self.opts.flavor == "claude" and SLASH_COMMAND.fullmatch(prompt):
            self.slash_command(prompt)  # Claude Code fires no prompt hooks for its commands
        elif self.opts.flavor == "claude" and prompt in FAILURES:
            self.hooks.fire("UserPromptSubmit", self.session, prompt=text)
            self.fail(*FAILURES[prompt])
        elif self.opts.flavor == "claude" and (prompt == "fail limit" or limit_holds()):
            # A subscription's usage limit: Claude Code 2.1.332's "You've hit your <limit> ·
            # resets <time> (<zone>)" (FAKE_AGENT_LIMIT_WORDS), a rate_limit StopFailure.
            self.hooks.fire("UserPromptSubmit", self.session, prompt=text)
            words = os.environ.get("FAKE_AGENT_LIMIT_WORDS") or "You've hit your limit"
            self.fail("rate_limit", words, "Resend your message to try again")
        elif prompt == "api-error":  # the API refused the turn: the CLI says so, no answer
            self.hooks.fire("UserPromptSubmit", self.session, prompt=text)
            self.screen.line(self.cues.error)
        else:
            self.hooks.fire("UserPromptSubmit", self.session, prompt=text)
            self.failed = None
            reply = self.respond(prompt, text)
            if self.failed is not None:
                self.screen.line(f"■ {self.failed}")  # codex: the turn failed, nothing recorded
                self.show_prompt()
                return
            self.store.record(self.session, "assistant", reply)
            self.screen.line(f"{self.cues.answer}{reply}")
            if self.cues.after:
                self.screen.line(self.cues.after)
            self.hooks.fire(
                "Stop", self.session, last_assistant_message=reply, stop_hook_active=False
            )
            self.hooks.notify_turn(self.session, text, reply)
        if self.blurred_at is not None:  # a turn ended while away: the recap waits from here
            self.blurred_at, self.recapped = time.monotonic(), False
        self.show_prompt()

    def respond(self, prompt: str, text: str) -> str:
        words = prompt.split()
        if prompt == "/exit" or (self.codex and prompt == "/quit"):
            self.end("exit", 0)
        if self.codex and len(words) == 2 and words[0] == "fail" and words[1] in CODEX_ERRORS:
            self.failed = CODEX_ERRORS[words[1]]
            return ""
        if len(words) == 2 and words[0] == "crash" and words[1].lstrip("-").isdigit():
            self.screen.restore()
            os._exit(int(words[1]) & 0xFF)  # no SessionEnd: a crash says goodbye to no one
        if len(words) == 2 and words[0] == "work" and (seconds := as_seconds(words[1])) is not None:
            return self.work(seconds)
        if prompt == "ask":
            return self.ask()
        if prompt == "orphan":
            return self.orphan()
        if prompt == "/clear":
            return self.clear()
        return self.echo(text)

    def work(self, seconds: float) -> str:
        """Busy: the spinner line stays on screen; Esc/Ctrl-C interrupts; other keys queue."""
        self.screen.write(self.cues.busy.format(model=self.opts.model or "gpt-4o"))
        deadline = time.monotonic() + seconds
        result = "done working"
        while (left := deadline - time.monotonic()) > 0:
            if self.keys.eof:
                time.sleep(left)
                break
            key = self.keys.next(left)
            if key is None or key.kind == "eof":
                continue
            if key.kind in ("esc", "ctrl_c"):
                result = "interrupted"
                break
            self.pending.append(key)
        self.screen.erase_lines(1)
        return result

    def ask(self) -> str:
        if self.opts.skip_permissions or self.opts.permission_mode == "bypassPermissions":
            return "approved"
        self.screen.write(self.cues.ask)
        self.hooks.fire(
            "Notification",
            self.session,
            notification_type="permission_prompt",
            message="Claude needs your permission to use Bash",
        )
        answer = None
        selected = 0  # as the real CLIs: Up and Down move the marker, Enter takes its choice
        while answer is None:
            key = self.next_key()
            if key is None:
                continue
            if key.kind in ("up", "down") and _choice_rows(self.cues.ask):
                rows = len(_choice_rows(self.cues.ask))
                moved = max(0, min(rows - 1, selected + (1 if key.kind == "down" else -1)))
                if moved != selected:
                    selected = moved
                    self.screen.erase_lines(self.cues.ask.count("\n") + 1)
                    self.screen.write(_with_selection(self.cues.ask, selected))
                continue
            if key.kind == "enter" and selected > 0:
                answer = "denied"
            elif (key.kind == "text" and key.text[:1] in "1y") or key.kind == "enter":
                answer = "approved"
            elif (key.kind == "text" and key.text[:1] in "2n") or key.kind in (
                "esc",
                "ctrl_c",
                "eof",
            ):
                answer = "denied"
            if key.kind == "eof":
                self.pending.append(key)  # still exit afterwards
        self.screen.erase_lines(self.cues.ask.count("\n") + 1)
        return answer

    def orphan(self) -> str:
        """Leave processes behind that a plain kill of the pane's tree would miss."""
        import subprocess

        env = {**os.environ, "FAKE_AGENT_ORPHAN": "1"}
        # 1. setsid + double fork: the middle process exits at once, so the sleeper is
        #    reparented to init (or the nearest subreaper) and has its own session.
        helper = (
            "import subprocess, sys\n"
            "p = subprocess.Popen(['sleep', '1000'], start_new_session=True,\n"
            "    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
            "print(p.pid)\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", helper], env=env, capture_output=True, text=True, check=True
        )
        detached = int(out.stdout.strip())
        # 2. nohup: our child in our session and process group, but deaf to the SIGHUP tmux
        #    sends on kill-pane.  (nohup execs sleep, so the pid is the sleeper's.)
        nohup = subprocess.Popen(
            ["nohup", "sleep", "1000"], env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        pids = [detached, nohup.pid]
        if path := os.environ.get("FAKE_AGENT_ORPHAN_FILE"):
            with open(path, "a", encoding="utf-8") as f:
                f.write("".join(f"{pid}\n" for pid in pids))
        return "orphaned " + " ".join(map(str, pids))

    def clear(self) -> str:
        if self.session.id is None:  # aider: /clear only forgets the in-memory chat
            return "cleared"
        self.hooks.fire("SessionEnd", self.session, reason="clear")
        self.store.end(self.session)
        self.session = self.store.new_session("clear")
        self.store.begin(self.session)
        self.screen.line(self.header())
        self.hooks.fire("SessionStart", self.session, source="clear")
        return "cleared"

    def echo(self, text: str) -> str:
        """Short single-line text echoes verbatim; anything longer gets a fingerprint so a
        test can check on screen (or in the Stop hook) that it arrived intact."""
        if received := os.environ.get("FAKE_AGENT_RECEIVED_DIR"):
            save_received(Path(received), text)
        reply = "echo: " + text[:80].replace("\n", "⏎")
        if len(text) > 80 or "\n" in text:
            digest = sha256_hex(text)[:12]
            reply += f" [{len(text)} chars, {text.count(chr(10)) + 1} lines, sha256 {digest}]"
        return reply


def as_seconds(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value >= 0 else None


def save_received(directory: Path, text: str) -> Path:
    """<dir>/<n>.txt with n the next free number, so restarts never overwrite."""
    directory.mkdir(parents=True, exist_ok=True)
    n = 1
    while True:
        path = directory / f"{n}.txt"
        try:
            with path.open("x", encoding="utf-8", newline="") as f:
                f.write(text)
            return path
        except FileExistsError:
            n += 1


# --------------------------------------------------------------------------- entry point


def log_start(flavor: str, argv: list[str], session_id: str | None, error: str | None) -> None:
    path = os.environ.get("FAKE_AGENT_LOG")
    if not path:
        return
    extra_logged = set(filter(None, os.environ.get("FAKE_AGENT_LOG_ENV", "").split(",")))
    entry = {
        "flavor": flavor,
        "argv": argv,
        "cwd": os.getcwd(),
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "session_id": session_id,
        "error": error,
        "tty": sys.stdin.isatty(),
        "time": now_iso(),
        "env": {
            k: v
            for k, v in os.environ.items()
            if k.startswith(LOGGED_ENV_PREFIXES) or k in extra_logged
        },
    }
    append_jsonl(Path(path), entry)


def mcp_endpoint(opts: Options) -> None:
    """As the real CLIs do at start: connect to roost's shared MCP endpoint, when wired to it,
    and list its tools (with the launch token as bearer token), in the background."""
    url = None
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        if opts.flavor == "claude" and opts.mcp_config:
            url = json.loads(Path(opts.mcp_config).read_text())["mcpServers"]["roost"].get("url")
        elif opts.flavor == "codex":
            prefix = "mcp_servers.roost.url="
            found = [c[len(prefix) :] for c in opts.config if c.startswith(prefix)]
            url = json.loads(found[0]) if found else None
        elif opts.flavor == "gemini":
            settings = Path(os.environ["GEMINI_CLI_SYSTEM_SETTINGS_PATH"]).read_text()
            url = json.loads(settings)["mcpServers"]["roost"].get("httpUrl")
    token = os.environ.get("ROOST_LAUNCH_TOKEN")
    if not url or not token:
        return

    def connect() -> None:
        import urllib.request

        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
        request = urllib.request.Request(
            url,
            data=body,
            method="POST",
            headers={
                "Authorization": f"Bearer {token}",
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            },
        )
        with contextlib.suppress(OSError), urllib.request.urlopen(request, timeout=30):
            pass

    threading.Thread(target=connect, daemon=True).start()


def main(argv: list[str]) -> int:
    flavor, rest = "claude", argv
    try:
        flavor, rest = split_flavor(argv)
        if rest == ["--version"]:  # not logged as a start: it starts nothing
            print(os.environ.get("FAKE_AGENT_VERSION") or VERSIONS[flavor])
            return 0
        if flavor == "codex" and rest[:1] == ["app-server"] and "--managed-daemon" in rest:
            return AppServer(codex_home()).serve()
        opts = parse_args(flavor, rest)
        if flavor == "claude" and opts.skip_permissions and os.environ.get("FAKE_AGENT_AS_ROOT"):
            raise Fail(
                "--dangerously-skip-permissions cannot be used with root/sudo privileges "
                "for security reasons"
            )
        if flavor == "gemini":
            hooks: Hooks = GeminiHooks.from_environment()
        else:
            hooks = Hooks.from_options(opts) if flavor in ("claude", "codex") else Hooks({})
        cwd = os.getcwd()
        store = STORES[flavor](opts, cwd)
        session = store.open()
    except Fail as e:
        log_start(flavor, rest, None, e.message)
        print(e.message, file=sys.stderr)
        return e.code
    log_start(flavor, rest, session.id, None)
    if code := os.environ.get("FAKE_AGENT_EXIT_ON_START"):
        return int(code)
    if os.environ.get("FAKE_AGENT_AUTH_ERROR"):
        print(
            'API Error: 401 {"type":"error","error":{"type":"authentication_error",'
            f'"message":"invalid x-api-key"}},"request_id":"req_{os.urandom(12).hex()}"}}',
            flush=True,
        )
        return 1
    mcp_endpoint(opts)
    store.begin(session)
    agent = Agent(opts, store, session, hooks, Screen(sys.stdin.isatty()))
    if flavor == "codex" and not opts.no_daemon:
        agent.server = AppServer(codex_home()).ensure()
    return agent.run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
