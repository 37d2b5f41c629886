"""Scoping and limits of `roost mcp` (core/scope.py) and their settings: pure, no tmux."""

from __future__ import annotations

import pytest

from roost.core import scope, settings
from roost.core.errors import RoostError
from roost.core.scope import Caller, Limits, Member

# lead -> a -> a1; lead -> b; other is someone else's root
LEAD, A, A1, B, OTHER = (
    Member("lead", "lead", None, True),
    Member("a", "a", "lead", True),
    Member("a1", "a1", "a", True),
    Member("b", "b", "lead", False),
    Member("other", "other", None, True),
)
ALL = [LEAD, A, A1, B, OTHER]


def test_subtree_is_the_agent_and_its_descendants() -> None:
    assert scope.subtree(ALL, "lead") == {"lead", "a", "a1", "b"}
    assert scope.subtree(ALL, "a") == {"a", "a1"}
    assert scope.subtree(ALL, "a1") == {"a1"}


def test_a_cycle_is_not_followed_forever() -> None:
    looped = [Member("x", "x", "y", True), Member("y", "y", "x", True)]
    assert scope.subtree(looped, "x") == {"x", "y"}
    assert scope.tree_root(looped, "x") in ("x", "y")


def test_tree_root_walks_up() -> None:
    assert scope.tree_root(ALL, "a1") == "lead"
    assert scope.tree_root(ALL, "other") == "other"


@pytest.mark.parametrize(
    ("caller", "target", "ok"),
    [
        ("lead", A1, True),
        ("a", A1, True),
        ("a", B, False),
        ("a1", A, False),
        ("lead", OTHER, False),
        ("other", LEAD, False),
    ],
)
def test_a_caller_acts_only_on_its_subtree(caller: str, target: Member, ok: bool) -> None:
    if ok:
        scope.check_target(Caller(caller), target, ALL, write=True)
    else:
        with pytest.raises(RoostError, match="not in your subtree"):
            scope.check_target(Caller(caller), target, ALL, write=True)


def test_self_is_refused_where_a_tool_acts_on_children_only() -> None:
    scope.check_target(Caller("a"), A, ALL, write=False)
    with pytest.raises(RoostError, match="is you"):
        scope.check_target(Caller("a"), A, ALL, write=True, self_allowed=False)


def test_outside_roost_reads_everything_and_writes_only_when_allowed() -> None:
    assert scope.visible(Caller(None), ALL) == ALL
    scope.check_target(Caller(None), OTHER, ALL, write=False)
    with pytest.raises(RoostError, match="read-only"):
        scope.check_target(Caller(None), OTHER, ALL, write=True)
    scope.check_target(Caller(None, allow_write=True), OTHER, ALL, write=True)
    with pytest.raises(RoostError, match="read-only"):
        scope.check_create(Caller(None), ALL, Limits())
    scope.check_create(Caller(None, allow_write=True), ALL, Limits(1, 1))


def test_visible_is_the_subtree() -> None:
    assert [m.name for m in scope.visible(Caller("a"), ALL)] == ["a", "a1"]


def test_max_children_counts_live_direct_children() -> None:
    scope.check_create(Caller("lead"), ALL, Limits(max_children=2))  # b is not live
    with pytest.raises(RoostError, match=r"1 live children \(orchestration.max_children = 1"):
        scope.check_create(Caller("lead"), ALL, Limits(max_children=1))


def test_max_tree_counts_live_agents_of_the_whole_tree() -> None:
    scope.check_create(Caller("a1"), ALL, Limits(max_tree=4))
    with pytest.raises(RoostError, match=r"3 live agents \(orchestration.max_tree = 3"):
        scope.check_create(Caller("a1"), ALL, Limits(max_tree=3))


def test_settings_know_the_orchestration_and_mcp_tables() -> None:
    good = {
        "orchestration": {"max_children": 2, "max_tree": 5, "notify_sleeping": "hold"},
        "mcp": {"enabled": False},
    }
    assert settings.problems(good) == []
    parsed = settings.parse(good)
    assert (parsed.orchestration.max_children, parsed.orchestration.max_tree) == (2, 5)
    assert parsed.orchestration.notify_sleeping == "hold"
    assert parsed.mcp.enabled is False
    assert settings.parse({}).mcp.enabled is True
    assert settings.parse({}).orchestration == settings.OrchestrationSettings(8, 32, "wake")
    assert [
        p.key
        for p in settings.problems(
            {"orchestration": {"max_children": True, "fork": 1}, "mcp": {"enabled": "yes"}}
        )
    ] == ["orchestration.max_children", "orchestration.fork", "mcp.enabled"]


def test_ls_tree_puts_children_under_their_parents() -> None:
    from roost.core import present
    from roost.core.model import Agent
    from roost.core.observation import Observation

    def seen(name: str, parent: str | None) -> Observation:
        return Observation(
            Agent(name, name, "claude", "/w", name, orchestration_parent_name=parent),
            None,
            False,
            "stopped",
            None,
            None,
            "idle",
            None,
            None,
        )

    found = [
        seen("lead", None),
        seen("other", None),
        seen("kid", "lead"),
        seen("grandkid", "kid"),
        seen("orphan", "gone"),
    ]
    assert [(o.agent.name, d) for o, d in present.tree_order(found)] == [
        ("lead", 0),
        ("kid", 1),
        ("grandkid", 2),
        ("other", 0),
        ("orphan", 0),
    ]
    lines = present.table(found, tree=True).splitlines()
    assert lines[2].startswith("  └ kid ") and lines[3].startswith("    └ grandkid ")
