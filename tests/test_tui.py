"""The TUI, headless: keys drive real actions on a real tmux test server; snapshots of the main
screens come from canned data (roost/tui/demo.py) so they do not depend on pids or clocks."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, timedelta, timezone, tzinfo
from typing import Any

import pytest
from textual.color import Color
from textual.command import CommandList
from textual.containers import Vertical
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import DataTable, Input, OptionList, Select, Static
from textual.worker import WorkerCancelled, WorkerError

from roost.core import present, questions
from roost.core import workspace as ws
from roost.providers import traits
from roost.tui import actions
from roost.tui.app import AnswerScreen, FormScreen, HelpScreen, RoostApp, TabScreen
from roost.tui.demo import NOW, SCREENS, StaticSource, item
from roost.tui.live import LiveSource
from roost.tui.source import Snapshot

from conftest import Env


async def settle(
    pilot: Pilot[Any],
    app: RoostApp,
    until: Callable[[], object] | None = None,
    timeout: float = 20.0,
) -> None:
    """Let workers finish and the screen catch up (optionally until a condition holds)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        await pilot.pause(0.1)
        # an exclusive worker (a refresh) replaced by a newer one: fine
        with contextlib.suppress(WorkerCancelled, WorkerError):
            await app.workers.wait_for_complete()
        await pilot.pause(0.05)
        if until is None or until():
            return
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("timed out waiting in the TUI")


def agents_table(app: RoostApp) -> DataTable[Any]:
    table: DataTable[Any] = app.query_one("#agents", DataTable)
    return table


def selected_name(app: RoostApp) -> str | None:
    """The name of the agent the list's cursor is on (None: no agent's row)."""
    it = app.selected()
    return it.agent.name if it else None


def select(app: RoostApp, name: str) -> None:
    index = next(i for i, r in enumerate(app.rows) if r.item and r.item.agent.name == name)
    agents_table(app).move_cursor(row=index)


@pytest.fixture
def live(world: Env, monkeypatch: pytest.MonkeyPatch) -> Env:
    for key, value in world.env.items():
        monkeypatch.setenv(key, value)
    for name in ("alpha", "beta"):
        world.roost("spawn", name, "--cwd", str(world.tmp / "work"))
    world.roost("spawn", "gamma", "--cwd", str(world.tmp / "work"), "--detached")
    world.wait_for(lambda: all(a["status"] == "idle" for a in world.ls().values()), what="idle")
    return world


@pytest.mark.tmux
def test_keys_drive_real_actions(live: Env) -> None:
    attached: list[list[str]] = []

    async def run() -> None:
        app = RoostApp(source=LiveSource(), attacher=attached.append, refresh_every=0)
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(pilot, app, lambda: len([r for r in app.rows if r.item]) == 3)
            assert "3 agents" in str(app.query_one("#counts", Static).content)
            labels = [r.label for r in app.rows]
            assert labels == ["Tab main", "alpha", "beta", "Parked", "gamma"]

            select(app, "alpha")
            await pilot.press("k")
            await settle(pilot, app, lambda: live.ls()["alpha"]["status"] == "stopped")
            await pilot.press("w")
            await settle(pilot, app, lambda: live.ls()["alpha"]["state"] == "running")

            select(app, "beta")
            await pilot.press("p")
            await settle(pilot, app, lambda: live.ls()["beta"]["placement"] == "detached")
            select(app, "beta")
            await pilot.press("b")
            await settle(pilot, app, lambda: live.ls()["beta"]["placement"] == "buried")
            assert live.ls()["beta"]["state"] == "hibernated"
            await pilot.press("B")  # show buried
            await settle(pilot, app, lambda: any(r.label == "beta" for r in app.rows))
            select(app, "beta")
            await pilot.press("u")
            await settle(pilot, app, lambda: live.ls()["beta"]["state"] == "running")
            select(app, "gamma")
            await pilot.press("P")
            await settle(pilot, app, lambda: live.ls()["gamma"]["pinned"])

            select(app, "alpha")
            await pilot.press("s")
            await pilot.press(*"hello tui")
            await pilot.press("enter")
            await settle(
                pilot, app, lambda: "echo: hello tui" in live.roost("capture", "alpha").stdout
            )

            await pilot.press("n")
            await pilot.press(*"delta")
            await pilot.press("tab", "tab")  # provider (claude), then cwd
            for _ in range(3):
                await pilot.press("backspace")
            await pilot.press(*str(live.tmp / "work"))
            await pilot.press("enter")
            await settle(pilot, app, lambda: "delta" in live.ls())

            live.roost("kill", "gamma")
            await settle(pilot, app)
            select(app, "gamma")
            await pilot.press("enter")  # attach: wakes it first
            await settle(pilot, app, lambda: attached)
            assert attached[-1][-3:-1] == ["attach-session", "-t"]
            assert live.ls()["gamma"]["state"] == "running"

            await pilot.press("slash", *"gam")
            await settle(pilot, app)
            assert [r.label for r in app.rows if r.item] == ["gamma"]
            await pilot.press("escape")
            await pilot.press("question_mark")
            await settle(pilot, app)
            assert isinstance(app.screen, HelpScreen)

    asyncio.run(run())


@pytest.mark.tmux
def test_restore_from_the_tui_after_the_server_died(live: Env) -> None:
    live.tmux("kill-server")

    async def run() -> None:
        app = RoostApp(source=LiveSource(), attacher=lambda argv: None, refresh_every=0)
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(pilot, app, lambda: app.rows)
            banner = str(app.query_one("#banner", Static).content)
            assert "restore would bring back 2 agents" in banner and "alpha" in banner
            assert live.panes() == []  # it never starts agents by itself
            await pilot.press("r")
            await settle(
                pilot, app, lambda: sum(a["state"] == "running" for a in live.ls().values()) == 2
            )
            states = {n: a["state"] for n, a in live.ls().items()}
            assert states == {"alpha": "running", "beta": "running", "gamma": "hibernated"}

    asyncio.run(run())


@pytest.mark.tmux
def test_tab_view_edits_change_the_stored_layout(live: Env) -> None:
    async def run() -> None:
        app = RoostApp(source=LiveSource(), attacher=lambda argv: None, refresh_every=0)
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(pilot, app, lambda: app.rows)
            select(app, "alpha")
            await pilot.press("t")
            await settle(pilot, app)
            assert isinstance(app.screen, TabScreen)
            view = app.screen

            def drawn() -> list[str]:  # the tiles on screen, in order
                return [str(t.id).removeprefix("tile-") for t in view.query(".tile")]

            assert drawn() == ["alpha", "beta"]
            await pilot.press("bracketright")  # move alpha right of beta
            await settle(
                pilot,
                app,
                lambda: (
                    json.loads(live.roost("tab", "ls", "--json").stdout)[0]["tiles"]
                    == ["beta", "alpha"]
                ),
            )
            # redrawn with no refresh timer here (a loaded machine may take a moment)
            await settle(pilot, app, lambda: drawn() == ["beta", "alpha"])
            await pilot.press("minus")  # stack them (alpha keeps the focus: it moved)
            await settle(
                pilot, app, lambda: isinstance(view.query_one("#tiles").children[0], Vertical)
            )
            exported = json.loads(live.roost("export").stdout)
            assert exported["tabs"][0]["layout"]["split"] == "h"
            await pilot.press("x")  # close alpha's tile: buried, gone from the view
            await settle(pilot, app, lambda: live.ls()["alpha"]["placement"] == "buried")
            await settle(pilot, app)
            assert drawn() == ["beta"]

    asyncio.run(run())


def test_errors_show_in_the_app_without_crashing_it() -> None:
    boom = item("boom", "working", minutes=1, pinned=True)  # like SNAPSHOT's first agent
    source = StaticSource(
        Snapshot(items=[boom], tab_tiles=[("main", ["boom"])], pins=[]),
        failures={"kill": "kill failed: boom"},
    )

    async def run() -> None:
        app = RoostApp(source=source, attacher=lambda argv: None, refresh_every=0)
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot, app, lambda: app.rows)
            select(app, "boom")
            await pilot.press("k")
            await settle(pilot, app)
            assert ("kill", "boom") in source.calls
            assert any("kill failed: boom" in str(n.message) for n in app._notifications)
            assert app.is_running

    asyncio.run(run())


def test_every_key_of_the_table_has_its_action_in_the_app() -> None:
    for action in actions.ACTIONS:
        name = "operate" if action.binding.startswith("operate(") else action.name
        assert callable(getattr(RoostApp, f"action_{name}", None)), action.name


def test_keys_run_the_sources_operations_and_show_the_clis_words() -> None:
    source = StaticSource()

    async def run() -> None:
        app = RoostApp(
            source=source, attacher=lambda argv: None, refresh_every=0, clock=lambda: NOW
        )
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot, app, lambda: app.rows)
            assert selected_name(app) == "api-tests"  # the first agent: it needs you
            await pilot.press("up", "k")  # the cursor on a group header: no agent selected
            await settle(pilot, app)
            assert source.calls == []
            select(app, "frontend")
            await pilot.press("w", "P")
            await settle(pilot, app, lambda: len(source.calls) == 2)
            await pilot.press("r")
            await settle(pilot, app, lambda: len(source.calls) == 3)
            assert source.calls == [("wake", "frontend"), ("toggle_pin", "frontend"), ("restore",)]
            shown = [str(n.message) for n in app._notifications]
            assert "select an agent first" in shown
            assert present.woke("frontend", True, 4242, "frontend") in shown
            assert "pinned frontend" in shown
            assert any(m.startswith("restored in 0.0s: 4 live expected") for m in shown)

    asyncio.run(run())


def test_the_new_agent_form_offers_every_provider_and_passes_arguments() -> None:
    source = StaticSource()

    async def run() -> None:
        app = RoostApp(source=source, attacher=lambda argv: None, refresh_every=0)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, app, lambda: app.rows)
            await pilot.press("n")
            await settle(pilot, app)
            form = app.screen
            assert isinstance(form, FormScreen)
            assert {key: default for key, _label, default in form.fields}["provider"] == list(
                traits.BY_NAME
            )
            form.query_one("#f-provider", Select).value = "command"
            form.query_one("#f-args", Input).value = "tail -f 'app log'"
            await pilot.press(*"logs", "enter")
            await settle(pilot, app, lambda: source.calls)
            assert source.calls == [
                ("spawn", "logs", "command", ".", "main", ("tail", "-f", "app log"), None)
            ]

    asyncio.run(run())


SIZE = (130, 36)


async def shown(pilot: Pilot[Any]) -> None:
    """The first screen once its data, preview and events are in. A worker cancelled while
    waited for (an exclusive one a newer selection replaced, as a loaded machine's timing may
    have it) is no failure: the newer one is waited for instead."""
    from textual.worker import WorkerCancelled

    for _ in range(2):
        await pilot.pause(0.5)
        for _attempt in range(20):
            try:
                await pilot.app.workers.wait_for_complete()
                break
            except WorkerCancelled:
                await pilot.pause(0.05)  # the cancelled one leaves the manager as it ends


def test_snapshot_main_screen(snap_compare: Callable[..., bool]) -> None:
    # the agent that waits, with its dialog: selected from the start, the first of "Need you"
    app = RoostApp(
        source=StaticSource(),
        attacher=lambda argv: None,
        refresh_every=0,
        clock=lambda: NOW,
        zone=UTC,
    )
    assert snap_compare(app, terminal_size=SIZE, run_before=shown)


def test_snapshot_80x24_shows_the_footer(snap_compare: Callable[..., bool]) -> None:
    app = RoostApp(
        source=StaticSource(),
        attacher=lambda argv: None,
        refresh_every=0,
        clock=lambda: NOW,
        zone=UTC,
    )
    assert snap_compare(app, terminal_size=(80, 24), run_before=shown)


def test_snapshot_tab_view(snap_compare: Callable[..., bool]) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await shown(pilot)
        await pilot.press("t")
        await shown(pilot)
        await pilot.pause(0.3)

    app = RoostApp(
        source=StaticSource(),
        attacher=lambda argv: None,
        refresh_every=0,
        clock=lambda: NOW,
        zone=UTC,
    )
    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_snapshot_help(snap_compare: Callable[..., bool]) -> None:
    app = RoostApp(
        source=StaticSource(),
        attacher=lambda argv: None,
        refresh_every=0,
        clock=lambda: NOW,
        zone=UTC,
    )
    assert snap_compare(app, terminal_size=SIZE, press=["question_mark"])


@pytest.mark.tmux
def test_open_builds_a_plain_tmux_view_of_a_tab(live: Env) -> None:
    from roost.ops import tabview
    from roost.ops.root import open_app

    live.roost("spawn", "delta", "--cwd", str(live.tmp / "work"), "--split", "h")
    live.roost("kill", "alpha")  # opening wakes the tiles it shows
    app = open_app()
    argv = tabview.open_tab(app, "main")
    view = ["tmux", "-L", f"{live.socket}-view"]
    try:
        assert argv[-3:] == ["attach-session", "-t", "=view-main"]
        assert live.ls()["alpha"]["state"] == "running"
        import subprocess

        panes = subprocess.run(
            [
                *view,
                "list-panes",
                "-t",
                "=view-main",
                "-F",
                "#{pane_current_command} #{pane_left} #{pane_top}",
            ],
            env=live.env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split("\n")
        fields = [p.split() for p in panes if p]
        assert len(fields) == 3 and all(p[0] in ("tmux", "env") for p in fields)
        lefts, tops = {int(p[1]) for p in fields}, {int(p[2]) for p in fields}
        assert len(lefts) == 2 and len(tops) == 2  # alpha | (beta over delta)

        # each pane is a client of roost's server, attached to an agent's home (the roost
        # service's read-only control client, on its own session, is not one of them)
        def homes_attached() -> list[str]:
            listed = live.tmux("list-clients", "-F", "#{client_control_mode} #{client_session}")
            return sorted(line.split()[1] for line in listed.splitlines() if line[:1] == "0")

        clients = live.wait_for(
            lambda: len(homes_attached()) == 3 and homes_attached(), what="three clients"
        )
        assert clients == ["alpha", "beta", "delta"]
    finally:
        subprocess.run([*view, "kill-server"], env=live.env, capture_output=True)


# ---- issue 11: the TUI a person trusts -----------------------------------------------------------
def app_on(source: StaticSource, zone: tzinfo = UTC) -> RoostApp:
    return RoostApp(
        source=source, attacher=lambda argv: None, refresh_every=0, clock=lambda: NOW, zone=zone
    )


def shown_text(widget: Widget) -> str:
    return str(widget.render())


class TallScreens(StaticSource):
    """Every agent's screen is 200 lines long, its prompt on the last line, blank rows below."""

    def preview(self, name: str, lines: int = 60, pane_id: str | None = None) -> str:
        return "\n".join(f"line {i}" for i in range(200)) + f"\n❯ prompt of {name}\n\n\n"


def test_the_preview_shows_the_bottom_of_the_screen() -> None:
    async def run() -> None:
        app = app_on(TallScreens())
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot, app, lambda: "❯" in shown_text(app.query_one("#preview")))
            text = shown_text(app.query_one("#preview"))
            assert text.rstrip().endswith("❯ prompt of api-tests")
            assert "line 199" in text and "line 0\n" not in text
            # as many lines as the panel holds, the prompt on its last row
            assert (
                len(text.rstrip("\n").split("\n")) == app.query_one("#preview").content_size.height
            )

    asyncio.run(run())


def test_columns_keep_their_widths_when_a_status_changes() -> None:
    source = StaticSource()

    async def run() -> None:
        app = app_on(source)
        async with app.run_test(size=(130, 36)) as pilot:
            await settle(pilot, app, lambda: app.rows)
            before = [c.width for c in agents_table(app).columns.values()]
            waiting = replace(
                item("frontend", "waiting", provider="codex", tab="ui", minutes=12),
                status_reason="Do you want to proceed with this very long question?",
            )
            items = [waiting if o.agent.name == "frontend" else o for o in source.snap.items]
            source.snap = replace(source.snap, items=items)
            app.refresh_data()
            await settle(pilot, app, lambda: any(r.item and r.item.status_reason for r in app.rows))
            assert [c.width for c in agents_table(app).columns.values()] == before

    asyncio.run(run())


def test_the_cursor_stands_out() -> None:
    async def run() -> None:
        app = app_on(StaticSource())
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot, app, lambda: app.rows)
            table = agents_table(app)
            accent = Color.parse(app.current_theme.accent)
            for focused in (True, False):  # also while the filter box has the focus
                if not focused:
                    await pilot.press("slash")
                    await settle(pilot, app)
                assert table.has_focus is focused
                cursor = table.get_component_styles("datatable--cursor").background
                assert max(abs(a - b) for a, b in zip(cursor.rgb, accent.rgb, strict=True)) < 4

    asyncio.run(run())


def test_an_empty_workspace_says_how_to_start() -> None:
    async def run() -> None:
        app = app_on(StaticSource(Snapshot()))
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot, app)
            empty = app.query_one("#empty")
            assert empty.display and "Press n for a new agent" in shown_text(empty)
            await pilot.press("n")
            await settle(pilot, app)
            assert isinstance(app.screen, FormScreen)

    asyncio.run(run())


def test_a_parked_agent_is_placed_on_a_tab_and_u_says_what_to_do() -> None:
    source = StaticSource()

    async def run() -> None:
        app = app_on(source)
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot, app, lambda: app.rows)
            select(app, "migrations")  # parked
            await pilot.press("u")
            await settle(pilot, app)
            assert source.calls == []
            shown = [str(n.message) for n in app._notifications]
            assert "migrations is parked, not buried: press a to place it on a tab" in shown
            await pilot.press("a")
            await settle(pilot, app)
            form = app.screen
            assert isinstance(form, FormScreen)
            assert form.query_one("#f-tab", Input).value == "main"  # the current tab
            form.query_one("#f-tab", Input).value = "review"
            await pilot.press("enter")
            await settle(pilot, app, lambda: source.calls)
            assert source.calls == [("place", "migrations", "review")]
            assert not isinstance(app.screen, FormScreen)
            assert "migrations is a tile of review (pid 4242)" in [
                str(n.message) for n in app._notifications
            ]
            select(app, "api-tests")  # a tile already: nothing to place
            await pilot.press("a")
            await settle(pilot, app)
            assert not isinstance(app.screen, FormScreen)
            assert any(
                "api-tests is a tile of main already" in str(n.message) for n in app._notifications
            )

    asyncio.run(run())


def test_the_command_palette_offers_roosts_actions() -> None:
    source = StaticSource()

    async def run() -> None:
        app = app_on(source)
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot, app, lambda: app.rows)
            select(app, "frontend")
            await pilot.press("ctrl+p")
            await settle(pilot, app)
            await pilot.press(*"wake")
            await settle(
                pilot,
                app,
                lambda: (
                    "wake (w)"
                    in str(app.screen.query_one(CommandList).get_option_at_index(0).prompt)
                ),
            )
            await pilot.press("enter")
            await settle(pilot, app, lambda: source.calls)
            assert source.calls == [("wake", "frontend")]

    asyncio.run(run())


def test_the_new_agent_form_keeps_what_was_typed_and_says_what_is_wrong() -> None:
    source = StaticSource(failures={"spawn": "name logs is taken"})

    async def run() -> None:
        app = app_on(source)
        async with app.run_test(size=(100, 40)) as pilot:
            await settle(pilot, app, lambda: app.rows)
            await pilot.press("n")
            await settle(pilot, app)
            form = app.screen
            assert isinstance(form, FormScreen)
            assert [key for key, _label, _default in form.fields] == [
                "name",
                "provider",
                "cwd",
                "tab",
                "prompt",
                "args",
            ]
            form.query_one("#f-args", Input).value = "--model 'unclosed"
            form.query_one("#f-prompt", Input).value = "fix the login test"
            await pilot.press(*"logs", "enter")  # Enter in a field submits
            await settle(pilot, app)
            error = form.query_one("#form-error")
            assert app.screen is form and "arguments: No closing quotation" in shown_text(error)
            assert source.calls == []
            form.query_one("#f-args", Input).value = "--model opus"
            await pilot.press("enter")
            await settle(pilot, app, lambda: source.calls)
            assert app.screen is form and "name logs is taken" in shown_text(error)
            assert form.values()["name"] == "logs"  # kept
            source.failures.clear()
            await pilot.press("enter")
            await settle(pilot, app, lambda: app.screen is not form)
            assert source.calls[-1] == (
                "spawn",
                "logs",
                "claude",
                ".",
                "main",
                ("--model", "opus"),
                "fix the login test",
            )

    asyncio.run(run())


def test_the_tab_view_switches_tabs_and_balances() -> None:
    source = StaticSource()

    async def run() -> None:
        app = app_on(source)
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot, app, lambda: app.rows)
            await pilot.press("E")  # on the main screen: the current tab
            await settle(pilot, app, lambda: source.calls)
            await pilot.press("t")
            await settle(pilot, app)
            view = app.screen
            assert isinstance(view, TabScreen) and view.tab == "main"
            assert view.query("#tile-api-fix") and not view.query("#tile-frontend")
            await pilot.press("tab")
            await settle(pilot, app)
            assert view.tab == "ui" and view.query("#tile-frontend") and view.query("#tile-docs")
            assert not view.query("#tile-api-fix")
            await pilot.press("E")
            await settle(pilot, app, lambda: len(source.calls) == 2)
            assert source.calls == [("balance_tab", "main"), ("balance_tab", "ui")]
            await pilot.press("shift+tab")
            await settle(pilot, app)
            assert view.tab == "main"

    asyncio.run(run())


def test_event_times_in_the_details_are_in_the_users_zone() -> None:
    india = timezone(timedelta(hours=5, minutes=30))

    async def run() -> None:
        app = app_on(StaticSource(), zone=india)
        async with app.run_test(size=(130, 36)) as pilot:
            await settle(pilot, app, lambda: "started" in shown_text(app.query_one("#details")))
            assert "17:28:00 started" in shown_text(app.query_one("#details"))  # 11:58 UTC

    asyncio.run(run())


def test_the_readme_lists_every_key_and_shows_the_snapshot() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text()
    section = readme[readme.index("## The TUI") : readme.index("## Install and run")]
    for action in actions.ACTIONS:
        key = "Enter" if action.key == "enter" else f"`{actions.key_name(action)}`"
        assert key in section, action.name
    assert "](docs/tui.svg)" in section
    # the README's screenshot is the main screen's snapshot (regenerate both together)
    snapshot = root / "tests" / "__snapshots__" / "test_tui" / "test_snapshot_main_screen.svg"
    assert (root / "docs" / "tui.svg").read_bytes() == snapshot.read_bytes()


@pytest.mark.tmux
def test_place_balance_and_the_screens_bottom_on_a_real_tmux(live: Env) -> None:
    async def run() -> None:
        app = RoostApp(source=LiveSource(), attacher=lambda argv: None, refresh_every=0)
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot, app, lambda: len([r for r in app.rows if r.item]) == 3)
            assert selected_name(app) == "alpha"
            await settle(pilot, app, lambda: "❯" in shown_text(app.query_one("#preview")))
            assert shown_text(app.query_one("#preview")).rstrip().split("\n")[-1].startswith("❯")

            select(app, "gamma")  # parked
            await pilot.press("u")
            await settle(pilot, app)
            assert live.ls()["gamma"]["placement"] == "detached"
            await pilot.press("a", "enter")  # the current tab: main
            await settle(pilot, app, lambda: live.ls()["gamma"]["placement"] == "tile")
            assert live.ls()["gamma"]["tab"] == "main"
            assert [r.label for r in app.rows] == ["Tab main", "alpha", "beta", "gamma"]

            await pilot.press("E")
            await settle(
                pilot,
                app,
                lambda: any(
                    "tab main balanced: 3 tiles" in str(n.message) for n in app._notifications
                ),
            )
            exported = json.loads(live.roost("export").stdout)
            layout = exported["tabs"][0]["layout"]
            assert layout == ws.grid(ws.leaves(layout))  # an even grid, tiles in order

    asyncio.run(run())


def test_the_tui_writes_each_alert_of_a_snapshot_to_its_terminal_once() -> None:
    """Notifications to the person (issue 21, part 4): the terminal channel of the TUI."""
    written: list[str] = []

    async def run() -> None:
        app = app_on(StaticSource(Snapshot(alerts=["\x1b]9;roost: api is waiting\x07\x07"])))
        app.write_terminal = written.append  # type: ignore[method-assign,assignment]
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot, app)
            app.apply_snapshot(Snapshot())
            await settle(pilot, app)

    asyncio.run(run())
    assert written == ["\x1b]9;roost: api is waiting\x07\x07"]


def test_a_tokens_column_shows_what_each_agent_used_once_any_did() -> None:
    """Issue 23 part 4: the stored usage per agent, short (no file read by the TUI)."""
    source = StaticSource()

    async def run() -> None:
        app = app_on(source)
        async with app.run_test(size=(130, 36)) as pilot:
            await settle(pilot, app, lambda: app.rows)
            labels = [str(c.label) for c in agents_table(app).columns.values()]
            assert "tokens" not in labels  # nobody used any: no column
            used = {source.snap.items[0].agent.id: 1_234_567}
            source.snap = replace(source.snap, usage=used)
            app.refresh_data()
            await settle(pilot, app, lambda: len(agents_table(app).columns) == 5)
            table = agents_table(app)
            first = next(i for i, r in enumerate(app.rows) if r.item is source.snap.items[0])
            assert table.get_row_at(first)[-1] == "1.23M"

    asyncio.run(run())


def test_a_refresh_that_lands_while_the_app_closes_is_dropped() -> None:
    """A refresh worker whose snapshot arrives as the app closes (its widgets already removed)
    must not fail the app: seen on a loaded machine as `NoMatches: '#agents'` at exit."""

    async def run() -> None:
        app = app_on(StaticSource())
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot, app, lambda: app.rows)
            await app.query_one("#main").remove()  # as the app's close removes its widgets
            app.apply_snapshot(Snapshot())
            app._append_events("api-fix", "an event")
            assert app.snapshot == Snapshot()

    asyncio.run(run())


# ---- issue 34: who needs you first, and answering them -------------------------------------------
def notes(app: RoostApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


def told(app: RoostApp) -> list[str]:
    """Every note the app shows from now on, kept: a note with a timeout (the 3 s "answering
    …") may be gone from the screen before a loaded machine's next one arrives."""
    said: list[str] = []
    shown = app.notify

    def keep(message: str, *args: Any, **kwargs: Any) -> None:
        said.append(str(message))
        shown(message, *args, **kwargs)

    app.notify = keep  # type: ignore[method-assign]
    return said


def test_the_agents_that_need_you_are_listed_first_with_their_question() -> None:
    async def run() -> None:
        app = app_on(StaticSource())
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, app, lambda: app.rows)
            header = shown_text(app.query_one("#counts"))
            assert header.endswith("·  2 need you"), header
            assert [r.label for r in app.rows[:3]] == ["Need you", "api-tests", "migrations"]
            assert [r.label for r in app.rows if r.item].count("api-tests") == 1  # once
            table = agents_table(app)
            name, _provider, status, _active = table.get_row_at(1)
            assert str(name).startswith("api-tests  Do you want to proc")  # its question
            assert str(status).strip() == "waiting"  # said once, in the name column
            assert str(table.get_row_at(0)[0]) == "▾ Need you (2)"
            assert str(table.get_row_at(2)[2]).strip() == "crashed (1)"
            assert selected_name(app) == "api-tests"  # selected from the start

    asyncio.run(run())


class Asking(StaticSource):
    """Counts the questions asked of it; `screens` overrides the canned screens (a question
    that changes while it is shown)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.asked: list[str] = []
        self.screens = dict(SCREENS)

    def preview(self, name: str, lines: int = 60, pane_id: str | None = None) -> str:
        return self.screens.get(name, "")

    def question(self, name: str) -> questions.Question:
        self.asked.append(name)
        return super().question(name)


def shown_question() -> questions.Question:
    """The question the demo's api-tests agent shows."""
    question = questions.read(SCREENS["api-tests"])
    assert question is not None
    return question


SHOWN = shown_question()


def test_answer_shows_the_choices_and_answers_the_question_shown() -> None:
    source = Asking()

    async def run() -> None:
        app = app_on(source)
        said = told(app)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, app, lambda: app.rows)
            select(app, "api-tests")
            await pilot.press("A")
            await settle(pilot, app, lambda: isinstance(app.screen, AnswerScreen))
            modal = app.screen
            assert "Do you want to proceed?" in shown_text(modal.query_one("#answer-question"))
            choices = modal.query_one("#answer-choices", OptionList)
            shown_choices = [str(choices.get_option_at_index(i).prompt) for i in range(2)]
            assert shown_choices == ["1. Yes", "2. No"]
            assert choices.highlighted == 0  # the CLI's own selection
            await pilot.press("k")  # the app's keys are not the modal's: nothing killed
            await pilot.press("down", "enter")
            await settle(pilot, app, lambda: source.calls)
            assert source.calls == [("answer", "api-tests", "2", SHOWN.fingerprint)]
            assert not isinstance(app.screen, AnswerScreen)
            await settle(pilot, app, lambda: len(said) == 2)
            assert said == [
                "answering api-tests: No…",
                present.answered("api-tests", "No", "idle", None, None),
            ]

            await pilot.press("A")  # a choice's own key answers at once
            await settle(pilot, app, lambda: isinstance(app.screen, AnswerScreen))
            await pilot.press("1")
            await settle(pilot, app, lambda: len(source.calls) == 2)
            assert source.calls[-1] == ("answer", "api-tests", "1", SHOWN.fingerprint)

            await pilot.press("A")
            await settle(pilot, app, lambda: isinstance(app.screen, AnswerScreen))
            await pilot.press("escape")  # Esc: nothing answered
            await settle(pilot, app)
            assert not isinstance(app.screen, AnswerScreen) and len(source.calls) == 2
            assert source.asked == ["api-tests"] * 3

    asyncio.run(run())


def test_answer_on_an_agent_that_asks_nothing_says_so_in_one_line() -> None:
    source = Asking()

    async def run() -> None:
        app = app_on(source)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, app, lambda: app.rows)
            for name, status in (("frontend", "idle"), ("migrations", "crashed (1)")):
                select(app, name)
                await pilot.press("A")
                await settle(pilot, app)
                assert not isinstance(app.screen, AnswerScreen)
                said = f"{name} asks nothing: it is {status}, not waiting for an answer"
                assert notes(app)[-1] == said
            assert source.asked == [] and source.calls == []  # not even read

    asyncio.run(run())


def test_an_answer_that_fails_shows_roosts_words() -> None:
    async def run() -> None:
        # its question changed while the modal showed it: the answer is refused (by the
        # fingerprint the modal was given), and the TUI says so
        source = Asking()
        app = app_on(source)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, app, lambda: app.rows)
            await pilot.press("A")
            await settle(pilot, app, lambda: isinstance(app.screen, AnswerScreen))
            source.screens["api-tests"] = "Use this API key?\n❯ 1. Yes\n  2. No\n"
            await pilot.press("enter")
            await settle(pilot, app, lambda: source.calls)
            assert source.calls == [("answer", "api-tests", "1", SHOWN.fingerprint)]
            assert any("question changed since it was shown" in n for n in notes(app))
            assert app.is_running

        # its choices cannot be read: said, and no modal opens
        source = Asking(failures={"question": "api-tests is waiting, but roost cannot read"})
        app = app_on(source)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, app, lambda: app.rows)
            await pilot.press("A")
            await settle(pilot, app, lambda: notes(app))
            assert notes(app) == ["api-tests is waiting, but roost cannot read"]
            assert not isinstance(app.screen, AnswerScreen) and source.calls == []

        # the answer itself fails (RoostError's message)
        source = Asking(failures={"answer": "pressed the answer, but it is still on screen"})
        app = app_on(source)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, app, lambda: app.rows)
            await pilot.press("A")
            await settle(pilot, app, lambda: isinstance(app.screen, AnswerScreen))
            await pilot.press("enter")
            await settle(pilot, app, lambda: len(notes(app)) == 2)
            assert notes(app) == [
                "answering api-tests: Yes…",  # while roost answers (seconds, on a live agent)
                "pressed the answer, but it is still on screen",
            ]

    asyncio.run(run())


@pytest.mark.tmux
def test_answer_a_real_agents_question_from_the_tui(live: Env) -> None:
    """The live source end to end: the waiting agent is listed first, its question is read
    off its screen, and the choice picked in the modal is pressed into its dialog (roost
    answer's own code)."""
    live.roost("send", "alpha", "ask", check=False)  # it waits for the answer
    live.wait_status("alpha", "waiting")

    async def run() -> None:
        app = RoostApp(source=LiveSource(), attacher=lambda argv: None, refresh_every=0)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, app, lambda: len([r for r in app.rows if r.item]) == 3)
            assert [r.label for r in app.rows[:2]] == ["Need you", "alpha"]
            assert shown_text(app.query_one("#counts")).endswith("1 need you")
            assert selected_name(app) == "alpha"
            await pilot.press("A")
            await settle(pilot, app, lambda: isinstance(app.screen, AnswerScreen))
            modal = app.screen
            said = shown_text(modal.query_one("#answer-question"))
            assert "Do you want to proceed?" in said  # read off its screen now
            await pilot.press("down", "enter")  # 2. No
            await settle(
                pilot,
                app,
                lambda: any(n.startswith("answered alpha: No; ") for n in notes(app)),
                timeout=60,
            )
            assert live.ls()["alpha"]["status"] != "waiting"
            await settle(pilot, app, lambda: app.rows[0].label == "Tab main")  # back in its tab

    asyncio.run(run())
