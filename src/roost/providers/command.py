"""Any program: ARGV is run again as it is; there is no conversation to resume."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from roost.core.errors import RoostError
from roost.core.model import Agent
from roost.core.settings import Settings
from roost.providers.base import Provider
from roost.providers.traits import COMMAND


class Command(Provider):
    traits = COMMAND

    def wanted_executable(self, agent: Agent, config: Settings, environ: Mapping[str, str]) -> str:
        if not agent.args:
            raise RoostError(
                "provider 'command' needs the program after `--`, "
                "e.g. roost spawn logs --provider command -- tail -f app.log",
                code=2,
            )
        return agent.args[0]

    def start_argv(self, agent: Agent, exe: str, prompt: str | None, paths_home: Path) -> list[str]:
        return [exe, *agent.args[1:]]

    def resume_argv(
        self, agent: Agent, exe: str, environ: Mapping[str, str], paths_home: Path
    ) -> list[str] | None:
        return None  # a program has no conversation: it is run again as it is
