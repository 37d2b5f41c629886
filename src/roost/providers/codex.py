"""Codex CLI (verified against 0.169.0): the session id cannot be chosen; roost learns it from the
agent's own process, never from the cwd it may share with other codex agents.

What roost relies on:
- A rollout file, `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<id>.jsonl`, is written
  at a conversation's first message (line 1: `{"type": "session_meta", "payload": {"id", "cwd",
  "timestamp", ...}}`), and the codex process keeps it open for as long as it runs (`codex resume
  <id>` opens it again at start). So the rollout that the agent's process tree has open is its
  conversation's, whatever other codex agents run in the same cwd, started in any order. After
  `/new` it holds the old and the new one open: the newest is the current one.
- On a clean exit codex prints `To continue this session, run:` and `codex resume <id>`, which
  stays on the agent's dead pane: the id of an agent that ended before roost looked at it.
- By default the TUI starts a shared `codex app-server --managed-daemon` (its own process group,
  one per CODEX_HOME, it outlives the TUI; every codex TUI on that CODEX_HOME talks to it, and
  shows "Reconnecting to server…" forever once it is gone). It inherits the agent's environment,
  so killing the agent's tagged processes would kill every other codex's server. roost starts
  codex with `--no-daemon` (accepted by `codex resume` too): the agent then runs its server in
  its own process and has no shared helper to take down, nor a ~400 MB copy of codex to make in
  `$CODEX_HOME/packages`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Set
from pathlib import Path

from roost.core.lineage import TOKEN_ENV
from roost.core.model import Agent
from roost.providers import hooks, mcpwire
from roost.providers.base import NotResumable, Provider, Sighting, user_home
from roost.providers.traits import CODEX
from roost.system import untrusted

NO_DAEMON = "--no-daemon"
ROLLOUT = re.compile(r"rollout-.+\.jsonl")
# What codex prints on a clean exit (the last one on the screen is this launch's).
RESUME_HINT = re.compile(
    r"codex resume ([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
    r"[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\b"
)


def sessions_root(environ: Mapping[str, str]) -> Path:
    return codex_folder(environ) / "sessions"


def codex_folder(environ: Mapping[str, str]) -> Path:
    codex_home = environ.get("CODEX_HOME")
    return Path(codex_home) if codex_home else user_home(environ) / ".codex"


def user_notify(environ: Mapping[str, str]) -> list[str] | None:
    """The `notify` program of the user's own config.toml, when it names one roost's hook can
    run after its own (cli_hook.sh gets it one word per line: a word with a newline cannot be
    passed on), else None. A broken config is codex's to report, not roost's."""
    import tomllib

    try:  # codex's file: bounded, and a FIFO there blocks nobody
        raw = untrusted.read(codex_folder(environ) / "config.toml", 1 << 20)
        found = tomllib.loads(raw.decode("utf-8")).get("notify")
    except (OSError, ValueError):
        return None
    if not isinstance(found, list) or not found:
        return None
    if not all(isinstance(w, str) and w and "\n" not in w for w in found):
        return None
    return found


def read_session_meta(path: Path) -> dict[str, object] | None:
    """The first line of a rollout file: {"type": "session_meta", "payload": {"id", "cwd", ...}}
    (older Codex versions wrote the fields at the top level)."""
    try:
        with untrusted.open_file(path) as fh:
            first = json.loads(fh.readline(untrusted.LINE_LIMIT) or "null")
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(first, dict):
        return None
    meta = first.get("payload") if first.get("type") == "session_meta" else first
    return meta if isinstance(meta, dict) and meta.get("id") else None


def open_rollout_ids(open_files: tuple[str, ...]) -> list[str]:
    """The session ids of the rollout files among a process tree's open files, newest first."""
    found: dict[str, str] = {}
    for name in open_files:
        path = Path(name)
        if not ROLLOUT.fullmatch(path.name):
            continue
        meta = read_session_meta(path)
        if meta is not None:
            found[str(meta["id"])] = str(meta.get("timestamp") or path.name)
    return sorted(found, key=lambda sid: found[sid], reverse=True)


def resume_hint(screen: str) -> str | None:
    """The id in the last `codex resume <id>` that codex printed on its way out."""
    ids = RESUME_HINT.findall(screen)
    return ids[-1].lower() if ids else None


def fork_args(session_id: str, cwd: str) -> list[str]:
    """The words after the executable that start a fork of `session_id` in `cwd` (checked on
    0.169.0): a new session whose rollout names the original (`forked_from_id`) instead of
    copying it, and the original's rollout is not written. `--cd`: a fork in another folder (its
    own worktree) otherwise opens with a prompt to pick the session's folder or the current one.
    The rest of a start's argv (`--no-daemon`, roost's MCP server, the user's args) follows."""
    return ["fork", session_id, "--cd", cwd]


def rollout_file(environ: Mapping[str, str], session_id: str) -> Path | None:
    """The rollout of session `session_id` (the newest, should there be several)."""
    found = sorted(sessions_root(environ).glob(f"*/*/*/rollout-*-{session_id}.jsonl"))
    return found[-1] if found else None


ROLES = {"UserMessage": "user", "AgentMessage": "agent"}


def rollout_messages(path: Path) -> list[tuple[str, str]]:
    """The messages of a rollout, from its `event_msg` lines of type `item_completed` (checked
    on 0.169.0): an item `UserMessage` is a prompt as the user gave it, an `AgentMessage` what
    codex said; their `content` is a list of text parts. Its `response_item` messages are not
    used: the user ones also hold the context codex adds (its environment, AGENTS.md)."""
    try:
        data = untrusted.tail(path)
    except OSError:
        return []
    entries: list[tuple[str, str]] = []
    for entry in untrusted.entries(data):
        payload = entry.get("payload") if isinstance(entry, dict) else None
        if (
            not isinstance(payload, dict)
            or entry.get("type") != "event_msg"
            or payload.get("type") != "item_completed"
        ):
            continue
        item = payload.get("item")
        if not isinstance(item, dict) or item.get("type") not in ROLES:
            continue
        parts = item.get("content")
        text = (
            "".join(str(p.get("text") or "") for p in parts if isinstance(p, dict))
            if isinstance(parts, list)
            else ""
        )
        entries.append((ROLES[str(item["type"])], text))
    return entries


class Codex(Provider):
    traits = CODEX
    default_bin = "codex"
    env_var = "ROOST_CODEX_BIN"
    replies_in_record = True
    dangerous_flags = ("--dangerously-bypass-approvals-and-sandbox",)

    def start_argv(self, agent: Agent, exe: str, prompt: str | None, paths_home: Path) -> list[str]:
        return [
            exe,
            *self._own_server(agent),
            *self._mcp(agent, paths_home),
            *self._notify(agent, paths_home),
            *self._common(agent),
            *self._prompt(prompt),
        ]

    def prompt_argv(self, prompt: str) -> list[str] | None:
        """After `--`: codex (clap) reads every later argument as the prompt, neither an
        option nor a subcommand (`codex -- resume` is the prompt "resume"; checked on 0.169.0)."""
        return ["--", prompt]

    def resume_argv(
        self, agent: Agent, exe: str, environ: Mapping[str, str], paths_home: Path
    ) -> list[str]:
        if not agent.provider_session_id:
            raise NotResumable(
                f"{agent.name}: codex's session id is not known (roost never saw its rollout "
                f"file open); `roost wake {agent.name} --fresh` starts a new conversation",
                code=7,
            )
        return [
            exe,
            "resume",
            agent.provider_session_id,
            *self._own_server(agent),
            *self._mcp(agent, paths_home),
            *self._notify(agent, paths_home),
            *self._common(agent),
        ]

    def discover_session_id(
        self, agent: Agent, environ: Mapping[str, str], seen: Sighting
    ) -> list[str]:
        """The rollout its running process holds open; else the id codex printed when it
        exited, on its dead pane. Nothing else: a guess could be another agent's."""
        found = open_rollout_ids(seen.open_files)
        if found:
            return found[:1]
        hint = resume_hint(seen.screen)
        return [hint] if hint else []

    def messages(
        self, agent: Agent, environ: Mapping[str, str], paths_home: Path
    ) -> list[tuple[str, str]] | None:
        sid = agent.provider_session_id
        path = rollout_file(environ, sid) if sid else None
        return rollout_messages(path) if path is not None else []

    def usage_file(self, agent: Agent, environ: Mapping[str, str]) -> Path | None:
        sid = agent.provider_session_id
        return rollout_file(environ, sid) if sid else None

    def conversation_missing(
        self, agent: Agent, environ: Mapping[str, str], paths_home: Path
    ) -> str | None:
        sid = agent.provider_session_id
        if not sid or rollout_file(environ, sid) is not None:
            return None
        return f"codex's rollout of session {sid} is not under {sessions_root(environ)}"

    def unclaimed_conversations(
        self, agent: Agent, environ: Mapping[str, str], since: float, known: Set[str]
    ) -> list[str] | None:
        """The rollouts of the agent's cwd written since its launch whose ids no agent owns:
        codex writes one at a conversation's first message, so with none there is nothing its
        last launch could have begun."""
        found = []
        for path in sessions_root(environ).glob("*/*/*/rollout-*.jsonl"):
            try:
                if path.stat().st_mtime < since:
                    continue
            except OSError:
                continue
            meta = read_session_meta(path)
            if meta is not None and meta.get("cwd") == agent.cwd and str(meta["id"]) not in known:
                found.append(str(meta["id"]))
        return found

    @staticmethod
    def _mcp(agent: Agent, paths_home: Path) -> list[str]:
        """`roost mcp` (unless switched off) for this one process: `-c` overrides of
        `mcp_servers.roost.*`, which add the server to the user's own (checked on 0.169.0 with
        `codex mcp list`); the user's config.toml is never written. Its tools run without a
        prompt (as claude's `mcp__roost` rule), and it gets 30 s to start, not codex's 10: a
        busy machine can take longer than that to import roost's server. Not `required`: codex
        would then wait for it before the first turn, but exit at start when it fails."""
        if mcpwire.configured(str(paths_home), agent.id) is None:
            return []
        entry = mcpwire.entry(str(paths_home), agent.id)
        if "url" in entry:  # the shared endpoint: streamable HTTP, the token from its env
            settings = {
                "url": mcpwire.toml_value(entry["url"]),
                "bearer_token_env_var": mcpwire.toml_value(TOKEN_ENV),
            }
        else:
            settings = {key: mcpwire.toml_value(entry[key]) for key in ("command", "args", "env")}
        settings.update(default_tools_approval_mode='"approve"', startup_timeout_sec="30")
        return [
            arg
            for key, value in settings.items()
            for arg in ("-c", f"mcp_servers.{mcpwire.SERVER}.{key}={value}")
        ]

    def launch_environment(
        self, agent: Agent, environ: Mapping[str, str], paths_home: Path
    ) -> dict[str, str]:
        """The user's own notify program, for roost's to run after its own (see _notify)."""
        words = user_notify(environ)
        return {hooks.USER_NOTIFY_ENV: "\n".join(words)} if words else {}

    @staticmethod
    def _notify(agent: Agent, paths_home: Path) -> list[str]:
        """roost's `notify` program (roost/cli_hook.sh), which appends each turn's end to the
        agent's CLI event log for the service to see at once. Codex runs one program: the
        user's own from config.toml is run by roost's after it, with the same JSON (the launch
        environment carries it); a `-c notify=...` among the user's arguments comes later and
        wins over both."""
        argv = hooks.codex_notify(str(paths_home), agent.id)
        return ["-c", f"notify={mcpwire.toml_value(argv)}"]

    @staticmethod
    def _own_server(agent: Agent) -> list[str]:
        """`--no-daemon`, unless the user's arguments already say it."""
        return [] if NO_DAEMON in agent.args else [NO_DAEMON]
