"""Words, states and intent, on a real tmux: the user's words in messages, pins on top, a kill
reads `stopped`, restore keeps what the user stopped, place says it moved, attach unburies,
stop/start, and no `restore` offered for `restart`."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys

import psutil
import pytest

from roost.core import present

from conftest import Env

pytestmark = pytest.mark.tmux


def spawn(world: Env, name: str, *args: str) -> None:
    world.roost("spawn", name, "--cwd", str(world.tmp / "work"), *args)


def table_rows(world: Env) -> list[list[str]]:
    return [line.split() for line in world.roost("ls").stdout.splitlines()[1:]]


def test_counted_and_placement_words() -> None:
    assert present.counted(1, "process") == "1 process"
    assert present.counted(3, "process") == "3 processes"
    assert present.counted(0, "tile") == "0 tiles"
    assert present.placement_words("tile", "main") == "a tile of main"
    assert present.placement_words("detached", "main") == "parked"
    assert present.placement_words("buried", "main") == "buried"


def test_pins_on_top_in_pin_order_and_a_kill_reads_stopped(world: Env) -> None:
    for name in ("a", "b", "c"):
        spawn(world, name)
    world.roost("pin", "c")
    world.roost("pin", "a")
    assert [a["name"] for a in json.loads(world.roost("ls", "--json").stdout)] == ["c", "a", "b"]
    assert [r[:2] for r in table_rows(world)][:2] == [["*", "c"], ["*", "a"]]
    out = world.roost("kill", "b").stdout
    n = int(re.search(r"\((\d+) process", out).group(1))  # type: ignore[union-attr]
    assert f"({present.counted(n, 'process')})" in out
    row = next(r for r in table_rows(world) if r[0] == "b")
    assert row[1] == "stopped" and "(" not in row[2], row
    assert world.ls()["a"]["exit_code"] is None  # running: no exit code of a past run


def test_restore_leaves_what_the_user_stopped_stopped(world: Env) -> None:
    spawn(world, "a")
    spawn(world, "b")
    world.roost("stop", "a")  # `stop` is `kill`
    world.tmux("kill-server")  # a reboot
    out = world.roost("restore").stdout
    assert "left stopped, as you stopped them: a" in out, out
    agents = world.ls()
    assert agents["a"]["state"] == "stopped" and agents["b"]["state"] == "running"
    assert json.loads(world.roost("restore", "--json").stdout)["left_stopped"] == 1
    assert "woke a" in world.roost("start", "a").stdout  # `start` is `wake`
    assert world.ls()["a"]["state"] == "running"
    assert "left stopped" not in world.roost("restore").stdout


def test_place_says_it_moved_a_tile_and_attach_unburies(world: Env) -> None:
    spawn(world, "a")
    spawn(world, "b")
    out = world.roost("place", "a", "--tab", "side").stdout
    assert out.startswith("moved a from a tile of main to side"), out
    refused = world.roost("unbury", "a", check=False)
    assert "a is not buried: it is a tile of side" in refused.stderr
    world.roost("bury", "b")
    # attach needs a terminal (issue 35): one for its input; it stays attached until stopped
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "roost", "attach", "b"],
        stdin=follower,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=world.env,
        cwd=world.tmp,
    )
    try:
        # its notes are said before it becomes tmux's client (exec)
        exe = lambda: psutil.Process(proc.pid).name()  # noqa: E731
        world.wait_for(lambda: exe().startswith("tmux"), 30, "the attach to reach tmux")
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
        os.close(leader)
        os.close(follower)
    assert "b was buried; it is a tile of main again" in err.decode(), err
    b = world.ls()["b"]
    assert b["placement"] == "tile" and b["tab"] == "main" and b["state"] == "running"


def test_restart_is_not_offered_restore(world: Env) -> None:
    proc = world.roost_inprocess("restart", "a")
    assert proc.returncode == 2 and "restore" not in proc.stderr
    assert "roost kill NAME && roost wake NAME" in proc.stderr
