"""`roost watch` prints every status change the event log records, once and in order, even
those that other roost commands (`roost ls`, a `send --wait`) recorded between two of its looks
(issue 19, item 8). Real tmux, the fake claude, the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from typing import Any

from conftest import Env


def status_changes(world: Env, after: int) -> list[tuple[str, str, str]]:
    events = json.loads(world.roost("events", "cl", "--json").stdout)
    return [
        (e["agent"], e["previous"], e["status"])
        for e in events
        if e["id"] > after and e["kind"] == "status" and e["status"] != e["previous"]
    ]


def status_lines(lines: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """The changes of status watch printed after its first look (--json prints every event)."""
    return [
        (d["name"], d["previous"], d["status"])
        for d in lines[1:]
        if d["kind"] == "status" and d["status"] != d["previous"]
    ]


def test_watch_prints_every_recorded_change_once_in_order(world: Env) -> None:
    world.roost("spawn", "cl", "--cwd", str(world.tmp / "work"))
    world.wait_status("cl", "idle")
    watch = subprocess.Popen(
        [sys.executable, "-m", "roost", "watch", "--json", "--interval", "12"],
        stdout=subprocess.PIPE,
        text=True,
        env=world.env,
        cwd=world.tmp,
    )
    lines: list[dict[str, Any]] = []
    reader = threading.Thread(
        target=lambda: lines.extend(json.loads(line) for line in watch.stdout or ()), daemon=True
    )
    reader.start()
    try:
        world.wait_for(lambda: lines, what="watch's first look")
        assert [(d["name"], d["status"], d["previous"]) for d in lines] == [("cl", "idle", None)]
        after = max(e["id"] for e in json.loads(world.roost("events", "--json").stdout))
        for _ in range(2):  # two turns, each seen by `roost ls`, within one watch interval
            # A turn that lasts until it is seen (a fixed 2 s went by unseen on a loaded
            # machine), then ended by Esc.
            world.roost("send", "cl", "work 120")
            world.wait_status("cl", "working")
            world.tmux("send-keys", "-t", world.pane_of("cl"), "Escape")
            world.wait_status("cl", "idle")
        recorded = status_changes(world, after)
        assert recorded.count(("cl", "working", "idle")) == 2, recorded
        world.wait_for(
            lambda: len(status_lines(lines)) >= len(recorded),
            timeout=15,
            what=f"{len(recorded)} changes printed (printed: {lines})",
        )
        assert status_lines(lines) == recorded
    finally:
        watch.kill()
        watch.wait(timeout=10)
