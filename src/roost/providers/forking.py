"""How each CLI forks a conversation (`roost fork`): which can, where the original's
conversation lives, and the arguments that start a copy of it (checked on the pinned CLIs:
docs/PROVIDERS.md). ops/fork.py asks this; no module outside providers/ names a provider."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from roost.providers.claude import transcript_path
from roost.providers.codex import fork_args as codex_fork_args
from roost.providers.codex import rollout_file, sessions_root

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


# The CLIs whose record roost can copy up to a turn and start a fork on (`roost fork
# NAME@TURN`): both read a record of their own format back under the id it names (checked on
# Claude Code 2.1.332 and Codex 0.169 by tests/test_recall_fork_real.py).
AT_TURN = ("claude", "codex")


def new_session_id(provider: str, now: datetime) -> str:
    """A fresh id for a copy of a conversation: Codex's are UUIDv7 (time first), Claude's v4."""
    if provider != "codex":
        return str(uuid.uuid4())
    ms = int(now.timestamp() * 1000) & ((1 << 48) - 1)
    rand = int.from_bytes(os.urandom(10), "big")
    value = (
        (ms << 80) | (0x7 << 76) | ((rand >> 68) << 64) | (0b10 << 62) | (rand & ((1 << 62) - 1))
    )
    return str(uuid.UUID(int=value))


def copy_path(provider: str, sid: str, cwd: str, environ: Mapping[str, str], now: datetime) -> Path:
    """Where a copy of a conversation under id `sid` goes for its CLI to find it: Claude's
    transcript in the cwd's project folder, Codex's rollout in today's sessions folder."""
    if provider == "codex":
        day = now.astimezone(UTC)
        return (
            sessions_root(environ)
            / day.strftime("%Y/%m/%d")
            / f"rollout-{day.strftime('%Y-%m-%dT%H-%M-%S')}-{sid}.jsonl"
        )
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
