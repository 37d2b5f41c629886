"""The agent list's grouping and order, and the header: pure."""

import asyncio
import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from roost.tui import actions, rows
from roost.tui.app import RoostApp
from roost.tui.demo import ITEMS, NOW, StaticSource, item
from roost.tui.source import Snapshot


def labels(found: list[rows.Row]) -> list[str]:
    return [("  " * r.depth + r.label) if r.item else f"[{r.label}]" for r in found]


def test_groups_need_you_then_pins_then_tabs_in_tile_order_then_parked_then_buried() -> None:
    found = rows.build(
        ITEMS, [("main", ["api-fix", "api-tests"]), ("ui", ["frontend", "docs"])], pins=["api-fix"]
    )
    assert labels(found) == [
        "[Need you]",
        "api-tests",  # waiting: here only, not in its tab too
        "migrations",  # crashed: it exited with code 1
        "[Pinned]",
        "api-fix",
        "[Tab ui]",  # tab main's other tile needs you: no empty "Tab main" header
        "frontend",
        "docs",
        "[Parked]",
        "spike-rust",
        "[Buried]",
    ]
    need_you = found[0]
    assert need_you.count == 2 and need_you.key == "group:Need you"
    assert found[1].asks == "Do you want to proceed?"
    assert all(r.asks is None for r in found[3:])  # only the group's rows say a question
    opened = labels(rows.build(ITEMS, [], pins=[], buried_open=True))
    assert opened[opened.index("[Buried]") + 1] == "old-bisect"
    assert opened[opened.index("[Other]") + 1 :][-2:] == ["frontend", "docs"]  # shown, not lost


def test_each_agent_is_listed_once_by_its_own_key() -> None:
    found = rows.build(ITEMS, [("main", ["api-fix", "api-tests"])], pins=["api-tests"])
    agents = [r.key for r in found if r.item]
    assert sorted(agents) == sorted(i.agent.id for i in ITEMS if i.agent.placement != "buried")
    assert len(agents) == len(set(agents))


def test_children_are_indented_under_their_parents() -> None:
    calm = [item("api-fix", "working"), item("api-tests", "idle", orchestration_parent="api-fix")]
    found = rows.build(calm, [("main", ["api-fix", "api-tests"])], pins=[])
    assert labels(found) == ["[Tab main]", "api-fix", "  api-tests"]
    asking = [item("lead", "waiting"), item("kid", "error", orchestration_parent="lead")]
    found = rows.build(asking, [("main", ["lead", "kid"])], pins=[])
    assert labels(found) == ["[Need you]", "lead", "  kid"]  # within the group as well


@pytest.mark.parametrize(
    ("status", "exit_code", "reason", "last_error", "group", "asks"),
    [
        ("waiting", None, "Trust this folder?", None, "Need you", "Trust this folder?"),
        ("waiting", None, None, None, "Need you", None),  # its question not read (yet)
        ("error", None, "API Error: 500", None, "Need you", "API Error: 500"),
        (
            "limited",
            None,
            "usage limit, resets 15:00",
            None,
            "Need you",
            "usage limit, resets 15:00",
        ),
        ("failed", None, None, "no such program: clude", "Need you", "no such program: clude"),
        ("failed", None, "exited at once", "old", "Need you", "exited at once"),
        ("exited", 1, None, "Traceback: KeyError", "Need you", "Traceback: KeyError"),
        ("exited", 137, None, None, "Need you", None),  # killed by a signal: a crash
        ("exited", 0, None, None, "Tab main", None),  # ended cleanly: not a crash
        ("exited", None, None, None, "Tab main", None),  # code unknown
        ("working", None, None, "an old error", "Tab main", None),
        ("idle", None, None, None, "Tab main", None),
        ("starting", None, None, None, "Tab main", None),
        ("stopped", None, None, None, "Tab main", None),
        ("hibernated", None, None, None, "Tab main", None),
        ("lost", None, None, None, "Tab main", None),
    ],
)
def test_who_needs_you_and_what_their_row_says(
    status: str,
    exit_code: int | None,
    reason: str | None,
    last_error: str | None,
    group: str,
    asks: str | None,
) -> None:
    one = item("a", status, exit_code=exit_code, reason=reason)
    one = dataclasses.replace(one, agent=one.agent.replace(last_error=last_error))
    found = rows.build([item("calm", "idle"), one], [("main", ["calm", "a"])], pins=[])
    header = next(r for r in reversed(found[: [r.label for r in found].index("a")]) if r.is_header)
    row = next(r for r in found if r.label == "a")
    assert (header.label, row.asks) == (group, asks)
    assert rows.needs_you(one) is (group == "Need you")
    assert rows.header_text([one]).endswith("1 need you") is (group == "Need you")


@pytest.mark.parametrize(
    ("name", "asks", "width", "cell", "shown"),
    [
        ("api", "Do you want to proceed?", 40, "api  Do you want to proceed?", True),
        ("api", "Do you want to proceed?", 20, "api  Do you want to…", True),
        ("api", "Do you want to proceed?", 13, "api  Do you …", True),
        ("api", "Do you want to proceed?", 12, "api", False),  # under 8 of it: the name alone
        ("api", None, 40, "api", False),
        ("a-very-long-name", "Proceed?", 12, "a-very-long…", False),
    ],
)
def test_a_need_you_rows_name_column_says_the_question_as_far_as_it_fits(
    name: str, asks: str | None, width: int, cell: str, shown: bool
) -> None:
    assert rows.name_cell(name, asks, width) == cell
    assert rows.asks_fit(name, asks, width) is shown
    waiting = item(name, "waiting", reason=asks)
    said = rows.status_cell(waiting, shown)
    assert said == ("waiting" if shown or asks is None else f"waiting: {asks}")  # said once


def test_the_status_column_keeps_the_held_count_without_the_question() -> None:
    waiting = item("a", "waiting", reason="Trust this folder?")
    waiting = dataclasses.replace(waiting, agent=waiting.agent.replace(held_inputs=1))
    assert rows.status_cell(waiting) == "waiting: Trust this folder? [1 held]"
    assert rows.status_cell(waiting, asks_shown=True) == "waiting [1 held]"
    assert waiting.status_reason == "Trust this folder?"  # the observation is left as it was


def test_tile_order_is_the_tabs_not_the_records() -> None:
    found = labels(rows.build(ITEMS, [("ui", ["docs", "frontend"])], pins=[]))
    assert found[found.index("[Tab ui]") :][:3] == ["[Tab ui]", "docs", "frontend"]


@pytest.mark.parametrize(
    ("needle", "expected"),
    [
        pytest.param("codex", ["frontend"], id="provider"),
        pytest.param("waiting", ["api-tests"], id="status"),
        pytest.param("src/docs", ["docs"], id="cwd"),
        pytest.param("ui", ["frontend", "docs"], id="tab"),
    ],
)
def test_filter_matches_name_provider_status_cwd_and_tab(needle: str, expected: list[str]) -> None:
    found = rows.build(ITEMS, [("ui", ["frontend", "docs"])], [], filter_text=needle)
    assert [r.label for r in found if r.item] == expected


def test_header_counts_and_who_needs_you() -> None:
    text = rows.header_text(ITEMS)
    assert text.startswith("7 agents: 2 hibernated, 2 idle, 1 exited, 1 waiting, 1 working")
    assert text.endswith("  ·  2 need you")  # api-tests waits, migrations crashed
    assert rows.header_text([]) == "0 agents"
    assert "need you" not in rows.header_text([item("a", "idle"), item("b", "exited", exit_code=0)])


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


def test_the_answer_key_refuses_an_agent_that_asks_nothing_in_one_line() -> None:
    assert actions.refusal("answer", "api-tests", "tile", "main", "waiting") is None
    for status in ("idle", "working", "crashed (1)", None):
        said = actions.refusal("answer", "docs", "tile", "ui", status)
        assert said is not None and "\n" not in said and said.startswith("docs asks nothing")
    assert actions.refusal("kill", "docs", "tile", "ui", "idle") is None  # other keys as before


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
    assert [c[0] for c in source.calls] == [
        "kill",
        "wake",
        "park",
        "bury",
        "unbury",
        "toggle_pin",
        "restore",
    ]


def test_details_name_a_worktree_agents_branch_and_repository() -> None:
    worktree = item("w", "idle")
    assert "branch" not in rows.details(worktree)
    tree = '{"repo": "/src/app", "branch": "roost/w", "path": "/t/app-1/w"}'
    worktree = dataclasses.replace(worktree, agent=worktree.agent.replace(worktree_json=tree))
    assert "branch   roost/w (worktree of /src/app)" in rows.details(worktree)


WORKTREE = '{"repo": "/src/app", "branch": "roost/w", "path": "/t/app-1/w"}'


def test_details_show_a_worktrees_git_counts_when_given_them() -> None:
    worktree = item("w", "idle")
    worktree = dataclasses.replace(worktree, agent=worktree.agent.replace(worktree_json=WORKTREE))
    assert "git " not in rows.details(worktree)  # not asked yet: no line, no git
    counts = {"dirty": 2, "ahead": 1, "behind": 3, "against": "main"}
    assert "git      2 changed, 1 ahead / 3 behind main" in rows.details(worktree, counts)
    gone: dict[str, object] = {"dirty": None, "ahead": None, "behind": None, "against": None}
    assert "git      folder gone" in rows.details(worktree, gone)


class CountingSource(StaticSource):
    """A worktree agent `w` and a plain one; counts the git questions asked."""

    def __init__(self) -> None:
        worktree = item("w", "idle")
        worktree = dataclasses.replace(
            worktree, agent=worktree.agent.replace(worktree_json=WORKTREE)
        )
        super().__init__(Snapshot(items=[worktree, item("plain", "idle")]))
        self.asked: list[str] = []

    def git_counts(self, name: str) -> dict[str, object] | None:
        self.asked.append(name)
        return {"dirty": 1, "ahead": 4, "behind": 0, "against": "main"}


def test_the_details_panel_asks_git_once_per_selection_not_per_refresh() -> None:
    source = CountingSource()

    async def until(pilot: Pilot[Any], app: RoostApp, done: Callable[[], bool]) -> None:
        deadline = asyncio.get_running_loop().time() + 20
        while not done():
            assert asyncio.get_running_loop().time() < deadline, "timed out in the TUI"
            await pilot.pause(0.05)

    def details(app: RoostApp) -> str:
        return str(app.query_one("#details", Static).content)

    def choose(app: RoostApp, name: str) -> None:
        index = next(i for i, r in enumerate(app.rows) if r.item and r.item.agent.name == name)
        app.query_one("#agents", DataTable).move_cursor(row=index)

    async def run() -> None:
        app = RoostApp(source=source, refresh_every=0)
        async with app.run_test(size=(140, 40)) as pilot:
            await until(pilot, app, lambda: len(app.rows) == 3)
            choose(app, "w")
            await until(pilot, app, lambda: "1 changed, 4 ahead / 0 behind main" in details(app))
            for _ in range(3):  # refreshes redraw the details from what was asked once
                app.refresh_data()
                await pilot.pause(0.1)
            await until(pilot, app, lambda: "4 ahead" in details(app))
            assert source.asked == ["w"]
            choose(app, "plain")  # no worktree: nothing asked
            await until(pilot, app, lambda: "[b]plain" in details(app) or "plain " in details(app))
            choose(app, "w")  # shown again: asked again (the counts may have moved)
            await until(pilot, app, lambda: source.asked == ["w", "w"])

    asyncio.run(run())


def test_the_status_column_marks_an_agent_whose_changes_collide() -> None:
    """Issue 38: a worktree agent whose changes overlap another's reads `[collides: B]`, as in
    `roost ls`."""
    from roost.tui.demo import item

    seen = item("api", "idle")
    marked = dataclasses.replace(
        seen, agent=dataclasses.replace(seen.agent, collides_json='["web"]')
    )
    assert rows.status_cell(marked) == "idle [collides: web]"
    assert rows.status_cell(seen) == "idle"
