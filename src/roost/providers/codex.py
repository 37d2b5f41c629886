"""Codex CLI: the session id cannot be chosen; roost reads it from Codex's rollout file."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from roost.core.model import Agent
from roost.providers.base import NotResumable, Provider, user_home
from roost.providers.traits import CODEX


def sessions_root(environ: Mapping[str, str]) -> Path:
    codex_home = environ.get("CODEX_HOME")
    return (Path(codex_home) if codex_home else user_home(environ) / ".codex") / "sessions"


def read_session_meta(path: Path) -> dict[str, Any] | None:
    """The first line of a rollout file: {"type": "session_meta", "payload": {"id", "cwd", ...}}
    (older Codex versions wrote the fields at the top level)."""
    try:
        with path.open(encoding="utf-8") as fh:
            first = json.loads(fh.readline() or "null")
    except (OSError, ValueError):
        return None
    if not isinstance(first, dict):
        return None
    meta = first.get("payload") if first.get("type") == "session_meta" else first
    return meta if isinstance(meta, dict) and meta.get("id") else None


def rollouts_since(root: Path, since: datetime) -> list[Path]:
    """Rollout files in the day folders from `since` (a day earlier, for time zones) until now."""
    found: list[Path] = []
    day = (since - timedelta(days=1)).date()
    today = datetime.now(UTC).date() + timedelta(days=1)
    while day <= today:
        folder = root / f"{day:%Y}" / f"{day:%m}" / f"{day:%d}"
        if folder.is_dir():
            found.extend(folder.glob("rollout-*.jsonl"))
        day += timedelta(days=1)
    return found


class Codex(Provider):
    traits = CODEX
    default_bin = "codex"
    env_var = "ROOST_CODEX_BIN"
    prompt_in_argv = True
    dangerous_flags = ("--dangerously-bypass-approvals-and-sandbox",)

    def start_argv(self, agent: Agent, exe: str, prompt: str | None, paths_home: Path) -> list[str]:
        return [exe, *self._common(agent), *([prompt] if prompt else [])]

    def resume_argv(self, agent: Agent, exe: str, environ: Mapping[str, str],
                    paths_home: Path) -> list[str]:
        if not agent.provider_session_id:
            raise NotResumable(
                f"{agent.name}: codex's session id is not known yet (no rollout file for "
                f"{agent.cwd} since {agent.started_at}); `roost wake {agent.name} --fresh` "
                "starts a new conversation", code=7)
        return [exe, "resume", agent.provider_session_id, *self._common(agent)]

    def discover_session_id(self, agent: Agent, environ: Mapping[str, str]) -> list[str]:
        if not agent.started_at:
            return []
        started = datetime.fromisoformat(agent.started_at)
        candidates = []
        for path in rollouts_since(sessions_root(environ), started):
            meta = read_session_meta(path)
            if not meta or meta.get("cwd") != agent.cwd:
                continue
            try:
                stamp = datetime.fromisoformat(str(meta.get("timestamp")).replace("Z", "+00:00"))
            except ValueError:
                continue
            if stamp.tzinfo is None:
                stamp = stamp.replace(tzinfo=UTC)
            if stamp >= started - timedelta(seconds=2):
                candidates.append((stamp, str(meta["id"])))
        return [sid for _, sid in sorted(candidates)]
