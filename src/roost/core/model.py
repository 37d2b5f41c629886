"""The record roost keeps of an agent: one type for every reader, `roost ls`'s fast path too.

A hand-written slots class, not a dataclass: `roost ls` builds a thousand of them on a path that
imports no dataclasses (and with it inspect), so this module imports nothing at run time. Every
attribute is Final, so mypy refuses a change in place (change a copy: `replace`); a run-time
guard (a __setattr__ that raises) would make each record ~20x slower to build.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Final

# What the user wants (intent), stored; whether it runs is read from tmux (reality).
INTENT_RUNNING = "running"
INTENT_STOPPED = "stopped"
INTENT_HIBERNATED = "hibernated"  # no process and no home, on purpose

# The agents table's columns, in the order of Agent's parameters (store/db.py writes them).
FIELDS = (
    "id",
    "name",
    "provider",
    "cwd",
    "home",
    "args",
    "dangerous",
    "provider_session_id",
    "created_at",
    "intent",
    "started_at",
    "launches",
    "last_exit",
    "placement",
    "tab_id",
    "buried_sibling",
    "buried_side",
    "buried_direction",
    "buried_ratio",
    "linked_parent",
    "orchestration_parent",
    "orchestration_root",
    "last_active_at",
    "last_error",
    "status",
    "status_source",
    "status_since",
    "restart_policy",
    "conversation_seen",
    "transcript_path",
    "hook_offset",
    "mcp",
)
# Read with the record from the rows it names (its tab, its pin, its launch, its lineage): the
# store fills them in, nothing writes them back, and they take no part in equality.
JOINED = (
    "tab",
    "pinned",
    "launch_token",
    "history_json",
    "linked_parent_name",
    "orchestration_parent_name",
    "orchestration_root_name",
    "worktree_json",
    "usage_json",
    "held_inputs",
    "proposed_args",
)


class Agent:
    # `args` is a property over `_args`: the store's JSON text, parsed only when read
    __slots__ = tuple("_args" if f == "args" else f for f in FIELDS + JOINED)

    def __init__(
        self,
        id: str,
        name: str,
        provider: str,
        cwd: str,
        home: str,
        args: tuple[str, ...] | str = (),  # or the store's JSON text of it
        dangerous: bool = False,
        provider_session_id: str | None = None,
        created_at: str = "",
        intent: str = INTENT_STOPPED,
        started_at: str | None = None,
        launches: int = 0,
        last_exit: int | None = None,
        placement: str | None = None,
        tab_id: str | None = None,
        buried_sibling: str | None = None,
        buried_side: str | None = None,
        buried_direction: str | None = None,
        buried_ratio: float | None = None,
        linked_parent: str | None = None,
        orchestration_parent: str | None = None,
        orchestration_root: str | None = None,
        last_active_at: str | None = None,
        last_error: str | None = None,
        status: str | None = None,
        status_source: str | None = None,
        status_since: str | None = None,
        restart_policy: str = "never",
        conversation_seen: bool = False,
        transcript_path: str | None = None,
        hook_offset: int = 0,
        mcp: bool = True,
        tab: str | None = None,
        pinned: bool = False,
        launch_token: str | None = None,
        history_json: str = "[]",
        linked_parent_name: str | None = None,
        orchestration_parent_name: str | None = None,
        orchestration_root_name: str | None = None,
        worktree_json: str | None = None,
        usage_json: str = "[]",
        held_inputs: int = 0,
        proposed_args: str | None = None,
    ) -> None:
        self.id: Final[str] = id  # roost's own UUID: the identity for the agent's whole life
        self.name: Final[str] = name
        self.provider: Final[str] = provider
        self.cwd: Final[str] = cwd
        self.home: Final[str] = home  # the tmux session it lives in
        # extra argv after `--` (the whole command for provider `command`)
        self._args: Final[tuple[str, ...] | str] = args
        # the store's 0/1 flags become bools here (`== 1`: no call, cheap a thousand times)
        self.dangerous: Final[bool] = dangerous == 1
        self.provider_session_id: Final[str | None] = provider_session_id
        self.created_at: Final[str] = created_at
        self.intent: Final[str] = intent
        self.started_at: Final[str | None] = started_at  # last time roost launched it
        # how many times roost launched it; 0 means "never started"
        self.launches: Final[int] = launches
        self.last_exit: Final[int | None] = last_exit
        # the workspace: a tile's placement and tab come from its tab's layout (store/agents.py)
        # "tile" | "detached" | "buried" | None (owned by nothing)
        self.placement: Final[str | None] = placement
        # tile: its tab; detached: its project tab; buried: its old tab
        self.tab_id: Final[str | None] = tab_id
        self.buried_sibling: Final[str | None] = buried_sibling
        self.buried_side: Final[str | None] = buried_side
        self.buried_direction: Final[str | None] = buried_direction
        self.buried_ratio: Final[float | None] = buried_ratio
        # roost ids, never names: they survive every restore
        self.linked_parent: Final[str | None] = linked_parent
        self.orchestration_parent: Final[str | None] = orchestration_parent
        self.orchestration_root: Final[str | None] = orchestration_root
        self.last_active_at: Final[str | None] = last_active_at
        # why the last start failed; cleared by a good start
        self.last_error: Final[str | None] = last_error
        # the last observed status (status.py), and since when
        self.status: Final[str | None] = status
        self.status_source: Final[str | None] = status_source
        self.status_since: Final[str | None] = status_since
        self.restart_policy: Final[str] = restart_policy  # "never" | "on-failure"
        # a conversation exists, so a fresh start would lose it
        self.conversation_seen: Final[bool] = conversation_seen == 1
        self.transcript_path: Final[str | None] = transcript_path  # from claude's hooks
        self.hook_offset: Final[int] = hook_offset  # bytes of the hook log already read
        # its launches get `roost mcp` (config.toml allowing); spawn --no-mcp: False
        self.mcp: Final[bool] = mcp == 1
        self.tab: Final[str | None] = tab  # the name of its tab (tab_id's)
        self.pinned: Final[bool] = pinned == 1
        # its current launch's (None: launched before tokens)
        self.launch_token: Final[str | None] = launch_token
        # its session id's changes as JSON text (only `ls --json` reads them)
        self.history_json: Final[str] = history_json
        # the names of the agents linked_parent... name: what
        self.linked_parent_name: Final[str | None] = linked_parent_name
        # people and scripts read
        self.orchestration_parent_name: Final[str | None] = orchestration_parent_name
        self.orchestration_root_name: Final[str | None] = orchestration_root_name
        # its git worktree (spawn --worktree) as JSON {repo, branch, path}, or None
        self.worktree_json: Final[str | None] = worktree_json
        # its token usage per model as JSON [[model, input, output, cache_write, cache_read]]
        # (store/usage.py's totals; issue 23 part 4), read for `ls --json` only
        self.usage_json: Final[str] = usage_json
        # texts roost holds for it while it asks the person something (store/held.py)
        self.held_inputs: Final[int] = held_inputs
        # the arguments an import kept aside for the person's approval, as JSON text (None:
        # nothing awaits it); it never starts until `roost approve` makes them its args
        self.proposed_args: Final[str | None] = proposed_args

    @property
    def needs_approval(self) -> bool:
        return self.proposed_args is not None

    @property
    def args(self) -> tuple[str, ...]:
        """Its extra argv, parsed from the store's JSON when it came from there (`roost ls`'s
        table never reads it, so it never imports json for it)."""
        if isinstance(self._args, str):
            import json

            return tuple(json.loads(self._args))
        return self._args

    def _key(self) -> tuple[object, ...]:
        return tuple(getattr(self, f) for f in FIELDS)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Agent) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Agent({self.name!r}, {self.provider}, id {self.id}, {self.intent})"

    def replace(self, **changes: object) -> Agent:
        values = {f: getattr(self, f) for f in FIELDS + JOINED}
        unknown = set(changes) - set(values)
        if unknown:
            raise TypeError(f"Agent has no field {sorted(unknown)[0]!r}")
        return Agent(**{**values, **changes})
