"""The records roost keeps. Plain frozen dataclasses: cheap to import, easy to test."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from roost.core.pane import Pane

# What the user wants (intent), stored; whether it runs is read from tmux (reality).
INTENT_RUNNING = "running"
INTENT_STOPPED = "stopped"
INTENT_HIBERNATED = "hibernated"  # no process and no home, on purpose


@dataclass(frozen=True, slots=True)
class Agent:
    id: str  # roost's own UUID: the identity for the agent's whole life
    name: str
    provider: str
    cwd: str
    home: str  # the tmux session it lives in
    args: tuple[str, ...] = ()  # extra argv after `--` (the whole command for provider `command`)
    dangerous: bool = False
    provider_session_id: str | None = None
    created_at: str = ""
    intent: str = INTENT_STOPPED
    started_at: str | None = None  # last time roost launched it
    launches: int = 0  # how many times roost launched it; 0 means "never started"
    last_exit: int | None = None
    # the workspace (schema v2)
    placement: str | None = None  # "tile" | "detached" | "buried" | None (owned by nothing)
    tab_id: str | None = None  # tile: its tab; detached: its project tab; buried: its old tab
    buried_sibling: str | None = None
    buried_side: str | None = None
    buried_direction: str | None = None
    buried_ratio: float | None = None
    linked_parent: str | None = None  # roost ids, never names: they survive every restore
    orchestration_parent: str | None = None
    orchestration_root: str | None = None
    last_active_at: str | None = None
    last_error: str | None = None  # why the last start failed; cleared by a good start
    # status and supervision (schema v3)
    status: str | None = None  # the last observed status (status.py), and since when
    status_source: str | None = None
    status_since: str | None = None
    restart_policy: str = "never"  # "never" | "on-failure"
    conversation_seen: bool = False  # a conversation exists, so a fresh start would lose it
    transcript_path: str | None = None  # from claude's hooks
    hook_offset: int = 0  # bytes of the hook log already read
    mcp: bool = True  # its launches get `roost mcp` (config.toml allowing); spawn --no-mcp: False

    def replace(self, **changes: object) -> Agent:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class AgentView:
    """An agent joined with what tmux says about it: what `ls` shows."""

    agent: Agent
    state: str  # "running" | "stopped"
    pane: Pane | None = None

    @property
    def pid(self) -> int | None:
        return self.pane.live_pid if self.pane else None
