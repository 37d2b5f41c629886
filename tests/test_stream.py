"""`roost watch --json` as a stream (issue 21, parts 2 and 3), on a real tmux: what the service's
monitor learns from tmux pushing it (a screen change, an exit) reaches the stream without anyone
polling; every event of the log is printed once, in order, and `--since` resumes without a gap
or a repeat; the service's kill -9 during a burst loses no change and no agent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from conftest import Env


class Watch:
    """`roost watch --json ARGS` in the background, its lines parsed as they come."""

    def __init__(self, world: Env, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "roost", "watch", "--json", *args],
            stdout=subprocess.PIPE,
            text=True,
            env=world.env,
            cwd=world.tmp,
        )
        self.lines: list[dict[str, Any]] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout or ():
            self.lines.append(json.loads(line))

    def events(self) -> list[dict[str, Any]]:
        return [d for d in list(self.lines) if d.get("seq") is not None]

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)
        self.reader.join(timeout=10)


@contextmanager
def watching(world: Env, *args: str) -> Iterator[Watch]:
    watch = Watch(world, *args)
    try:
        yield watch
    finally:
        watch.close()


def seen(watch: Watch, name: str, status: str, after: int = 0) -> dict[str, Any] | None:
    return next(
        (
            d
            for d in watch.events()
            if d["seq"] > after
            and d["kind"] == "status"
            and d["name"] == name
            and d["status"] == status
        ),
        None,
    )


def test_a_screen_change_and_an_exit_reach_watch_pushed(world: Env) -> None:
    """The watch looks only once a minute: what it prints within seconds, the service pushed."""
    world.roost("spawn", "cx", "--provider", "codex", "--cwd", str(world.tmp / "work"))
    world.wait_status("cx", "idle")
    world.start_service(hearing="cx")
    with watching(world, "--interval", "60") as watch:
        world.wait_for(lambda: watch.lines, what="watch's first look")
        world.type(world.pane_of("cx"), "work 120")  # typed: no roost command looks
        working = world.wait_for(lambda: seen(watch, "cx", "working"), what="working pushed")
        world.tmux("send-keys", "-t", world.pane_of("cx"), "Escape")  # ended once seen
        idle = world.wait_for(
            lambda: seen(watch, "cx", "idle", working["seq"]),
            what="idle pushed",
        )
        world.type(world.pane_of("cx"), "crash 3")
        gone = world.wait_for(
            lambda: seen(watch, "cx", "exited", idle["seq"]),
            what="the exit pushed",
        )
        assert gone["exit_code"] == 3 and gone["crashed"]
        seqs = [d["seq"] for d in watch.events()]
        assert seqs == sorted(set(seqs))  # in order, once each


def status_event(i: int) -> tuple[str, str]:
    return ("working", "idle") if i % 2 else ("idle", "working")


def write_status_changes(world: Env, count: int) -> list[int]:
    """`count` status changes of one agent, appended to the log as roost records them; their
    sequences."""
    from roost.store import events as event_log
    from roost.store.db import Store

    store = Store.open(world.home / "roost.db")
    try:
        seqs = []
        for i in range(count):
            status, previous = status_event(i)
            with store.write() as c:
                event_log.append(
                    c,
                    "id-many",
                    "many",
                    f"2026-01-01T00:00:{i:04d}",
                    "status",
                    {"status": status, "previous": previous, "source": "screen"},
                )
            seqs.append(event_log.last_id(store.conn))
        return seqs
    finally:
        store.close()


def test_watch_prints_1000_changes_once_in_order_and_resumes(world: Env) -> None:
    world.roost("service", "start")
    start = last_seq(world)
    written: list[int] = []
    writer = threading.Thread(target=lambda: written.extend(write_status_changes(world, 1000)))
    with watching(world, "--since", str(start)) as first:
        writer.start()
        world.wait_for(lambda: len(first.events()) >= 300, timeout=60, what="300 lines")
    # A reader that went away resumes after the last line it printed.
    got = [d for d in first.events() if d["name"] == "many"]
    with watching(world, "--since", str(got[-1]["seq"])) as second:
        writer.join(timeout=120)
        world.wait_for(
            lambda: len([d for d in second.events() if d["name"] == "many"]) >= 1000 - len(got),
            timeout=60,
            what="the rest",
        )
        got += [d for d in second.events() if d["name"] == "many"]
    assert [d["seq"] for d in got] == written
    assert [(d["status"], d["previous"]) for d in got] == [status_event(i) for i in range(1000)]


def test_service_killed_during_a_burst_loses_no_change_and_no_agent(world: Env) -> None:
    names = ["b1", "b2", "b3"]
    for name in names:
        world.roost("spawn", name, "--provider", "codex", "--cwd", str(world.tmp / "work"))
    for name in names:
        world.wait_status(name, "idle")
    pids = {n: a["pid"] for n, a in world.ls().items()}
    first = json.loads(world.roost("service", "start", "--json").stdout)
    start = last_seq(world)
    # --interval 1: while the service is down, watch's own looks stand in (what is tested here
    # is that nothing is lost, not how soon)
    with watching(world, "--interval", "1", "--since", str(start)) as watch:
        for name in names:  # turns that last until seen (a fixed 3 s could go unseen)
            world.type(world.pane_of(name), "work 120")
        world.wait_for(
            lambda: all(seen(watch, n, "working", start) for n in names), what="the burst seen"
        )
        os.kill(first["pid"], signal.SIGKILL)  # mid-burst: the turns end while it is down
        for name in names:
            world.tmux("send-keys", "-t", world.pane_of(name), "Escape")
        for name in names:  # each turn's end reaches the stream, by the restarted service

            def ended(n: str = name) -> bool:
                return seen(watch, n, "idle", start) is not None

            world.wait_for(ended, timeout=30, what=f"{name} idle")

        # restarted by its pane-died hook after its backoff (the turns' ends may have been
        # recorded before that by watch's own look, which stands in while no service runs)
        def restarted() -> bool:
            status = json.loads(world.roost("service", "status", "--json").stdout)
            return bool(status["running"]) and status["pid"] != first["pid"]

        world.wait_for(restarted, timeout=30, what="the service restarted")
        recorded = [
            e["id"] for e in json.loads(world.roost("events", "--json").stdout) if e["id"] > start
        ]
        world.wait_for(
            lambda: (
                [d["seq"] for d in watch.events() if d["seq"] > start][: len(recorded)] == recorded
            ),
            what="every recorded event printed, in order",
        )
    assert {n: a["pid"] for n, a in world.ls().items()} == pids  # no agent harmed


def last_seq(world: Env) -> int:
    return max([e["id"] for e in json.loads(world.roost("events", "--json").stdout)] or [0])


@pytest.mark.parametrize("bad", ["-1", "x"])
def test_watch_since_refuses_bad_input(world: Env, bad: str) -> None:
    proc = world.roost_inprocess("watch", "--since", bad)
    assert proc.returncode == 2 and "--since" in proc.stderr
    assert not (world.home / "roost.db").exists()
