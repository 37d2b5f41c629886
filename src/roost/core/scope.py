"""Who may act on whom through `roost mcp`, and how many children an agent may keep. Pure.

The rule: an agent (the caller) acts only on itself and its subtree, the agents it created
(`orchestration_parent`), recursively. A person's own MCP client (no caller) reads everything
and writes nothing unless the server was started with `--allow-write`.

>>> a = Member("a", "lead", None, True); b = Member("b", "kid", "a", True)
>>> sorted(subtree([a, b], "a"))
['a', 'b']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypedDict

from roost.core.errors import RoostError

DEFAULT_MAX_CHILDREN = 8
DEFAULT_MAX_TREE = 32


@dataclass(frozen=True, slots=True)
class Member:
    """What scoping needs of an agent: its id, name, orchestration parent and whether it is
    live (meant to run: it counts against the limits)."""

    id: str
    name: str
    parent: str | None
    live: bool


@dataclass(frozen=True, slots=True)
class Caller:
    """The agent calling the server (its roost id), or None for a person's own client."""

    agent_id: str | None
    allow_write: bool = False


class Created(TypedDict, total=False):
    """A child created (the MCP tool create_agent): its `name` for its parent (`HOST:NAME` on a
    host), `provider`, `cwd`, `placement` and `parent`, whether its first prompt was delivered
    and what became of it (`prompt`; a host's says `prompt_how` when it was not), the question
    it asks its person first (`waiting`)."""

    name: str
    host: str
    provider: str
    cwd: object  # as its host's `ls --json` says it, for one on a host
    placement: str
    parent: str | None
    prompt_delivered: bool | None
    prompt_how: str
    waiting: str | None
    prompt: str | None


@dataclass(frozen=True, slots=True)
class Limits:
    max_children: int = DEFAULT_MAX_CHILDREN
    max_tree: int = DEFAULT_MAX_TREE


def subtree(members: Iterable[Member], root_id: str) -> set[str]:
    """`root_id` and every agent below it by orchestration parent (cycles are not followed)."""
    children: dict[str, list[str]] = {}
    for m in members:
        if m.parent is not None:
            children.setdefault(m.parent, []).append(m.id)
    found, todo = {root_id}, [root_id]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def tree_root(members: Sequence[Member], agent_id: str) -> str:
    """The top of `agent_id`'s orchestration tree (itself when it has no parent)."""
    parents = {m.id: m.parent for m in members}
    seen = {agent_id}
    current = agent_id
    while (up := parents.get(current)) is not None and up in parents and up not in seen:
        seen.add(up)
        current = up
    return current


def visible(caller: Caller, members: Sequence[Member]) -> list[Member]:
    """The agents the caller may see: its subtree, or everything for a person's client."""
    if caller.agent_id is None:
        return list(members)
    mine = subtree(members, caller.agent_id)
    return [m for m in members if m.id in mine]


def check_target(
    caller: Caller,
    target: Member,
    members: Sequence[Member],
    write: bool,
    self_allowed: bool = True,
) -> None:
    """Refuse, with the reason, a call by `caller` on `target`."""
    if caller.agent_id is None:
        if write and not caller.allow_write:
            raise RoostError(
                "roost mcp is read-only outside an agent started by roost "
                "(start it with `roost mcp --allow-write` to change agents)"
            )
        return
    if target.id == caller.agent_id and not self_allowed:
        raise RoostError(f"{target.name} is you: this tool acts on your children only")
    if target.id not in subtree(members, caller.agent_id):
        raise RoostError(
            f"{target.name} is not in your subtree: you may act only on "
            "yourself and the agents you created (and theirs)"
        )


def check_create(caller: Caller, members: Sequence[Member], limits: Limits) -> None:
    """Refuse a new child when the caller may not write or a limit is reached."""
    if caller.agent_id is None:
        if not caller.allow_write:
            raise RoostError(
                "roost mcp is read-only outside an agent started by roost "
                "(start it with `roost mcp --allow-write` to create agents)"
            )
        return
    live_children = sum(1 for m in members if m.parent == caller.agent_id and m.live)
    if live_children >= limits.max_children:
        raise RoostError(
            f"limit reached: you already have {live_children} live children "
            f"(orchestration.max_children = {limits.max_children}); stop or "
            "remove one first"
        )
    root = tree_root(members, caller.agent_id)
    in_tree = subtree(members, root)
    live_tree = sum(1 for m in members if m.id in in_tree and m.live)
    if live_tree >= limits.max_tree:
        raise RoostError(
            f"limit reached: your tree already has {live_tree} live agents "
            f"(orchestration.max_tree = {limits.max_tree}); stop or remove some "
            "first"
        )


def check_wake(target: Member, members: Sequence[Member], limits: Limits) -> None:
    """Refuse to make `target` live again (a message that wakes it, a notice) when its parent
    or its tree is at a limit: every path that makes an agent live counts, not only creation.

    >>> lead = Member("a", "lead", None, True); kid = Member("b", "kid", "a", False)
    >>> check_wake(kid, [lead, kid, Member("c", "kid2", "a", True)],
    ...            Limits(max_children=1))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    roost.core.errors.RoostError: limit reached: waking kid would give lead 2 live children ...
    """
    if target.live or target.parent is None:
        return  # already counted, or no tree above it (a person's own agent)
    parent = next((m for m in members if m.id == target.parent), None)
    siblings = sum(1 for m in members if m.parent == target.parent and m.live)
    if siblings >= limits.max_children:
        raise RoostError(
            f"limit reached: waking {target.name} would give "
            f"{parent.name if parent else target.parent} {siblings + 1} live "
            f"children (orchestration.max_children = {limits.max_children}); "
            "stop or remove one first"
        )
    in_tree = subtree(members, tree_root(members, target.id))
    live_tree = sum(1 for m in members if m.id in in_tree and m.live)
    if live_tree >= limits.max_tree:
        raise RoostError(
            f"limit reached: waking {target.name} would make its tree "
            f"{live_tree + 1} live agents (orchestration.max_tree = "
            f"{limits.max_tree}); stop or remove some first"
        )
