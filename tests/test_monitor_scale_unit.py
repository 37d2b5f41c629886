"""The service's monitor at scale, without tmux (fake tmux): a refresh of the panes tmux said
changed reads only those agents' files and processes, whatever the world's size (issue 21,
branch svc3: an exit at 200 agents took ~2.9 s, most of it the pipeline's per-agent look for
session ids (each codex awaiting one: its process tree's open files) and hook logs, done for
every agent at each refresh of one pane)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from roost.ops import lifecycle, observe
from roost.ops.context import App
from roost.providers import hooks
from roost.tmux.fake import FakeTmux


def test_a_refresh_of_one_pane_looks_at_that_agents_process_and_log_only(
    app: App, fake: FakeTmux, monkeypatch: pytest.MonkeyPatch
) -> None:
    app.environ.update(ROOST_CODEX_BIN="/bin/sh", ROOST_CLAUDE_BIN="/bin/sh")  # never run
    for name in ("a", "b", "c"):  # codexes that await their session id: each refresh looks
        lifecycle.spawn(app, name, provider="codex", cwd=str(app.paths.home))
    for name in ("d", "e"):  # claudes: their hook logs are read at each refresh
        lifecycle.spawn(app, name, provider="claude", cwd=str(app.paths.home))
    observe.refresh(app)
    panes = {p.agent_id: p.pane_id for p in app.tmux.list_panes() if p.agent_id}
    a = app.store.get("a")
    assert a is not None and a.provider_session_id is None
    looked: list[int] = []
    read: list[str] = []
    open_files = app.procs.open_files
    read_since = hooks.read_entries_since

    def counted_open_files(pid: int) -> list[str]:
        looked.append(pid)
        return open_files(pid)

    def counted_read(path: str, *rest: int) -> tuple[list[Any], int]:
        read.append(path)
        return read_since(path, *rest)

    monkeypatch.setattr(app.procs, "open_files", counted_open_files)
    monkeypatch.setattr(hooks, "read_entries_since", counted_read)
    observe.refresh(app, {panes[a.id]})
    assert len(looked) == 1  # a's process tree, not b's and c's
    assert read == []  # no claude's pane changed: no hook log read
    d = app.store.get("d")
    assert d is not None
    observe.refresh(app, {panes[d.id]})
    assert read == [hooks.log_path(str(app.paths.home), d.id)] and len(looked) == 1
    observe.refresh(app)  # every agent: the safety net's full look still looks at all
    assert len(looked) == 4 and len(read) == 3


def test_a_cli_event_log_line_written_while_the_service_started_is_recorded_once(
    app: App, fake: FakeTmux
) -> None:
    """A codex turn that ends while the service starts (before its monitor first looked at the
    log) is news; a line from before this run (a restarted service) is not recorded again."""
    from datetime import datetime

    from roost.service import monitor
    from roost.store import service as rows

    app.environ.update(ROOST_CODEX_BIN="/bin/sh")  # never run
    lifecycle.spawn(app, "cx", provider="codex", cwd=str(app.paths.home))
    agent = app.store.get("cx")
    launch = app.store.launch(agent.id) if agent is not None else None
    assert agent is not None and launch is not None
    started = "2026-12-02T10:00:00.400+00:00"
    with app.store.write() as c:
        rows.begin_run(c, 1, "%0", started, ["monitor"])
    at = int(datetime.fromisoformat(started).timestamp())
    log = Path(hooks.cli_log_path(str(app.paths.home), agent.id))

    def line(when: int, said: str) -> None:
        with log.open("a") as fh:
            fh.write(f'{when}\tCodexNotify\t{launch[0]}\t{{"type": "{said}"}}\n')

    line(at - 5, "before this run")
    line(at, "while it started")
    logs = monitor.HookLogs(app)
    logs.look_up()
    logs.grown()
    line(at + 10, "later")
    logs.grown()
    hooks_seen = [e.data["type"] for e in app.store.events(agent.id) if e.kind == "hook"]
    assert hooks_seen == ["while it started", "later"]
