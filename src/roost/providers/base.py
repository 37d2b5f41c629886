"""Providers: how to start and resume one agent CLI. Pure argv building plus small file reads.

A provider never edits the agent CLI's own settings files; what roost needs (hooks, for claude)
goes on the command line of the one process it starts.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Mapping, Set
from dataclasses import dataclass
from pathlib import Path

from roost.core.errors import NeedsPerson, RoostError
from roost.core.model import Agent
from roost.core.replies import Turn, fold
from roost.core.settings import Settings
from roost.providers import traits as known


class NotResumable(NeedsPerson):
    """The provider's conversation cannot be resumed (yet, or any more)."""


@dataclass(frozen=True, slots=True)
class Sighting:
    """What roost saw of an agent's own process when it looks for the session id its CLI chose:
    the files its process tree has open (while it runs), and the last screen of its pane (kept
    after it exited). Evidence of this one process, never of the cwd it shares with others."""

    open_files: tuple[str, ...] = ()
    screen: str = ""


class Provider:
    traits: known.Traits = known.COMMAND  # hooks, session ids, Enter delay, screen patterns
    default_bin = ""
    env_var = ""
    dangerous_flags: tuple[str, ...] = ()
    replies_in_record = False  # its `messages` hold its replies: `turns` reads them (send's check)

    @property
    def name(self) -> str:
        return self.traits.name

    def wanted_executable(self, agent: Agent, config: Settings, environ: Mapping[str, str]) -> str:
        return self.configured_executable(config, environ)

    def configured_executable(self, config: Settings, environ: Mapping[str, str]) -> str:
        """$ROOST_<NAME>_BIN, then providers.<name>.bin in config.toml, then the usual name."""
        configured = environ.get(self.env_var) or config.provider_bin(self.name)
        return str(configured or self.default_bin)

    def executable(self, agent: Agent, config: Settings, environ: Mapping[str, str]) -> str:
        """The CLI's absolute path, looked up on the caller's PATH."""
        wanted = self.wanted_executable(agent, config, environ)
        found = shutil.which(wanted, path=environ.get("PATH"))
        if not found:
            hint = (
                f" (set {self.env_var} or providers.{self.name}.bin in config.toml)"
                if self.env_var
                else ""
            )
            raise NeedsPerson(f"{self.name}: executable {wanted!r} not found{hint}", code=6)
        return os.path.abspath(found)

    def new_session_id(self) -> str | None:
        """The id a new conversation gets on its command line, when roost chooses it."""
        if self.traits.session_id != known.MINTED:
            return None
        return str(uuid.uuid4())

    def prompt_argv(self, prompt: str) -> list[str] | None:
        """The arguments that give this CLI `prompt` as its first message, read as text only
        (never as an option or a subcommand, whatever it holds); None when the command line
        cannot carry it that way: it is typed in once the CLI is up."""
        return None

    def start_argv(self, agent: Agent, exe: str, prompt: str | None, paths_home: Path) -> list[str]:
        raise NotImplementedError

    def _prompt(self, prompt: str | None) -> list[str]:
        return (self.prompt_argv(prompt) or []) if prompt else []

    def resume_argv(
        self, agent: Agent, exe: str, environ: Mapping[str, str], paths_home: Path
    ) -> list[str] | None:
        """The argv that brings the agent's conversation back; None when there is none to bring
        back (never begun, or a program's): the caller starts it (start_argv) and says it
        resumed nothing. NotResumable when there is one and it cannot come back."""
        raise NotImplementedError

    def discover_session_id(
        self, agent: Agent, environ: Mapping[str, str], seen: Sighting
    ) -> list[str]:
        """Candidate provider session ids for an agent that could not choose its own, best
        first; `seen` is what roost saw of the agent's own process."""
        return []

    def unclaimed_conversations(
        self, agent: Agent, environ: Mapping[str, str], since: float, known: Set[str]
    ) -> list[str] | None:
        """For a CLI that chooses its own session id, when roost never learned the agent's: the
        ids of the conversations in the agent's cwd that were written since `since` (epoch
        seconds, its last launch) and that no agent owns (`known`), any of which may be its
        own. [] means it has none to lose; None that the CLI's files cannot tell."""
        return None

    def own_files(self, agent: Agent, paths_home: Path) -> list[Path]:
        """Files of the agent's conversation that roost's home holds (not the CLI's own): an
        export carries them, an import writes them back."""
        return []

    def conversation_missing(
        self, agent: Agent, environ: Mapping[str, str], paths_home: Path
    ) -> str | None:
        """Why the agent's conversation cannot be found here (an import on another machine or
        home), or None when it is here or there is none to find."""
        return None

    def conversation_size(
        self, agent: Agent, environ: Mapping[str, str], paths_home: Path
    ) -> int | None:
        """The size of the CLI's own record of the agent's conversation (0 before it exists),
        or None when roost cannot read one: then a send is confirmed another way."""
        return None

    def usage_file(self, agent: Agent, environ: Mapping[str, str]) -> Path | None:
        """The file where the CLI records the token usage of the agent's current conversation
        (read by usage/operations.py with usage/rules.py's reader for this CLI), or None."""
        return None

    def prompts_after(
        self, agent: Agent, environ: Mapping[str, str], paths_home: Path, offset: int
    ) -> list[str]:
        """The prompts the CLI took, as its record holds them past byte `offset`."""
        return []

    def turns(
        self, agent: Agent, environ: Mapping[str, str], paths_home: Path
    ) -> list[Turn] | None:
        """The agent's conversation as its CLI's own record holds it, oldest first ([] before
        there is one), or None when the CLI keeps no record roost can read of its replies:
        `messages` folded into turns where `replies_in_record` (Claude's, whose replies come
        from its hooks first, its own: ops/replies reads them all)."""
        if not self.replies_in_record:
            return None
        found = self.messages(agent, environ, paths_home)
        return None if found is None else fold(found)

    def messages(
        self, agent: Agent, environ: Mapping[str, str], paths_home: Path
    ) -> list[tuple[str, str]] | None:
        """The agent's conversation message by message as its CLI's own record holds it,
        oldest first, each ("user" | "agent", its words) ([] before there is one), or None when
        the CLI keeps no record roost can read (`roost read` then shows its screen)."""
        return None

    def environment_problem(self, environ: Mapping[str, str]) -> tuple[str, str] | None:
        """What in roost's environment keeps this CLI from running as an agent, and its fix
        (for doctor); None when nothing does."""
        return None

    def launch_environment(
        self, agent: Agent, environ: Mapping[str, str], paths_home: Path
    ) -> dict[str, str]:
        """Variables this one launch gets besides `environ` (the agent's environment): what a
        CLI takes no command-line option for."""
        return {}

    def _common(self, agent: Agent) -> list[str]:
        return [*(self.dangerous_flags if agent.dangerous else ()), *agent.args]


def registry() -> dict[str, Provider]:
    from roost.providers.aider import Aider
    from roost.providers.claude import Claude
    from roost.providers.codex import Codex
    from roost.providers.command import Command
    from roost.providers.gemini import Gemini

    return {p.name: p for p in (Claude(), Codex(), Gemini(), Aider(), Command())}


NAMES = tuple(known.BY_NAME)


def get(name: str) -> Provider:
    providers = registry()
    if name not in providers:
        raise RoostError(f"unknown provider {name!r}; choose one of {', '.join(NAMES)}", code=2)
    return providers[name]


def user_home(environ: Mapping[str, str]) -> Path:
    return Path(environ.get("HOME") or os.path.expanduser("~"))
