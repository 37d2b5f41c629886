"""Two TUIs (Textual's headless pilot) and a `roost watch --json` read one stream (issue 21,
part 3): with the roost service running, a change typed into an agent reaches all three, and an
idle TUI takes no snapshot (asks tmux nothing) while nothing changes."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time

import pytest
from test_stream import seen, watching
from textual.worker import WorkerCancelled, WorkerError

from roost.tui.app import RoostApp
from roost.tui.live import LiveSource
from roost.tui.source import Snapshot

from conftest import Env


class CountingSource(LiveSource):
    """The TUI's source, counting the snapshots it takes, and those no cue called for: each
    change of the store's stamp it was shown (or a stamp of None: no service seen, look every
    time) allows one snapshot, taken whenever its worker runs; any other is unprompted."""

    def __init__(self) -> None:
        super().__init__()
        self.snapshots = self.unprompted = self._owed = 0
        self._shown: object = None
        self._lock = threading.Lock()  # the UI thread reads stamps, workers take snapshots

    def snapshot(self) -> Snapshot:
        with self._lock:
            self.snapshots += 1
            if self._owed:
                self._owed -= 1
            else:
                self.unprompted += 1
        return super().snapshot()

    def stamp(self) -> object | None:
        found = super().stamp()
        with self._lock:
            if found is None or found != self._shown:
                # at most two owed (one snapshot running, one called for): owing more would
                # hide a poll
                self._owed, self._shown = min(self._owed + 1, 2), found
        return found


def status_in(app: RoostApp, name: str) -> str | None:
    return next((o.status for o in app.snapshot.items if o.agent.name == name), None)


def run_headless(app: RoostApp, done: threading.Event, failures: list[BaseException]) -> None:
    """One TUI on a thread of its own (Textual keeps its active app per context: two apps in one
    event loop would share it)."""

    async def run() -> None:
        async with app.run_test(size=(120, 30)) as pilot:
            while not done.is_set():
                await pilot.pause(0.1)
            with contextlib.suppress(WorkerCancelled, WorkerError):
                await app.workers.wait_for_complete()

    try:
        asyncio.run(run())
    except BaseException as exc:  # noqa: BLE001 - reported by the test
        failures.append(exc)


@pytest.mark.tmux
def test_two_tuis_and_a_watch_read_one_stream(world: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in world.env.items():
        monkeypatch.setenv(key, value)
    world.roost("spawn", "cx", "--provider", "codex", "--cwd", str(world.tmp / "work"))
    world.wait_status("cx", "idle")
    world.start_service(hearing="cx")
    sources = [CountingSource(), CountingSource()]
    apps = [RoostApp(source=s, attacher=lambda argv: None, refresh_every=0.2) for s in sources]
    done, failures = threading.Event(), []  # type: ignore[var-annotated]
    threads = [threading.Thread(target=run_headless, args=(a, done, failures)) for a in apps]
    with watching(world, "--interval", "60") as watch:
        for t in threads:
            t.start()
        try:
            world.wait_for(lambda: all(status_in(a, "cx") == "idle" for a in apps), what="idle")
            # Idle: once settled, neither TUI takes a snapshot while nothing changes.
            world.wait_for(
                lambda: all(s.stamp() is not None for s in sources), what="the service's cue"
            )
            # settled: as long without a snapshot as the window checked next (a service just
            # started may still write, as it comes up, a second apart on a loaded machine)
            world.wait_for(lambda: quiet(sources, 2.0), timeout=30, what="quiet")
            assert unprompted(sources, 2.0) == [0, 0], "an idle TUI took snapshots"
            world.type(world.pane_of("cx"), "work 120")  # until both saw it, then Esc
            world.wait_for(
                lambda: all(status_in(a, "cx") == "working" for a in apps), what="both: working"
            )
            world.tmux("send-keys", "-t", world.pane_of("cx"), "Escape")
            world.wait_for(
                lambda: all(status_in(a, "cx") == "idle" for a in apps), what="both: idle"
            )
            working = world.wait_for(lambda: seen(watch, "cx", "working"), what="watch: working")
            world.wait_for(
                lambda: seen(watch, "cx", "idle", working["seq"]),
                what="watch: idle",
            )
        finally:
            done.set()
            for t in threads:
                t.join(30)
    assert not failures, failures


def quiet(sources: list[CountingSource], seconds: float) -> list[int] | None:
    """The sources' snapshot counts, when none changed during `seconds`; else None."""
    before = [s.snapshots for s in sources]
    time.sleep(seconds)
    return before if [s.snapshots for s in sources] == before else None


def unprompted(sources: list[CountingSource], seconds: float) -> list[int]:
    """Per source, the snapshots taken during `seconds` that no store change called for (a
    loaded machine's service may still write once in a while, and the snapshot a write calls
    for may come a moment later: a TUI that polls takes many)."""
    before = [s.unprompted for s in sources]
    time.sleep(seconds)
    return [s.unprompted - b for s, b in zip(sources, before, strict=True)]
