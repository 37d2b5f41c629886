"""The TUI's diff pane (issue 38: `D`): the selected agent's change as a scrollable, coloured
list (Textual's OptionList), a comment on the highlighted line of a file's new side (`c`), the
comments sent (`S`); by Pilot on canned data, a snapshot, and LiveSource on a real worktree."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest
from test_review import git, repo, spawn_in_worktree
from test_tui import SIZE, select, settle, shown, told
from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from roost.core.errors import RoostError
from roost.review import rules
from roost.tui.app import FormScreen, RoostApp
from roost.tui.demo import CHANGE, NOW, StaticSource
from roost.tui.diffview import ConfirmScreen, DiffScreen, lines
from roost.tui.live import LiveSource

from conftest import Env

__all__ = ["repo"]  # the fixture, used by name


def app_on(source: StaticSource) -> RoostApp:
    return RoostApp(
        source=source, attacher=lambda argv: None, refresh_every=0, clock=lambda: NOW, zone=UTC
    )


def test_lines_number_the_new_side_and_put_comments_under_their_line() -> None:
    anchor = rules.Anchor(11, 11, ("        time.sleep(2 ** attempt)",), (), ())
    made = rules.Comment(1, "id", "app/retry.py", anchor, "why 2 **?", None, "sha", "t")
    outdated = rules.Comment(2, "id", "app/retry.py", anchor, "gone", None, "sha", "t")
    rows = lines(
        CHANGE,
        [rules.Seen(made, rules.OPEN, 11, 11), rules.Seen(outdated, rules.OUTDATED, None, None)],
    )
    texts = [r.text.plain for r in rows]
    at = {r.text.plain: r.at for r in rows}
    assert at["   11 +        time.sleep(2 ** attempt)"] == ("app/retry.py", 11)
    assert at["      -        time.sleep(1)"] is None  # the old side takes no comment
    below = texts.index("   11 +        time.sleep(2 ** attempt)") + 1
    assert texts[below] == "      ▸ #1 open (line 11): why 2 **?"
    head = texts.index("modified: app/retry.py  +2 -1")
    assert texts[head + 1] == "      ▸ #2 outdated (line 11): gone"  # never lost
    assert "added: docs/logo.png  binary, 2048 bytes" in texts


def test_d_shows_the_change_c_comments_on_a_line_and_s_sends() -> None:
    source = StaticSource()

    async def run() -> None:
        app = app_on(source)
        said = told(app)  # every note, kept: one with a timeout may be gone by the end
        async with app.run_test(size=(120, 32)) as pilot:
            await settle(pilot, app, lambda: app.rows)
            select(app, "api-tests")
            await pilot.press("D")
            await settle(pilot, app, lambda: isinstance(app.screen, DiffScreen) and app.screen.rows)
            screen = app.screen
            assert isinstance(screen, DiffScreen)
            box = screen.query_one("#diff", OptionList)
            box.highlighted = next(
                i for i, r in enumerate(screen.rows) if r.at == ("app/retry.py", 12)
            )
            await pilot.press("c")
            await settle(pilot, app, lambda: isinstance(app.screen, FormScreen))
            app.screen.query_one(Input).value = "log the attempt number"
            await pilot.press("enter")
            await settle(pilot, app, lambda: any(c[0] == "comment" for c in source.calls))
            comments = [c for c in source.calls if c[0] == "comment"]
            assert comments == [
                ("comment", "api-tests", "app/retry.py", 12, "log the attempt number")
            ]
            await settle(pilot, app, lambda: isinstance(app.screen, DiffScreen))
            box.highlighted = 0  # a file's head: nothing to comment on
            await pilot.press("c")
            await settle(pilot, app)
            assert isinstance(app.screen, DiffScreen)
            await pilot.press("S")
            await settle(pilot, app, lambda: ("send_review", "api-tests") in source.calls)
            assert "sent 1 comment to api-tests (hook)" in said
            assert any("pick a line" in m for m in said)
            await pilot.press("escape")
            await settle(pilot, app)
            assert not isinstance(app.screen, DiffScreen)

    asyncio.run(run())


def test_m_marks_hunks_and_m_merges_the_marked_ones_after_a_confirm() -> None:
    source = StaticSource()

    async def run() -> None:
        app = app_on(source)
        said = told(app)  # every note, kept: one with a timeout may be gone by the end
        async with app.run_test(size=(120, 32)) as pilot:
            await settle(pilot, app, lambda: app.rows)
            select(app, "api-tests")
            await pilot.press("D")
            await settle(pilot, app, lambda: isinstance(app.screen, DiffScreen) and app.screen.rows)
            screen = app.screen
            assert isinstance(screen, DiffScreen)
            box = screen.query_one("#diff", OptionList)
            await pilot.press("M")  # nothing marked: said, nothing merged
            await settle(pilot, app)
            box.highlighted = next(
                i for i, r in enumerate(screen.rows) if r.at == ("app/retry.py", 12)
            )
            await pilot.press("m")
            await settle(pilot, app, lambda: screen.marked)
            assert list(screen.marked) == [("app/retry.py", 1)]
            heads = [r.text.plain for r in screen.rows if r.text.plain.startswith("✔")]
            assert heads == ["✔ @@ -10,4 +10,5 @@  hunk 1, marked"]
            box.highlighted = 0  # the title: no hunk
            await pilot.press("m")
            await settle(pilot, app)
            assert len(screen.marked) == 1
            await pilot.press("M")
            await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.press("n")  # no: nothing merged, the mark stays
            await settle(pilot, app, lambda: isinstance(app.screen, DiffScreen))
            assert not any(c[0] == "merge_hunks" for c in source.calls) and screen.marked
            await pilot.press("M")
            await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.press("y")
            await settle(pilot, app, lambda: any(c[0] == "merge_hunks" for c in source.calls))
            merged = [c for c in source.calls if c[0] == "merge_hunks"]
            assert merged == [("merge_hunks", "api-tests", (("app/retry.py", 1, ""),))]
            await settle(pilot, app, lambda: not screen.marked)
            assert any("no hunk marked" in m for m in said)
            assert any("put the cursor on a hunk" in m for m in said)
            assert "merged api-tests (roost/api-tests) into main: 1 hunk as one commit" in said

    asyncio.run(run())


def test_snapshot_diff_pane(snap_compare: Callable[..., bool]) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await shown(pilot)
        await pilot.press("D")
        await shown(pilot)
        await pilot.pause(0.3)

    assert snap_compare(app_on(StaticSource()), terminal_size=SIZE, run_before=before)


@pytest.mark.tmux
def test_the_live_source_reads_comments_on_and_sends_a_real_change(
    world: Env, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wt = spawn_in_worktree(world, repo, "ag")
    (wt / "app.py").write_text((wt / "app.py").read_text().replace("line 3\n", "line three\n"))
    git(wt, "commit", "-qam", "three")
    for key, value in world.env.items():
        monkeypatch.setenv(key, value)
    source = LiveSource()
    d, comments = source.changes("ag")
    assert [(f.path, f.added, f.removed) for f in d.files] == [("app.py", 1, 1)] and comments == []
    said = source.comment("ag", "app.py", 3, "spell it as a digit")
    assert said == "comment #1 on app.py, line 3; send it: roost review send ag"
    _, comments = source.changes("ag")
    assert [(s.state, s.start) for s in comments] == [("open", 3)]
    # a hunk merged as the pane drew it; one drawn before the agent changed it is refused
    (wt / "app.py").write_text((wt / "app.py").read_text().replace("line 1\n", "line one\n"))
    d, _ = source.changes("ag")
    [hunk] = d.files[0].hunks
    (wt / "app.py").write_text((wt / "app.py").read_text().replace("line one\n", "line 1!\n"))
    before = git(repo, "rev-parse", "HEAD")
    with pytest.raises(RoostError, match="the diff changed since it was shown"):
        source.merge_hunks("ag", [("app.py", 1, hunk.fingerprint)])
    assert git(repo, "rev-parse", "HEAD") == before
    d, _ = source.changes("ag")
    said = source.merge_hunks("ag", [("app.py", 1, d.files[0].hunks[0].fingerprint)])
    assert said.startswith("merged ag (roost/ag) into main: 1 hunk as one commit"), said
    assert (repo / "app.py").read_text().startswith("line 1!\nline 2\nline three\n")


def test_a_preview_that_lands_under_the_diff_pane_or_after_the_app_closed_fails_nothing() -> None:
    """The preview's worker may finish while another screen is on top (the diff pane, the
    search), or once the app has closed (seen in CI: NoMatches '#preview' failed a worker):
    the main screen's preview takes it, or it is dropped."""
    from textual.widgets import Static

    app = app_on(StaticSource())

    async def run() -> None:
        async with app.run_test(size=(120, 32)) as pilot:
            await settle(pilot, app, lambda: app.rows)
            await pilot.press("D")
            await settle(pilot, app, lambda: isinstance(app.screen, DiffScreen))
            app._show_preview("api-tests", "a screen drawn late")
            preview = app.screen_stack[0].query_one("#preview", Static)
            assert preview.border_title == "api-tests — screen"

    asyncio.run(run())
    app._show_preview("api-tests", "after the app closed")  # dropped, no NoMatches
