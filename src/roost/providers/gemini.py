"""Gemini CLI: roost chooses the session id (`--session-id`), wakes with `gemini -r <id>`.

Checked on 0.61.0: a session lives in
`~/.gemini/tmp/<slug>/chats/session-<YYYY-MM-DDTHH-MM>-<id[:8]>.jsonl`, where the slug is the
cwd's entry in `~/.gemini/projects.json` (`$GEMINI_CLI_HOME` replaces `~`); line 1 holds
`sessionId`, `projectHash` (sha256 of the cwd) and `startTime`, each later line a message or a
`$set` of fields. The file appears once the CLI has started, and the CLI deletes it on exit when
it holds no message yet. `-r <id>` continues the same file; `--session-id <id>` of an existing
session fails. An id roost chooses is the exact link between an agent and its conversation:
several gemini agents in one cwd never share or swap one.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

from roost.core.model import Agent
from roost.providers import hooks, mcpwire
from roost.providers.base import NotResumable, Provider, user_home
from roost.providers.traits import GEMINI
from roost.system import untrusted

# Gemini CLI has no option that adds an MCP server for one process; its system settings file
# can be moved by this variable, and its `mcpServers` are merged with the user's (0.61.0).
SYSTEM_SETTINGS = "GEMINI_CLI_SYSTEM_SETTINGS_PATH"
SYSTEM_SETTINGS_FILE = "/etc/gemini-cli/settings.json"
MCP_SETTINGS = "gemini-system-settings.json"


def gemini_home(environ: Mapping[str, str]) -> Path:
    configured = environ.get("GEMINI_CLI_HOME")
    return (Path(configured) if configured else user_home(environ)) / ".gemini"


def project_slug(cwd: str, environ: Mapping[str, str]) -> str | None:
    """The folder name Gemini CLI gave a cwd (its projects.json), or None before it has."""
    try:
        projects = json.loads(untrusted.read(gemini_home(environ) / "projects.json"))
        slug = projects["projects"][cwd]
    except (OSError, ValueError, RecursionError, KeyError, TypeError):
        return None
    return slug if isinstance(slug, str) and slug and "/" not in slug and slug != ".." else None


def first_line(path: Path) -> dict[str, object]:
    try:
        with untrusted.open_file(path) as fh:
            head = json.loads(fh.readline(untrusted.LINE_LIMIT))
    except (OSError, ValueError, RecursionError):
        return {}
    return head if isinstance(head, dict) else {}


def session_file(cwd: str, session_id: str, environ: Mapping[str, str]) -> Path | None:
    """The chat file of session `session_id` in `cwd`, or None while there is none. Its first
    line names the session; a file of the id's name whose first line names none is taken too
    (0.61.0, several starting in one cwd: one may begin its file with the first message,
    without that line)."""
    slug = project_slug(cwd, environ)
    if slug is None:
        return None
    chats = gemini_home(environ) / "tmp" / slug / "chats"
    headless = None
    for path in sorted(chats.glob(f"session-*-{session_id[:8]}.jsonl")):
        named = first_line(path).get("sessionId")
        if named == session_id:
            return path
        if named is None and headless is None:
            headless = path
    return headless


def restore_header(path: Path, session_id: str, cwd: str) -> None:
    """Put back the line that names the session at the top of a chat file that lost it.

    Gemini CLI 0.61.0, agents started one after another in one cwd: a starting gemini deletes
    the other sessions' files that hold no message yet, and the owner then writes its first
    message into a new file without that line; `gemini -r <id>` then fails ("Invalid session
    identifier"). Called only while no gemini runs for the agent (before a resume); the file is
    replaced atomically and keeps every line it had."""
    data = untrusted.read(path)
    if len(data) >= untrusted.READ_LIMIT:
        return  # a chat file this size is no session roost should rewrite
    try:
        first = json.loads(data.split(b"\n", 1)[0])
    except (ValueError, RecursionError):
        first = {}
    started = first.get("timestamp") if isinstance(first, dict) else None
    header = {
        "sessionId": session_id,
        "projectHash": hashlib.sha256(cwd.encode()).hexdigest(),
        "startTime": started,
        "lastUpdated": started,
        "kind": "main",
    }
    spare = path.with_name(f".{path.name}.roost-{os.getpid()}")
    spare.write_bytes(json.dumps(header, separators=(",", ":")).encode() + b"\n" + data)
    os.chmod(spare, path.stat().st_mode & 0o777)
    os.replace(spare, path)


def system_settings(environ: Mapping[str, str]) -> dict[str, object]:
    """The system settings Gemini CLI would read (`$GEMINI_CLI_SYSTEM_SETTINGS_PATH`, else
    /etc/gemini-cli/settings.json), or {} when there are none (or they are not a JSON object:
    the CLI itself would stop on them)."""
    path = Path(environ.get(SYSTEM_SETTINGS) or SYSTEM_SETTINGS_FILE)
    try:
        found = json.loads(untrusted.read(path))
    except (OSError, ValueError, RecursionError):
        return {}
    return found if isinstance(found, dict) else {}


def private_path(path: Path) -> bool:
    """Whether no folder from `path` up to / may be written by group or others: Gemini CLI
    reads a system settings file only there (0.61.0)."""
    try:
        return all(
            not (folder.stat().st_mode & 0o022)
            for folder in (path.resolve(), *path.resolve().parents)
        )
    except OSError:
        return False


def _text(content: object) -> str:
    """A message's words: a string, or the text of its parts (a list of {"text": ...})."""
    parts = content if isinstance(content, list) else [{"text": content}]
    return "".join(str(p.get("text") or "") for p in parts if isinstance(p, dict))


def _messages(path: Path, offset: int = 0) -> list[dict[str, object]]:
    """The messages of a chat file past byte `offset` (0: its last READ_LIMIT bytes, where its
    newest messages are), in order. 0.61.0 appends a message again (same `id`) each time it
    changes (its tokens, its tool calls): the last version counts, at the place of the first."""
    try:
        if offset == 0:
            data = untrusted.tail(path)
        else:
            with untrusted.open_file(path) as fh:
                fh.seek(offset)
                data = fh.read(untrusted.READ_LIMIT)
    except OSError:
        return []
    found: dict[object, dict[str, object]] = {}
    for n, entry in enumerate(untrusted.entries(data)):
        if isinstance(entry, dict) and isinstance(entry.get("type"), str):
            found[entry.get("id") or f"line {n}"] = entry
    return list(found.values())


def user_prompts(path: Path, offset: int) -> list[str]:
    """The user's messages written to a chat file after byte `offset`."""
    return [_text(m.get("content")) for m in _messages(path, offset) if m.get("type") == "user"]


def chat_messages(path: Path) -> list[tuple[str, str]]:
    """A chat file's `user` and `gemini` messages, in order, as ("user" | "agent", words)."""
    roles = {"user": "user", "gemini": "agent"}
    return [
        (roles[str(m["type"])], _text(m.get("content")))
        for m in _messages(path)
        if m.get("type") in roles
    ]


class Gemini(Provider):
    traits = GEMINI
    default_bin = "gemini"
    env_var = "ROOST_GEMINI_BIN"
    replies_in_record = True
    dangerous_flags = ("--yolo",)

    def start_argv(self, agent: Agent, exe: str, prompt: str | None, paths_home: Path) -> list[str]:
        assert agent.provider_session_id
        return [
            exe,
            "--session-id",
            agent.provider_session_id,
            *self._common(agent),
            *self._prompt(prompt),
        ]

    def prompt_argv(self, prompt: str) -> list[str] | None:
        """The option and its value in one argument: `-i --yolo` would be two options, but
        yargs takes everything after `--prompt-interactive=` as the value, newlines too
        (checked on 0.61.0). Not a positional: those can name a subcommand (`mcp`)."""
        return [f"--prompt-interactive={prompt}"]

    def resume_argv(
        self, agent: Agent, exe: str, environ: Mapping[str, str], paths_home: Path
    ) -> list[str] | None:
        sid = agent.provider_session_id
        if not sid:  # an agent started before roost chose gemini's ids
            raise NotResumable(
                f"{agent.name}: gemini's session id is not known; `roost wake {agent.name} "
                "--fresh` starts a new conversation",
                code=7,
            )
        found = session_file(agent.cwd, sid, environ)
        if found is not None:
            if first_line(found).get("sessionId") is None:
                restore_header(found, sid, agent.cwd)
            return [exe, "-r", sid, *self._common(agent)]
        if agent.conversation_seen:
            raise NotResumable(
                f"unresumable: {agent.name}'s conversation {sid} is gone (no chat file for it "
                f"under {gemini_home(environ) / 'tmp'}). `roost wake {agent.name} --fresh` "
                "starts a new conversation",
                code=7,
            )
        # No message was ever taken, so there is nothing to lose: Gemini CLI deletes a session
        # file that holds none when it exits. Nothing to resume: a start under its id.
        return None

    def conversation_size(
        self, agent: Agent, environ: Mapping[str, str], paths_home: Path
    ) -> int | None:
        sid = agent.provider_session_id
        if not sid:
            return None
        path = session_file(agent.cwd, sid, environ)
        try:
            return path.stat().st_size if path is not None else 0
        except OSError:
            return 0

    def prompts_after(
        self, agent: Agent, environ: Mapping[str, str], paths_home: Path, offset: int
    ) -> list[str]:
        sid = agent.provider_session_id
        path = session_file(agent.cwd, sid, environ) if sid else None
        return user_prompts(path, offset) if path is not None else []

    def messages(
        self, agent: Agent, environ: Mapping[str, str], paths_home: Path
    ) -> list[tuple[str, str]] | None:
        sid = agent.provider_session_id
        path = session_file(agent.cwd, sid, environ) if sid else None
        return chat_messages(path) if path is not None else []

    def usage_file(self, agent: Agent, environ: Mapping[str, str]) -> Path | None:
        sid = agent.provider_session_id
        return session_file(agent.cwd, sid, environ) if sid else None

    def record_file(
        self, agent: Agent, session_id: str | None, environ: Mapping[str, str], paths_home: Path
    ) -> Path | None:
        return session_file(agent.cwd, session_id, environ) if session_id else None

    def conversation_missing(
        self, agent: Agent, environ: Mapping[str, str], paths_home: Path
    ) -> str | None:
        sid = agent.provider_session_id
        if not sid or not agent.conversation_seen or session_file(agent.cwd, sid, environ):
            return None
        return f"gemini's chat file of session {sid} is not under {gemini_home(environ) / 'tmp'}"

    def environment_problem(self, environ: Mapping[str, str]) -> tuple[str, str] | None:
        # 0.61.0's isHeadlessMode: CI or GITHUB_ACTIONS "true" means headless, even in a terminal
        if environ.get("GEMINI_CLI_INTEGRATION_TEST") == "true":
            return None
        set_to_true = [key for key in ("CI", "GITHUB_ACTIONS") if environ.get(key) == "true"]
        if not set_to_true:
            return None
        return (
            f"{' and '.join(f'{key}=true' for key in set_to_true)} in roost's environment "
            "makes Gemini CLI run headless: its agents would exit at once ('No input "
            "provided via stdin')",
            "start roost without them: env -u CI -u GITHUB_ACTIONS roost …",
        )

    def launch_environment(
        self, agent: Agent, environ: Mapping[str, str], paths_home: Path
    ) -> dict[str, str]:
        """`roost mcp` (unless switched off): a system settings file of roost's own for this
        process, holding the system settings the CLI would have read (so an administrator's
        stay in force) plus the server `roost`, trusted (its tools run without a prompt, as
        claude's allow rule). System settings' `mcpServers` are merged with the user's and the
        project's, so the user's own servers stay; no file of the user's is written. Not under
        a folder others may write (a roost home in /tmp): the CLI would skip the file with a
        security warning on its screen.

        The variable reaches whatever the agent starts: an agent started from inside a gemini
        agent (its shell, its `roost mcp`) must never get that agent's file, which names it as
        the caller. So the `roost` entry of an inherited file is always replaced or dropped,
        and so are its hooks. The file also holds roost's hooks (with or without `roost mcp`):
        cli_hook.sh reports the agent's turn ends to the service (providers/hooks.py)."""
        if not private_path(paths_home):
            inherited = environ.get(SYSTEM_SETTINGS, "")
            return {SYSTEM_SETTINGS: ""} if Path(inherited).name == MCP_SETTINGS else {}
        settings = system_settings(environ)
        found = settings.get("mcpServers")
        servers: dict[str, object] = dict(found) if isinstance(found, dict) else {}
        servers.pop(mcpwire.SERVER, None)
        if mcpwire.configured(str(paths_home), agent.id) is not None:
            entry = gemini_entry(mcpwire.entry(str(paths_home), agent.id))
            servers[mcpwire.SERVER] = {**entry, "trust": True}
        settings["mcpServers"] = servers
        settings["hooks"] = with_roost_hooks(
            settings.get("hooks"), hooks.gemini_hooks(str(paths_home), agent.id)
        )
        return {
            SYSTEM_SETTINGS: mcpwire.write_private(
                str(paths_home), agent.id, MCP_SETTINGS, settings
            )
        }


def with_roost_hooks(found: object, ours: dict[str, list[object]]) -> dict[str, object]:
    """The system settings' `hooks` plus roost's (cli_hook.sh, which reports the agent's turns
    to the service): an administrator's hooks stay, and those of an inherited roost file (an
    agent started from inside a gemini agent, whose hooks would write the other agent's log) go."""
    kept: dict[str, object] = {}
    for event, groups in (found if isinstance(found, dict) else {}).items():
        if isinstance(groups, list):
            groups = [g for g in groups if hooks.CLI_HOOK_SH not in json.dumps(g)]
        kept[event] = groups
    for event, groups in ours.items():
        before = kept.get(event)
        kept[event] = [*(before if isinstance(before, list) else []), *groups]
    return kept


def gemini_entry(entry: dict[str, object]) -> dict[str, object]:
    """A server entry in Gemini's words: `httpUrl` for streamable HTTP (its `url` means SSE),
    no `type` (0.61.0)."""
    if "url" in entry:
        return {"httpUrl": entry["url"], "headers": entry.get("headers", {})}
    return {k: v for k, v in entry.items() if k != "type"}
