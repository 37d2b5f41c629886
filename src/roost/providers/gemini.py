"""Gemini CLI: the session id is read from its chat file; wake runs `gemini -r <id>`."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path

from roost.core.model import Agent
from roost.providers.base import NotResumable, Provider, Sighting, user_home
from roost.providers.traits import GEMINI


def chats_dir(cwd: str, environ: Mapping[str, str]) -> Path:
    project = hashlib.sha256(cwd.encode()).hexdigest()
    return user_home(environ) / ".gemini" / "tmp" / project / "chats"


class Gemini(Provider):
    traits = GEMINI
    default_bin = "gemini"
    env_var = "ROOST_GEMINI_BIN"
    prompt_in_argv = True
    dangerous_flags = ("--yolo",)

    def start_argv(self, agent: Agent, exe: str, prompt: str | None, paths_home: Path) -> list[str]:
        return [exe, *self._common(agent), *(["-i", prompt] if prompt else [])]

    def resume_argv(self, agent: Agent, exe: str, environ: Mapping[str, str],
                    paths_home: Path) -> list[str]:
        if not agent.provider_session_id:
            raise NotResumable(
                f"{agent.name}: gemini's session id is not known yet (no chat file for "
                f"{agent.cwd}); `roost wake {agent.name} --fresh` starts a new conversation",
                code=7)
        return [exe, "-r", agent.provider_session_id, *self._common(agent)]

    def discover_session_id(self, agent: Agent, environ: Mapping[str, str],
                            seen: Sighting) -> list[str]:
        if not agent.started_at:
            return []
        started = datetime.fromisoformat(agent.started_at) - timedelta(seconds=2)
        candidates = []
        for path in chats_dir(agent.cwd, environ).glob("session-*.json"):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                stamp = datetime.fromisoformat(str(data["startTime"]).replace("Z", "+00:00"))
                candidates.append((stamp, str(data["sessionId"])))
            except (OSError, ValueError, KeyError, TypeError):
                continue
        return [sid for stamp, sid in sorted(candidates) if stamp >= started]
