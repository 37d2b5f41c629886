"""How each CLI forks a conversation (`roost fork`): which can, where the original's
conversation lives, and the arguments that start a copy of it (checked on the pinned CLIs:
docs/PROVIDERS.md). ops/fork.py asks this; no module outside providers/ names a provider."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from roost.providers.claude import transcript_path
from roost.providers.codex import fork_args as codex_fork_args
from roost.providers.codex import rollout_file

CANNOT = {
    "gemini": "gemini 0.61 has no way to fork a session",
    "aider": "aider keeps no sessions to fork",
    "command": "a command agent has no conversation",
}


def cannot(provider: str) -> str | None:
    """Why this provider's agents cannot be forked; None: they can (claude, codex)."""
    return CANNOT.get(provider, None if provider in ("claude", "codex") else "unknown CLI")


def conversation(provider: str, sid: str, cwd: str, environ: Mapping[str, str]) -> Path | None:
    """The file that holds the original's conversation (None: none found)."""
    if provider == "codex":
        return rollout_file(environ, sid)
    return transcript_path(sid, cwd, environ)


def start_args(
    provider: str, sid: str, origin_cwd: str, cwd: str, environ: Mapping[str, str], source: Path
) -> list[str]:
    """The arguments that start the fork in `cwd`. Codex finds a session by id wherever it was
    made; Claude finds it only in the cwd's project folder, so a fork in another folder (its
    own worktree) first gets a copy of the transcript there."""
    if provider == "codex":
        return codex_fork_args(sid, cwd)
    if os.path.realpath(cwd) != os.path.realpath(origin_cwd):
        copy = transcript_path(sid, cwd, environ)
        copy.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        shutil.copyfile(source, copy)
    return ["--resume", sid, "--fork-session"]
