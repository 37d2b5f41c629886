"""`roost gc` on a real tmux: it never removes a running agent, counts what the screen shows as
activity, and asks before removing anything (or needs --yes)."""

from __future__ import annotations

import os
import pty
import sqlite3
import subprocess
import sys

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux

PRINTER = ("sh", "-c", "while :; do date; sleep 0.2; done")


def spawn(world: Env, name: str, *args: str) -> None:
    world.roost("spawn", name, "--cwd", str(world.tmp / "work"), *args)


def idle_since_2020(world: Env, *names: str) -> None:
    """As if the store saw no activity for years (last_active_at moves only at launch and on a
    claude hook: the hooks of a kill or hibernate are read first)."""
    world.ls()
    db = sqlite3.connect(world.home / "roost.db")
    db.execute(
        f"UPDATE agents SET last_active_at = '2020-01-01T00:00:00+00:00' "
        f"WHERE name IN ({', '.join('?' * len(names))})",
        names,
    )
    db.commit()
    db.close()


def settle(world: Env, count: int) -> None:
    """Every agent up, and its hook events read (reading them counts as activity)."""
    world.last_start(count)
    world.wait_for(
        lambda: all(a["status"] != "starting" for a in world.ls().values()), what="hooks read"
    )


def test_gc_never_removes_a_running_agent_nor_one_whose_screen_just_moved(world: Env) -> None:
    spawn(world, "runner", "--detached")  # parked: running now
    spawn(world, "printer", "--detached", "--provider", "command", "--", *PRINTER)
    spawn(world, "shown", "--detached", "--provider", "command", "--", *PRINTER)
    spawn(world, "gone", "--detached")
    settle(world, 2)
    world.roost("kill", "shown")  # stopped, but its screen moved a moment ago
    world.roost("hibernate", "gone")  # no process, no screen: really idle
    idle_since_2020(world, "runner", "printer", "shown", "gone")
    dry = world.roost("gc", "--older-than", "2m", "--dry-run").stdout
    assert dry.splitlines() == ["would remove gone: detached, idle since 2020-01-01T00:00:00+00:00"]
    out = world.roost("gc", "--older-than", "2m", "--yes").stdout
    assert out.splitlines() == ["removed gone: detached, idle since 2020-01-01T00:00:00+00:00"]
    agents = world.ls()
    assert set(agents) == {"runner", "printer", "shown"}
    assert agents["runner"]["state"] == agents["printer"]["state"] == "running"


def test_gc_without_a_terminal_or_yes_removes_nothing_and_says_so(world: Env) -> None:
    spawn(world, "old", "--detached")
    settle(world, 1)
    world.roost("hibernate", "old")
    idle_since_2020(world, "old")
    proc = world.roost("gc", "--older-than", "2m", check=False, input="")
    assert proc.returncode == 2
    assert proc.stdout.splitlines() == [
        "would remove old: detached, idle since 2020-01-01T00:00:00+00:00"
    ]
    assert len(proc.stderr.splitlines()) == 1 and "--yes" in proc.stderr
    assert set(world.ls()) == {"old"}


def in_terminal(world: Env, answer: str, *args: str) -> tuple[int, str]:
    """Run roost with a terminal on stdin, answer its question, return (exit code, output)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "roost", *args],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=world.env,
        cwd=world.tmp,
        text=True,
    )
    os.close(follower)
    os.write(leader, answer.encode() + b"\n")
    out, _ = proc.communicate(timeout=60)
    os.close(leader)
    return proc.returncode, out


def test_gc_in_a_terminal_asks_first(world: Env) -> None:
    spawn(world, "old", "--detached")
    settle(world, 1)
    world.roost("hibernate", "old")
    idle_since_2020(world, "old")
    code, out = in_terminal(world, "n", "gc", "--older-than", "2m")
    assert code == 0 and "would remove old" in out and "nothing removed" in out
    assert set(world.ls()) == {"old"}
    code, out = in_terminal(world, "y", "gc", "--older-than", "2m")
    assert code == 0 and "removed old" in out
    assert world.ls() == {}
