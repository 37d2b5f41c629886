"""The agent list's grouping and order, and the header: pure."""

from datetime import UTC, datetime

from roost.tui import actions, rows
from roost.tui.demo import ITEMS, NOW, StaticSource, item


def labels(found: list[rows.Row]) -> list[str]:
    return [("  " * r.depth + r.label) if r.item else f"[{r.label}]" for r in found]


def test_groups_pins_first_then_tabs_in_tile_order_then_parked_then_buried_collapsed() -> None:
    found = rows.build(ITEMS, [("main", ["api-fix", "api-tests"]), ("ui", ["frontend", "docs"])],
                       pins=["api-fix"])
    assert labels(found) == ["[Pinned]", "api-fix", "[Tab main]", "api-tests", "[Tab ui]",
                             "frontend", "docs", "[Parked]", "migrations", "spike-rust",
                             "[Buried]"]
    opened = labels(rows.build(ITEMS, [], pins=[], buried_open=True))
    assert opened[opened.index("[Buried]") + 1] == "old-bisect"
    assert opened[opened.index("[Other]") + 1:][-2:] == ["frontend", "docs"]  # shown, not lost


def test_children_are_indented_under_their_parents() -> None:
    found = rows.build(ITEMS, [("main", ["api-fix", "api-tests"])], pins=[])
    assert labels(found)[:3] == ["[Tab main]", "api-fix", "  api-tests"]


def test_tile_order_is_the_tabs_not_the_records() -> None:
    found = rows.build(ITEMS, [("ui", ["docs", "frontend"])], pins=[])
    assert labels(found)[:3] == ["[Tab ui]", "docs", "frontend"]


def test_filter_matches_name_provider_status_cwd_and_tab() -> None:
    for needle, expected in (("codex", ["frontend"]), ("waiting", ["api-tests"]),
                             ("src/docs", ["docs"]), ("ui", ["frontend", "docs"])):
        found = [r.label for r in rows.build(ITEMS, [("ui", ["frontend", "docs"])], [],
                                             filter_text=needle) if r.item]
        assert found == expected, needle


def test_header_counts_and_who_needs_you() -> None:
    text = rows.header_text(ITEMS)
    assert text.startswith("7 agents: 2 hibernated, 2 idle, 1 exited, 1 waiting, 1 working")
    assert text.endswith("1 need you")
    assert rows.header_text([]) == "0 agents"


def test_ago() -> None:
    assert rows.ago(NOW.isoformat(), NOW) == "0s"
    assert rows.ago("2026-11-29T11:57:00+00:00", NOW) == "3m"
    assert rows.ago("2026-11-28T10:00:00+00:00", NOW) == "1d"
    assert rows.ago(None) == "-"
    assert rows.ago(datetime.now(UTC).isoformat()).endswith("s")


def test_a_cycle_of_links_still_lists_everyone_once() -> None:
    a = item("a", "idle", linked_parent="b")
    b = item("b", "idle", linked_parent="a")
    found = rows.build([a, b], [("main", ["a", "b"])], [])
    assert sorted(r.label for r in found if r.item) == ["a", "b"]


def test_details_say_the_place_as_roost_ls_does() -> None:
    by_name = {i.agent.name: i for i in ITEMS}
    assert "place    tab main  · pinned" in rows.details(by_name["api-fix"])
    assert "place    parked\n" in rows.details(by_name["migrations"])
    assert "last exit 1" in rows.details(by_name["migrations"])


def test_the_key_table_binds_each_key_once_and_each_operation_reaches_the_source() -> None:
    assert len({a.key for a in actions.ACTIONS}) == len(actions.ACTIONS)
    source = StaticSource()
    for action in actions.ACTIONS:
        if action.agent_op is not None:
            said = action.agent_op(source, "frontend")
            assert source.calls[-1][1:] == ("frontend",) and said, action.name
            assert action.binding == f"operate('{action.name}')"
        elif action.workspace_op is not None:
            assert action.workspace_op(source) and source.calls[-1] == ("restore",)
        else:
            assert action.binding == action.name  # the app's own action_<name>
    assert [c[0] for c in source.calls] == ["kill", "wake", "park", "bury", "unbury",
                                            "toggle_pin", "restore"]
