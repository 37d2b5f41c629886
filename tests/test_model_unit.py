"""core.model.Agent, the one record type (issue 20): `replace` makes a copy and checks its field
names, equality is the stored columns'. (Its attributes are Final: mypy refuses a change in
place.)"""

from __future__ import annotations

import pytest

from roost.core.model import FIELDS, JOINED, Agent


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
