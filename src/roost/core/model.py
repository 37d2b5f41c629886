"""The record roost keeps of an agent: one type for every reader, `roost ls`'s fast path too.

A frozen dataclass: change a copy (`replace`). Its fields are the agents table's columns, in
order (FIELDS, which store/db.py writes), then the values read with it from the rows they name
(JOINED: its tab, its pin, its launch, its lineage), which nothing writes back and which take no
part in equality. `args` is set as a tuple or as the store's JSON text of one and read as a
tuple: `roost ls`'s table never reads it, so its fast path never imports json for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, Final, Literal

# What the user wants (intent), stored; whether it runs is read from tmux (reality).
Intent = Literal["running", "stopped", "hibernated"]
INTENT_RUNNING: Final = "running"
INTENT_STOPPED: Final = "stopped"
INTENT_HIBERNATED: Final = "hibernated"  # no process and no home, on purpose

# What the supervisor does when the agent's program exits with a failure (ops/supervise.py).
RESTART_POLICIES = ("never", "on-failure")


class _Argv:
    """`Agent.args`: set as a tuple or as the store's JSON text of one; read, always a tuple (the
    text parsed at the first read, and kept). Installed over the field's slot once the class is
    made (a dataclass with slots replaces the class, and the slot takes the field's name)."""

    def __init__(self, slot: Any = None) -> None:
        self.slot = slot  # the member descriptor of the slot that holds the value

    def __get__(self, obj: object | None, owner: type | None = None) -> tuple[str, ...]:
        if obj is None:
            return ()  # the field's default
        value = self.slot.__get__(obj, owner)
        if isinstance(value, str):
            import json  # here: `roost ls`'s fast path loads no json

            value = tuple(json.loads(value))
            self.slot.__set__(obj, value)
        return value  # type: ignore[no-any-return]

    def __set__(self, obj: object, value: tuple[str, ...] | str) -> None:
        self.slot.__set__(obj, value)


@dataclass(frozen=True, slots=True, repr=False)
class Agent:
    # roost's own UUID: the identity for the agent's whole life
    id: str
    name: str
    provider: str
    cwd: str
    # the tmux session it lives in
    home: str
    # extra argv after `--` (the whole command for provider `command`)
    args: _Argv = _Argv()  # a tuple, or the store's JSON text of it (read: a tuple)
    dangerous: bool = False
    provider_session_id: str | None = None
    created_at: str = ""
    intent: Intent = INTENT_STOPPED
    # last time roost launched it
    started_at: str | None = None
    # how many times roost launched it; 0 means "never started"
    launches: int = 0
    last_exit: int | None = None
    # the workspace: a tile's placement and tab come from its tab's layout (store/agents.py)
    # "tile" | "detached" | "buried" | None (owned by nothing)
    placement: str | None = None
    # tile: its tab; detached: its project tab; buried: its old tab
    tab_id: str | None = None
    buried_sibling: str | None = None
    buried_side: str | None = None
    buried_direction: str | None = None
    buried_ratio: float | None = None
    # roost ids, never names: they survive every restore
    linked_parent: str | None = None
    orchestration_parent: str | None = None
    orchestration_root: str | None = None
    last_active_at: str | None = None
    # why the last start failed; cleared by a good start
    last_error: str | None = None
    # the last observed status (status.py), and since when
    status: str | None = None
    status_source: str | None = None
    status_since: str | None = None
    # "never" | "on-failure"
    restart_policy: str = "never"
    # a conversation exists, so a fresh start would lose it
    conversation_seen: bool = False
    # from claude's hooks
    transcript_path: str | None = None
    # bytes of the hook log already read
    hook_offset: int = 0
    # its launches get `roost mcp` (config.toml allowing); spawn --no-mcp: False
    mcp: bool = True
    # JOINED (read with the record from the rows they name; no part of its equality):
    # the name of its tab (tab_id's)
    tab: str | None = field(default=None, compare=False)
    pinned: bool = field(default=False, compare=False)
    # its current launch's (None: launched before tokens)
    launch_token: str | None = field(default=None, compare=False)
    # its session id's changes as JSON text (only `ls --json` reads them)
    history_json: str = field(default="[]", compare=False)
    # the names of the agents linked_parent... name: what people and scripts read
    linked_parent_name: str | None = field(default=None, compare=False)
    orchestration_parent_name: str | None = field(default=None, compare=False)
    orchestration_root_name: str | None = field(default=None, compare=False)
    # its git worktree (spawn --worktree) as JSON {repo, branch, path}, or None
    worktree_json: str | None = field(default=None, compare=False)
    # its token usage per model as JSON [[model, input, output, cache_write, cache_read]]
    # (store/usage.py's totals; issue 23 part 4), read for `ls --json` only
    usage_json: str = field(default="[]", compare=False)
    # texts roost holds for it while it asks the person something (store/held.py)
    held_inputs: int = field(default=0, compare=False)
    # the arguments an import kept aside for the person's approval, as JSON text (None:
    # nothing awaits it); it never starts until `roost approve` makes them its args
    proposed_args: str | None = field(default=None, compare=False)
    # the names of the worktree agents its changes collide with, as a JSON list (issue 38,
    # store/merge.py's marks; "[]": none)
    collides_json: str = field(default="[]", compare=False)

    @property
    def needs_approval(self) -> bool:
        return self.proposed_args is not None

    def __repr__(self) -> str:
        return f"Agent({self.name!r}, {self.provider}, id {self.id}, {self.intent})"

    def replace(self, **changes: Any) -> Agent:
        """A copy with `changes` (TypeError for a field it does not have)."""
        return replace(self, **changes)


Agent.args = _Argv(Agent.__dict__["args"])  # type: ignore[misc]

# The agents table's columns, in the order of Agent's fields (store/db.py writes them), and
# what the store reads with them.
FIELDS = tuple(f.name for f in fields(Agent) if f.compare)
JOINED = tuple(f.name for f in fields(Agent) if not f.compare)

# A frozen dataclass's __init__ sets each field through object.__setattr__: 8 ms for the
# thousand agents a `roost ls` of a large fleet builds, most of the service's answer. The
# store builds its records through the slots' own setters instead (1 ms), in field order.
_SETTERS = tuple(
    Agent.__dict__[f.name].slot.__set__ if f.name == "args" else Agent.__dict__[f.name].__set__
    for f in fields(Agent)
)


def from_row(values: Sequence[object]) -> Agent:
    """An Agent from one value per field, in the fields' order (a row of store/agents.select,
    its flags already bools): the same record `Agent(*values)` makes, built faster."""
    if len(values) != len(_SETTERS):
        raise TypeError(f"an Agent has {len(_SETTERS)} fields, not {len(values)}")
    agent = object.__new__(Agent)
    for set_value, value in zip(_SETTERS, values, strict=True):
        set_value(agent, value)
    return agent
