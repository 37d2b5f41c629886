"""What the service reaps (issue 36 point 7, ops/reap.py), on the fake tmux and process table:
at its start, the processes of this roost home that outlived their pane (TERM, a grace on the
clock, KILL), one event per agent and no other process touched; the hosts' masters only after a
run that did not end cleanly; on its way out, the orphans once its tmux server is gone."""

from __future__ import annotations

import os
import signal
import threading

import pytest
from fake_app import clock_of, procs_of
from fake_procs import OTHER_UID, SERVER_PID

from roost.core.model import Agent
from roost.ops import lifecycle, reap, service
from roost.ops.context import App
from roost.service import main
from roost.store.service import Run
from roost.system.procs import HOME_TAG, TAG
from roost.tmux.fake import FakeTmux

DEAD_SERVER = "/nonexistent/fake-tmux/gone,77,0"  # TMUX of a server that died


def spawn(app: App, name: str) -> Agent:
    return lifecycle.spawn(
        app, name, provider="command", cwd=str(app.paths.home), args=("sh",)
    ).agent


def test_the_orphans_of_a_dead_server_are_stopped_and_nothing_else(
    app: App, fake: FakeTmux
) -> None:
    live = spawn(app, "live")
    gone = spawn(app, "gone")
    table = procs_of(app)
    home = str(app.paths.home)
    pane = fake.pane_of(live.id)
    child = table.add(parent=pane.pid)  # the live agent's own child: its pane vouches for it
    deaf = table.add({TAG: gone.id, HOME_TAG: home, "TMUX": DEAD_SERVER}, deaf=True)
    nohup = table.add({TAG: gone.id, HOME_TAG: home})  # no TMUX, its agent has no live pane
    removed = table.add({TAG: "an-agent-removed-since", HOME_TAG: home, "TMUX": DEAD_SERVER})
    other_home = table.add({TAG: gone.id, HOME_TAG: home + "2", "TMUX": DEAD_SERVER})
    untagged = table.add({HOME_TAG: home, "TMUX": DEAD_SERVER})  # no agent tag: not an agent's
    theirs = table.add({TAG: gone.id, HOME_TAG: home, "TMUX": DEAD_SERVER}, uid=OTHER_UID)
    fake.exit(fake.pane_of(gone.id).id, 129)

    reaped = reap.at_start(app, None)

    removed_id = removed.env[TAG]
    assert reaped == {gone.id: sorted([deaf.pid, nohup.pid]), removed_id: [removed.pid]}
    assert not deaf.alive and not nohup.alive and not removed.alive
    assert (deaf.pid, signal.SIGTERM) in table.signals
    assert (deaf.pid, signal.SIGKILL) in table.signals  # deaf to TERM: killed after the grace
    assert 3.0 in clock_of(app).slept  # the grace was the clock's
    assert all(p.alive for p in (child, other_home, untagged, theirs))
    assert not fake.pane_of(live.id).dead
    assert {pid for pid, _sig in table.signals} == {deaf.pid, nohup.pid, removed.pid}
    events = [e for e in app.store.events() if e.kind == reap.KIND]
    assert sorted((e.agent, e.data["pids"], e.data["by"]) for e in events) == sorted(
        [("gone", sorted([deaf.pid, nohup.pid]), "service"), (removed_id, [removed.pid], "service")]
    )
    assert reap.at_start(app, None) == {}  # a second look finds nothing left


def test_on_the_way_out_it_reaps_only_once_its_tmux_server_is_gone(
    app: App, fake: FakeTmux
) -> None:
    spawn(app, "keep")  # a live server with panes
    gone = spawn(app, "gone")
    table = procs_of(app)
    left = table.add({TAG: gone.id, HOME_TAG: str(app.paths.home), "TMUX": DEAD_SERVER})
    fake.exit(fake.pane_of(gone.id).id, 129)
    app.environ["TMUX"] = f"{fake.socket_path()},{SERVER_PID},0"  # it runs under this server
    assert reap.at_exit(app) == {} and left.alive  # `roost service stop`: the server lives on
    app.environ["TMUX"] = f"{fake.socket_path()},{SERVER_PID + 100},0"  # the one it ran on died
    assert reap.at_exit(app) == {gone.id: [left.pid]} and not left.alive


@pytest.mark.parametrize(
    ("previous", "ended"),
    [
        (None, False),  # the first run of this home
        ((1, 9, "%1", "t", [], "t2", 0), False),  # stopped cleanly: its stop ended them
        ((1, 9, "%1", "t", [], "t2", 137), True),  # killed -9 (its pane's exit status)
        ((1, 9, "%1", "t", [], None, None), True),  # still open: killed, its pane respawned
    ],
)
def test_the_hosts_masters_end_after_a_run_that_did_not_stop_cleanly(
    app: App, monkeypatch: pytest.MonkeyPatch, previous: Run | None, ended: bool
) -> None:
    calls: list[App] = []
    monkeypatch.setattr(reap, "end_masters", calls.append)
    reap.at_start(app, previous)
    assert calls == ([app] if ended else [])


def test_the_service_reaps_before_any_component_starts(
    app: App, fake: FakeTmux, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = spawn(app, "gone")
    table = procs_of(app)
    left = table.add({TAG: gone.id, HOME_TAG: str(app.paths.home), "TMUX": DEAD_SERVER})
    fake.exit(fake.pane_of(gone.id).id, 129)
    seen: dict[str, bool] = {}

    def start(own: App) -> service.Stop:
        seen["leftover alive at the first start"] = left.alive
        os.kill(os.getpid(), signal.SIGTERM)  # then told to stop
        return lambda: None

    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    try:
        assert threading.current_thread() is threading.main_thread()
        assert main._run(app, lambda: app, [service.Component("probe", start=start)]) == 0
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    assert seen == {"leftover alive at the first start": False}
