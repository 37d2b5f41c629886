"""The TUI, headless: keys drive real actions on a real tmux test server; snapshots of the main
screens come from canned data (roost/tui/demo.py) so they do not depend on pids or clocks."""

from __future__ import annotations

import asyncio
import contextlib
import json

import pytest
from textual.widgets import Input, Select
from textual.worker import WorkerCancelled, WorkerError

from roost.core import present
from roost.providers import traits
from roost.tui import actions
from roost.tui.app import FormScreen, HelpScreen, RoostApp, TabScreen
from roost.tui.demo import NOW, StaticSource, item
from roost.tui.live import LiveSource
from roost.tui.source import Snapshot

from conftest import Env


async def settle(pilot, app: RoostApp, until=None, timeout: float = 20.0) -> None:
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


def select(app: RoostApp, name: str) -> None:
    table = app.query_one("#agents")
    index = next(i for i, r in enumerate(app.rows) if r.item and r.item.agent.name == name)
    table.move_cursor(row=index)  # type: ignore[attr-defined]


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
            assert "3 agents" in str(app.query_one("#counts").content)
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
            await settle(pilot, app, lambda: "echo: hello tui" in live.roost(
                "capture", "alpha").stdout)

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
            banner = str(app.query_one("#banner").content)
            assert "restore would bring back 2 agents" in banner and "alpha" in banner
            assert live.panes() == []  # it never starts agents by itself
            await pilot.press("r")
            await settle(pilot, app, lambda: sum(a["state"] == "running"
                                                  for a in live.ls().values()) == 2)
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
            await pilot.press("bracketright")  # move alpha right of beta
            await settle(pilot, app, lambda: json.loads(live.roost(
                "tab", "ls", "--json").stdout)[0]["tiles"] == ["beta", "alpha"])
            await pilot.press("minus")  # stack them
            await settle(pilot, app)
            exported = json.loads(live.roost("export").stdout)
            assert exported["tabs"][0]["layout"]["split"] == "h"

    asyncio.run(run())


def test_errors_show_in_the_app_without_crashing_it() -> None:
    boom = item("boom", "working", minutes=1, pinned=True)  # like SNAPSHOT's first agent
    source = StaticSource(Snapshot(items=[boom], tab_tiles=[("main", ["boom"])], pins=[]),
                          failures={"kill": "kill failed: boom"})

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
        app = RoostApp(source=source, attacher=lambda argv: None, refresh_every=0,
                       clock=lambda: NOW)
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot, app, lambda: app.rows)
            await pilot.press("k")  # the cursor is on a group header: no agent selected
            await settle(pilot, app)
            assert source.calls == []
            select(app, "frontend")
            await pilot.press("w", "P")
            await settle(pilot, app, lambda: len(source.calls) == 2)
            await pilot.press("r")
            await settle(pilot, app, lambda: len(source.calls) == 3)
            assert source.calls == [("wake", "frontend"), ("toggle_pin", "frontend"),
                                    ("restore",)]
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
            assert {key: default for key, _label, default in form.fields}["provider"] == \
                list(traits.BY_NAME)
            form.query_one("#f-provider", Select).value = "command"
            form.query_one("#f-args", Input).value = "tail -f 'app log'"
            await pilot.press(*"logs", "enter")
            await settle(pilot, app, lambda: source.calls)
            assert source.calls == [("spawn", "logs", "command", ".", "main",
                                     ("tail", "-f", "app log"))]

    asyncio.run(run())


SIZE = (130, 36)


def test_snapshot_main_screen(snap_compare) -> None:
    async def before(pilot) -> None:
        await pilot.pause(0.5)
        await pilot.app.workers.wait_for_complete()
        await pilot.press("down")
        await pilot.pause(0.5)
        await pilot.app.workers.wait_for_complete()

    app = RoostApp(source=StaticSource(), attacher=lambda argv: None, refresh_every=0,
                   clock=lambda: NOW)
    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_snapshot_tab_view(snap_compare) -> None:
    async def before(pilot) -> None:
        await pilot.pause(0.5)
        await pilot.app.workers.wait_for_complete()
        await pilot.press("down", "t")
        await pilot.pause(0.5)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause(0.3)

    app = RoostApp(source=StaticSource(), attacher=lambda argv: None, refresh_every=0,
                   clock=lambda: NOW)
    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_snapshot_help(snap_compare) -> None:
    app = RoostApp(source=StaticSource(), attacher=lambda argv: None, refresh_every=0,
                   clock=lambda: NOW)
    assert snap_compare(app, terminal_size=SIZE, press=["question_mark"])


@pytest.mark.tmux
def test_open_builds_a_plain_tmux_view_of_a_tab(live: Env) -> None:
    from roost.ops import tabview
    from roost.ops.context import open_app

    live.roost("spawn", "delta", "--cwd", str(live.tmp / "work"), "--split", "h")
    live.roost("kill", "alpha")  # opening wakes the tiles it shows
    app = open_app()
    argv = tabview.open_tab(app, "main")
    view = ["tmux", "-L", f"{live.socket}-view"]
    try:
        assert argv[-3:] == ["attach-session", "-t", "=view-main"]
        assert live.ls()["alpha"]["state"] == "running"
        import subprocess

        panes = subprocess.run([*view, "list-panes", "-t", "=view-main", "-F",
                                "#{pane_current_command} #{pane_left} #{pane_top}"],
                               env=live.env, capture_output=True, text=True, check=True
                               ).stdout.split("\n")
        panes = [p.split() for p in panes if p]
        assert len(panes) == 3 and all(p[0] in ("tmux", "env") for p in panes)
        lefts, tops = {int(p[1]) for p in panes}, {int(p[2]) for p in panes}
        assert len(lefts) == 2 and len(tops) == 2  # alpha | (beta over delta)
        # each pane is a client of roost's server, attached to an agent's home
        clients = live.wait_for(lambda: len(live.tmux("list-clients", "-F",
                                                      "#{client_session}").split()) == 3
                                and live.tmux("list-clients", "-F", "#{client_session}"),
                                what="three clients")
        assert sorted(str(clients).split()) == ["alpha", "beta", "delta"]
    finally:
        subprocess.run([*view, "kill-server"], env=live.env, capture_output=True)
