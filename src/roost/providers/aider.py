"""Aider: no session id; its conversation is a per-agent chat history file roost owns.

Checked on 0.86.2: `--chat-history-file` names the markdown file it appends to (each prompt it
takes as `#### <line>  ` lines at once, the answer after it), `--restore-chat-history` reads it
back into the conversation at start.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from roost.core.model import Agent
from roost.providers.base import Provider
from roost.providers.records import PROMPT_LINE, aider_history
from roost.providers.traits import AIDER
from roost.system import untrusted

PROMPT_MARK = PROMPT_LINE + " "


def history_file(paths_home: Path, agent: Agent) -> Path:
    return Path(aider_history(str(paths_home), agent.id))


def prompts_in(text: str) -> list[str]:
    """The prompts in a stretch of a chat history: each run of `#### ` lines is one."""
    found: list[str] = []
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith(PROMPT_LINE):
            current = [] if current is None else current
            current.append(line[len(PROMPT_MARK) :].rstrip())  # markdown's "  " line break
        elif current is not None:
            found.append("\n".join(current))
            current = None
    if current is not None:
        found.append("\n".join(current))
    return found


def history_messages(text: str) -> list[tuple[str, str]]:
    """A chat history's messages: each run of `#### ` lines a prompt, the plain lines after it
    the answer. Lines aider writes as a quote (`> `: its own notes, token counts, errors) and
    the `# aider chat started at` headings are not the model's words."""
    entries: list[tuple[str, str]] = []
    answer: list[str] = []
    prompts = iter(prompts_in(text))
    in_prompt = False

    def flush() -> None:
        if answer:
            entries.append(("agent", "\n".join(answer)))
            answer.clear()

    for line in text.splitlines():
        if line.startswith(PROMPT_LINE):
            if not in_prompt:
                flush()
                entries.append(("user", next(prompts, "")))
            in_prompt = True
            continue
        in_prompt = False
        if line.startswith((">", "# aider chat started at")):
            flush()
            continue
        answer.append(line)
    flush()
    return entries


class Aider(Provider):
    traits = AIDER
    default_bin = "aider"
    env_var = "ROOST_AIDER_BIN"
    replies_in_record = True
    dangerous_flags = ("--yes-always",)

    def start_argv(self, agent: Agent, exe: str, prompt: str | None, paths_home: Path) -> list[str]:
        path = history_file(paths_home, agent)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        return [exe, "--chat-history-file", str(path), *self._common(agent)]

    def resume_argv(
        self, agent: Agent, exe: str, environ: Mapping[str, str], paths_home: Path
    ) -> list[str]:
        return [*self.start_argv(agent, exe, None, paths_home), "--restore-chat-history"]

    def record_file(
        self, agent: Agent, session_id: str | None, environ: Mapping[str, str], paths_home: Path
    ) -> Path | None:
        """Its one chat history, whatever the session (aider has none)."""
        return history_file(paths_home, agent)

    def own_files(self, agent: Agent, paths_home: Path) -> list[Path]:
        return [history_file(paths_home, agent)]

    def conversation_missing(
        self, agent: Agent, environ: Mapping[str, str], paths_home: Path
    ) -> str | None:
        if agent.launches == 0 or history_file(paths_home, agent).exists():
            return None
        return (
            "its aider chat history did not come with the export: it would wake into an empty chat"
        )

    def conversation_size(
        self, agent: Agent, environ: Mapping[str, str], paths_home: Path
    ) -> int | None:
        try:
            return history_file(paths_home, agent).stat().st_size
        except OSError:
            return 0

    def prompts_after(
        self, agent: Agent, environ: Mapping[str, str], paths_home: Path, offset: int
    ) -> list[str]:
        try:
            with untrusted.open_file(history_file(paths_home, agent)) as fh:
                fh.seek(offset)
                return prompts_in(fh.read(untrusted.READ_LIMIT).decode("utf-8", "replace"))
        except OSError:
            return []

    def messages(
        self, agent: Agent, environ: Mapping[str, str], paths_home: Path
    ) -> list[tuple[str, str]] | None:
        try:
            data = untrusted.tail(history_file(paths_home, agent))
        except OSError:
            return []
        return history_messages(data.decode("utf-8", "replace"))
