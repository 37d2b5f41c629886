"""The TUI's fleet view (issue 24 part 3): grouping by host, pure, and the app on canned data
(no ssh: tests/test_tui_hosts.py drives a real host)."""

from __future__ import annotations

import asyncio
import copy
import dataclasses

from textual.widgets import Static

from roost.core.fleet import HostView
from roost.tui import rows
from roost.tui.app import RoostApp
from roost.tui.demo import ITEMS, SNAPSHOT, StaticSource

TABS = [("main", ["api-fix", "api-tests"]), ("ui", ["frontend", "docs"])]


def remote(name: str, status: str = "idle", **more: object) -> dict[str, object]:
    return {"name": name, "id": f"id-{name}", "provider": "claude", "status": status, **more}


def shown(found: list[rows.Row]) -> list[str]:
    def one(r: rows.Row) -> str:
        if r.remote is not None:
            return f"  {r.host}:{r.label}"
        if r.item is not None:
            return "  " + r.label
        if r.key.startswith(rows.HOST_KEY):
            return f"# {rows.host_title(r)}"
        return f"[{r.label}]"

    return [one(r) for r in found]


def test_without_hosts_the_rows_are_the_one_machine_rows() -> None:
    local = rows.build(ITEMS, TABS, pins=[])
    assert rows.with_hosts(local, []) == local


def test_local_first_then_each_host_under_its_name_an_unreachable_one_one_line() -> None:
    local = rows.build(ITEMS[:2], [("main", ["api-fix", "api-tests"])], pins=[])
    views = [
        HostView("build", (remote("zeta", "waiting"), remote("alpha"))),
        HostView("mute", unreachable="no answer within 5 s"),
        HostView("empty"),
    ]
    assert shown(rows.with_hosts(local, views)) == [
        "# local (2)",
        "[Need you]",
        "  api-tests",
        "[Tab main]",
        "  api-fix",
        "# build (2)",
        "  build:alpha",
        "  build:zeta",
        "# mute  unreachable: no answer within 5 s",
        "# empty (0)",
    ]
    keys = [r.key for r in rows.with_hosts(local, views)]
    assert len(keys) == len(set(keys))  # a DataTable needs unique keys


def test_a_host_named_like_a_local_group_or_agent_keeps_distinct_keys() -> None:
    local = rows.build(ITEMS, TABS, pins=[])
    views = [HostView("main", (remote("api-fix"),)), HostView("local", (remote("docs"),))]
    keys = [r.key for r in rows.with_hosts(local, views)]
    assert len(keys) == len(set(keys))


def test_the_filter_reaches_remote_agents_and_keeps_their_hosts_header() -> None:
    views = [HostView("build", (remote("api"), remote("web", cwd="/srv/web")))]
    found = rows.with_hosts(rows.build(ITEMS, TABS, [], filter_text="web"), views, "web")
    assert shown(found) == ["# local (0)", "# build (1)", "  build:web"]


def test_a_remote_status_reads_as_a_local_one() -> None:
    assert rows.remote_status(remote("a", "working")) == "working"
    assert rows.remote_status({"status": None}) == "unknown"
    assert rows.remote_status(remote("a", "exited", crashed=True, exit_code=3)) == "crashed (3)"
    long = rows.remote_status(remote("a", "error", status_reason="x" * 200))
    assert long.startswith("error: xxx") and long.endswith("…") and len(long) < 60


def test_remote_details_escape_what_the_host_says() -> None:
    text = rows.remote_details(remote("a", cwd="/w/[red]x[/red]"), "build")
    assert "\\[red]" in text and "on host [b]build[/b]" in text


def snapshot_with_hosts() -> StaticSource:
    source = StaticSource(SNAPSHOT)
    source.host_views = {
        "build": HostView("build", (remote("api", "waiting"),)),
        "mute": HostView("mute", unreachable="Connection refused"),
    }
    return source


def test_remote_rows_are_read_only_but_enter_attaches_over_the_hosts_argv() -> None:
    """On canned data: keys other than Enter refuse a host's agent (saying what to do) and run
    nothing; Enter hands the attacher the source's argv for HOST:AGENT."""
    source = snapshot_with_hosts()
    attached: list[list[str]] = []

    async def run() -> None:
        app = RoostApp(source=source, attacher=attached.append, refresh_every=0)
        async with app.run_test(size=(140, 40)) as pilot:
            for _ in range(100):
                await pilot.pause(0.05)
                if any(r.remote for r in app.rows) and any(r.unreachable for r in app.rows):
                    break
            titles = [rows.host_title(r) for r in app.rows if r.key.startswith(rows.HOST_KEY)]
            assert titles[0].startswith("local (")
            assert titles[1:] == ["build (1)", "mute  unreachable: Connection refused"]
            index = next(i for i, r in enumerate(app.rows) if r.remote)
            app.query_one("#agents").move_cursor(row=index)  # type: ignore[attr-defined]
            await pilot.pause(0.1)
            assert "on host [b]build[/b]" in str(app.query_one("#details", Static).content)
            before = list(source.calls)
            for key in ("k", "w", "s", "p", "b", "P", "a"):
                await pilot.press(key)
                await pilot.pause(0.05)
            assert source.calls == before  # nothing ran here for a remote row
            assert app.screen is app.screen_stack[0]  # no form opened
            await pilot.press("enter")
            for _ in range(100):
                await pilot.pause(0.05)
                if attached:
                    break
            assert attached == [["ssh", "-tt", "--", "build", "roost attach api"]]

    asyncio.run(run())


def test_hosts_that_never_answer_block_neither_local_refreshes_nor_quitting() -> None:
    """More silent hosts than Textual has worker threads: this machine's rows still refresh,
    and the app quits at once (no ask of a host is waited for)."""
    import threading
    import time
    from dataclasses import replace

    gate = threading.Event()

    class Silent(StaticSource):
        def host_view(self, host: str) -> HostView:
            gate.wait(30)  # an ssh that takes its whole time limit
            return HostView(host, unreachable="no answer")

    source = Silent(SNAPSHOT)
    source.host_views = {f"h{i}": HostView(f"h{i}") for i in range(12)}

    async def run() -> float:
        app = RoostApp(source=source, attacher=lambda argv: None, refresh_every=0)
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.pause(0.3)
            source.snap = replace(SNAPSHOT, items=SNAPSHOT.items[:1])
            app.refresh_data()
            for _ in range(100):
                await pilot.pause(0.05)
                if len([r for r in app.rows if r.item]) == 1:
                    break
            assert [r.label for r in app.rows if r.item] == [SNAPSHOT.items[0].agent.name]
            began = time.monotonic()
        return time.monotonic() - began

    try:
        took = asyncio.run(run())
    finally:
        gate.set()
    assert took < 3, took


def test_what_a_host_or_a_folder_says_reaches_no_cell_or_panel_raw() -> None:
    """Issue 35: a host's strings (its agent's name, status words, folder) and a local folder's
    name are shown with their controls as text in the rows, the header and the panels."""
    hostile = "x\x1b]52;c;ZXZpbA==\x07\x9b2J\u202e[red]"
    agent = remote(hostile, "error", status_reason=hostile, cwd=f"/w/{hostile}")
    panel = rows.remote_details(agent, "build")
    title = rows.host_title(rows.Row("host:b", "b", host="b", unreachable=hostile))
    header = rows.host_details(rows.Row("host:b", "b", host="b", unreachable=hostile))
    cells = [rows.fit(hostile, 80), rows.name_cell(hostile, hostile, 80)]
    cells.append(rows.fit(rows.remote_status(agent), 80))
    for text in (panel, header, *cells, rows.fit(title, 80)):
        assert not any(ch in text for ch in "\x1b\x07\x9b\u202e"), repr(text)
        assert "\\x1b]52" in text, text
    assert "\\[red]" in panel  # and its markup is text too
    local = copy.deepcopy(ITEMS[0])  # the demo's own stays as it is
    local = dataclasses.replace(local, agent=local.agent.replace(cwd=f"/w/{hostile}"))
    shown_local = rows.details(local)
    assert "\x1b" not in shown_local and "\\[red]" in shown_local
