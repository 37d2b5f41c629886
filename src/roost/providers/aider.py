"""Aider: no session id; its conversation is a per-agent chat history file roost owns."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from roost.core.model import Agent
from roost.providers.base import Provider
from roost.providers.traits import AIDER


def history_file(paths_home: Path, agent: Agent) -> Path:
    return paths_home / "agents" / agent.id / "aider.chat.history.md"


class Aider(Provider):
    traits = AIDER
    default_bin = "aider"
    env_var = "ROOST_AIDER_BIN"
    dangerous_flags = ("--yes-always",)

    def start_argv(self, agent: Agent, exe: str, prompt: str | None, paths_home: Path) -> list[str]:
        path = history_file(paths_home, agent)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        return [exe, "--chat-history-file", str(path), *self._common(agent)]

    def resume_argv(self, agent: Agent, exe: str, environ: Mapping[str, str],
                    paths_home: Path) -> list[str]:
        return [*self.start_argv(agent, exe, None, paths_home), "--restore-chat-history"]
