"""core.model.Agent, the one record type (issue 20): `replace` makes a copy and checks its field
names, equality is the stored columns'. (A frozen dataclass: mypy refuses a change in place.)"""

from __future__ import annotations

import dataclasses

import pytest

from roost.core.model import FIELDS, JOINED, Agent, from_row


def make(**kw: object) -> Agent:
    return Agent("id-a", "a", "claude", "/w", "a", **kw)  # type: ignore[arg-type]


def test_replace_makes_a_changed_copy() -> None:
    agent = make()
    assert agent.replace(name="b").name == "b" and agent.name == "a"


def test_replace_refuses_a_field_it_does_not_have() -> None:
    with pytest.raises(TypeError, match="placment"):
        make().replace(placment="tile")


def test_equality_is_the_stored_columns_and_joined_values_ride_along() -> None:
    assert make(tab="ui", pinned=True) == make() and hash(make(tab="ui")) == hash(make())
    assert make(status="idle") != make()
    row = tuple(getattr(make(tab="ui"), f) for f in FIELDS + JOINED)
    assert Agent(*row) == make() and Agent(*row).tab == "ui"


def test_the_stores_fast_build_makes_the_same_frozen_record() -> None:
    """store/agents builds each Agent through its slots' setters (model.from_row), not the
    frozen dataclass's __init__: the same record, as frozen, its argv still parsed when read."""
    made = Agent("a1", "api", "claude", "/w", "api", '["--x", "y"]', True, mcp=False)
    values = [getattr(made, f.name) for f in dataclasses.fields(Agent)]
    values[5] = '["--x", "y"]'  # the store's JSON text, as a row gives it
    built = from_row(values)
    assert built == made and repr(built) == repr(made)
    assert built.args == ("--x", "y") and built.mcp is False and built.dangerous is True
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        from_row(values[:-1])
