"""`roost doctor` and the keeper window, on a real tmux."""

from __future__ import annotations

import json

import psutil
import pytest

from conftest import Env

pytestmark = pytest.mark.tmux


def test_doctor_is_happy_with_a_healthy_setup(world: Env) -> None:
    world.roost("spawn", "alpha", "--cwd", str(world.tmp / "work"))
    report = json.loads(world.roost("doctor", "--json").stdout)
    assert report["ok"], report
    names = [c["name"] for c in report["checks"]]
    assert names == [
        "tmux",
        "socket",
        "socket directory",
        "roost home",
        "config",
        "store",
        "drift",
        "orphans",
        "service",  # not running (ROOST_SERVICE_AUTOSTART=0): a warning
        "workspace",
        "recall",  # the recall index: its size, entries, records left out, lag (issue 39)
        "claude",
        "codex",
        "gemini",
        "aider",
    ]


def test_doctor_reports_a_workspace_inconsistency(world: Env) -> None:
    world.roost("spawn", "alpha", "--cwd", str(world.tmp / "work"))
    import sqlite3

    db = sqlite3.connect(world.home / "roost.db")  # a tile that a second tab holds too
    db.execute(
        "INSERT INTO tabs (id, name, position, layout) SELECT 'tab-2', 'other', 1, layout FROM tabs"
    )
    db.commit()
    db.close()
    proc = world.roost("doctor", check=False)
    assert proc.returncode == 1
    assert "alpha is a tile in 2 places: main, other" in proc.stdout


def test_doctor_reports_drift_with_advice_and_kills_nothing(world: Env) -> None:
    world.roost("spawn", "alpha", "--cwd", str(world.tmp / "work"))
    world.roost("spawn", "beta", "--cwd", str(world.tmp / "work"))
    beta = world.ls()["beta"]
    world.tmux("new-session", "-d", "-s", "stranger")  # not roost's
    # beta's record disappears behind roost's back: its window is now an orphan
    import sqlite3

    conn = sqlite3.connect(world.home / "roost.db")
    conn.execute("DELETE FROM agents WHERE name = 'beta'")
    conn.commit()
    conn.close()
    alpha_pid = world.ls()["alpha"]["pid"]
    psutil.Process(alpha_pid).kill()  # alpha should run but has exited
    world.wait_for(lambda: world.ls()["alpha"]["state"] == "stopped", what="alpha dead")
    proc = world.roost("doctor", check=False)
    assert proc.returncode == 1
    out = proc.stdout
    assert "alpha: should be running but it exited" in out and "fix: roost wake alpha" in out
    assert f"tagged for roost agent {beta['id']}, which has no record" in out
    assert "session stranger: a tmux session on roost's server that roost did not make" in out
    # reported, never silently killed
    windows = {p["window"] for p in world.panes()}
    assert {"beta", "alpha"} <= windows and any(p["session"] == "stranger" for p in world.panes())


def test_enter_in_the_keeper_wakes_the_agent(world: Env) -> None:
    world.roost("spawn", "alpha", "--cwd", str(world.tmp / "work"))
    world.last_start(1)
    world.roost("kill", "alpha")
    world.wait_screen("alpha:0", "stopped (last exit")
    world.tmux("send-keys", "-t", "alpha:0", "Enter")
    world.wait_for(lambda: world.ls()["alpha"]["state"] == "running", what="woken by keeper")
    world.wait_screen("alpha:0", "woke alpha")
    assert world.last_start(2)["argv"][0] == "--resume"


def test_keeper_redraws_when_its_agent_crashes(world: Env) -> None:
    world.roost("spawn", "alpha", "--cwd", str(world.tmp / "work"))
    pane = next(p for p in world.panes() if p["window"] == "alpha")
    world.wait_screen(pane["pane_id"], "❯")
    world.type(pane["pane_id"], "crash 5")
    # tmux 3.3a now and then misses the SIGCHLD of a dying pane; any roost command that lists
    # panes nudges it (see tmux.list_panes), as a user's `roost ls` would.
    world.wait_for(
        lambda: (
            world.ls()["alpha"]["exit_code"] == 5 and "exited (status 5)" in world.screen("alpha:0")
        ),
        what="keeper redrawn",
    )
