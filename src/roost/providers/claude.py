"""Claude Code: roost mints the session id (`--session-id`), wakes with `--resume <id>`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from roost.core.model import Agent
from roost.core.replies import Turn, fold
from roost.providers import hooks, mcpwire
from roost.providers.base import NotResumable, Provider, user_home
from roost.providers.traits import CLAUDE
from roost.system import untrusted


def project_dir_name(cwd: str) -> str:
    """Claude's transcript folder for a cwd: every non-alphanumeric character becomes '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def claude_dir(environ: Mapping[str, str]) -> Path:
    """Claude Code's own folder: $CLAUDE_CONFIG_DIR, else ~/.claude."""
    config_dir = environ.get("CLAUDE_CONFIG_DIR")
    return Path(config_dir) if config_dir else user_home(environ) / ".claude"


def transcript_path(session_id: str, cwd: str, environ: Mapping[str, str]) -> Path:
    return claude_dir(environ) / "projects" / project_dir_name(cwd) / f"{session_id}.jsonl"


def transcript_messages(path: str | Path) -> list[tuple[str, str]]:
    """The user and assistant text messages of a transcript (its last READ_LIMIT bytes), in
    order, as ("user" | "agent", words): a line of type `user` or `assistant` whose `message`
    holds text (a string, or its parts of type `text`; tool calls and results hold none)."""
    try:
        data = untrusted.tail(path)
    except OSError:
        return []
    found: list[tuple[str, str]] = []
    for entry in untrusted.entries(data):
        message = entry.get("message") if isinstance(entry, dict) else None
        if not isinstance(message, dict) or entry.get("type") not in ("user", "assistant"):
            continue
        words = text_of(message.get("content"))
        if words:
            found.append(("user" if entry["type"] == "user" else "agent", words))
    return found


def text_of(content: object) -> str:
    """A message's words: a string, or its parts of type `text`, a line apart."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(c.get("text") or "")
            for c in content
            if isinstance(c, dict) and c.get("type") == "text"
        )
    return ""


class Claude(Provider):
    traits = CLAUDE
    default_bin = "claude"
    env_var = "ROOST_CLAUDE_BIN"
    dangerous_flags = ("--dangerously-skip-permissions",)

    def start_argv(self, agent: Agent, exe: str, prompt: str | None, paths_home: Path) -> list[str]:
        assert agent.provider_session_id
        return [
            exe,
            "--session-id",
            agent.provider_session_id,
            *self._settings(agent, paths_home),
            *self._common(agent),
            *self._prompt(prompt),
        ]

    def prompt_argv(self, prompt: str) -> list[str] | None:
        """After `--`, which ends claude's options. But claude (commander) still runs a
        subcommand named by the first operand after it (`claude -- update` updates, checked on
        2.1.332); no subcommand's name holds a space, so a one-word prompt is typed in."""
        return ["--", prompt] if any(ch.isspace() for ch in prompt) else None

    @staticmethod
    def _settings(agent: Agent, paths_home: Path) -> list[str]:
        """roost's hooks (and `roost mcp`, unless switched off) for this one process, never in
        the user's settings files. `--mcp-config` takes several files: the next flag ends it."""
        mcp = mcpwire.configured(str(paths_home), agent.id)
        return [
            *(["--mcp-config", mcp] if mcp else []),
            "--settings",
            hooks.write_settings(str(paths_home), agent.id, bool(mcp)),
        ]

    def usage_file(self, agent: Agent, environ: Mapping[str, str]) -> Path | None:
        sid = agent.provider_session_id
        return (
            Path(agent.transcript_path or transcript_path(sid, agent.cwd, environ)) if sid else None
        )

    def messages(
        self, agent: Agent, environ: Mapping[str, str], paths_home: Path
    ) -> list[tuple[str, str]] | None:
        """Its transcript's: the one its hooks named, else its session id's (before a hook
        named one, or after `wake --session` chose an earlier id)."""
        sid = agent.provider_session_id
        path = agent.transcript_path or (transcript_path(sid, agent.cwd, environ) if sid else None)
        return transcript_messages(path) if path else []

    def record_file(
        self, agent: Agent, session_id: str | None, environ: Mapping[str, str], paths_home: Path
    ) -> Path | None:
        """The transcript its hooks named for its current session, else its session id's."""
        if not session_id:
            return None
        if session_id == agent.provider_session_id and agent.transcript_path:
            return Path(agent.transcript_path)
        return transcript_path(session_id, agent.cwd, environ)

    def turns(
        self, agent: Agent, environ: Mapping[str, str], paths_home: Path
    ) -> list[Turn] | None:
        """Its transcript's messages as turns, each answered by its last words (what its Stop
        hook says): its replies' record where no Stop hook line holds one (ops/replies). Its
        replies come from its hooks first (`replies_in_record` stays False: send waits for
        its Stop, not for this record)."""
        found = self.messages(agent, environ, paths_home)
        return None if found is None else fold(found)

    def conversation_missing(
        self, agent: Agent, environ: Mapping[str, str], paths_home: Path
    ) -> str | None:
        sid = agent.provider_session_id
        if not sid or not agent.conversation_seen:
            return None
        path = agent.transcript_path or str(transcript_path(sid, agent.cwd, environ))
        return None if Path(path).exists() else f"its Claude Code transcript {path} is not here"

    def resume_argv(
        self, agent: Agent, exe: str, environ: Mapping[str, str], paths_home: Path
    ) -> list[str] | None:
        assert agent.provider_session_id
        recorded = agent.transcript_path or str(
            transcript_path(agent.provider_session_id, agent.cwd, environ)
        )
        if not Path(recorded).exists():
            if agent.conversation_seen:
                raise NotResumable(
                    f"unresumable: {agent.name}'s conversation {agent.provider_session_id} is "
                    f"gone ({recorded} does not exist; Claude Code deletes transcripts older "
                    f"than cleanupPeriodDays). `roost wake {agent.name} --fresh` starts a new "
                    "conversation",
                    code=7,
                )
            # No message was ever sent, so there is no conversation to lose: Claude Code writes
            # the transcript with the first message. Nothing to resume: a start under its id.
            return None
        return [
            exe,
            "--resume",
            agent.provider_session_id,
            *self._settings(agent, paths_home),
            *self._common(agent),
        ]
