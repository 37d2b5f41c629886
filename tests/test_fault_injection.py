"""Fault injection (issue 9): kill -9 roost at seeded random points of spawn, wake, restore,
import, gc and send. After every kill: the database is intact, no row that must stay is gone, an
import is all or nothing, every tmux session on roost's server is a home of a recorded agent,
and no agent process runs outside its pane. At the end no launch spec (the agent's environment,
API keys included) is left on disk, and the workspace still works: wake, restore and send
succeed with one process per agent."""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import uuid
from typing import Any

import psutil
import pytest

from roost.core.service import SESSION as SERVICE_SESSION

from conftest import Env

pytestmark = pytest.mark.tmux

SEED = 20261130
TRIALS = ["spawn"] * 4 + ["wake"] * 4 + ["restore"] * 3 + ["import"] * 3 + ["gc"] * 3 + ["send"] * 3


def kill_midway(world: Env, args: list[str], after: float) -> None:
    """Start `roost ARGS` and SIGKILL it `after` seconds in (the fault point)."""
    proc = world.roost_start(*args, capture=False)
    try:
        proc.wait(timeout=after)  # it may finish first: that is a trial too
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)


def db(world: Env) -> sqlite3.Connection:
    return sqlite3.connect(world.home / "roost.db")


def names(world: Env) -> set[str]:
    conn = db(world)
    try:
        return {r[0] for r in conn.execute("SELECT name FROM agents")}
    finally:
        conn.close()


def check(world: Env, must_stay: set[str]) -> None:
    conn = db(world)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = dict(conn.execute("SELECT name, home FROM agents").fetchall())
    finally:
        conn.close()
    assert must_stay <= set(rows), must_stay - set(rows)
    # no stray home: every session is a roost home of a recorded agent, or the roost service's
    listing = world.tmux(
        "list-sessions", "-F", "#{session_name}\t#{@roost_home}\t#{@roost_service}", check=False
    )
    for line in listing.splitlines():
        session, tagged, service = line.split("\t")
        if service == "1" and session == SERVICE_SESSION:
            continue
        assert tagged == "1" and session in set(rows.values()), line
    # no orphan: a process tagged as one of this world's agents runs inside a live pane
    pane_pids = {int(p["pid"]) for p in world.panes() if p["dead"] == "0" and p["pid"]}
    home = world.env["ROOST_HOME"]
    for proc in psutil.process_iter():
        try:
            env = proc.environ()
            if env.get("ROOST_HOME") != home or not env.get("ROOST_AGENT_ID"):
                continue
            lineage = {proc.pid, *(p.pid for p in proc.parents())}
        except (psutil.Error, OSError):
            continue
        assert lineage & pane_pids, f"orphan {proc.pid} {proc.cmdline()}"


def export_of(count: int, tag: str) -> dict[str, Any]:
    """A small valid export of `count` parked agents with fresh ids and names."""
    agents = []
    for i in range(count):
        agents.append(
            {
                "id": str(uuid.uuid4()),
                "name": f"imp-{tag}-{i}",
                "provider": "claude",
                "cwd": "/",
                "home": f"imp-{tag}-{i}",
                "args": [],
                "dangerous": False,
                "provider_session_id": str(uuid.uuid4()),
                "created_at": "2026-01-01T00:00:00+00:00",
                "intent": "stopped",
                "started_at": None,
                "launches": 0,
                "last_exit": None,
                "placement": "detached",
                "tab_id": None,
                "buried_sibling": None,
                "buried_side": None,
                "buried_direction": None,
                "buried_ratio": None,
                "linked_parent": None,
                "orchestration_parent": None,
                "orchestration_root": None,
                "last_active_at": "2026-01-01T00:00:00+00:00",
                "last_error": None,
                "status": None,
                "status_source": None,
                "status_since": None,
                "restart_policy": "never",
                "conversation_seen": False,
                "transcript_path": None,
                "hook_offset": 0,
                "session_history": [],
            }
        )
    return {
        "format": "roost-workspace",
        "version": 1,
        "settings": {},
        "tabs": [],
        "agents": agents,
        "pins": [],
    }


@pytest.mark.timeout(600)
def test_kill_9_at_random_points_loses_nothing(world: Env) -> None:
    rng = random.Random(SEED)
    work = str(world.tmp / "work")
    world.roost("spawn", "keep", "--cwd", work)
    world.roost("pin", "keep")
    world.roost("spawn", "side", "--cwd", work, "--detached")
    world.roost("pin", "side")  # parked, hibernated by a restore: only its pin keeps it from gc
    must_stay = {"keep", "side"}
    for trial, op in enumerate(TRIALS):
        after = rng.uniform(0.05, 0.9)
        if op == "spawn":
            kill_midway(world, ["spawn", f"new{trial}", "--cwd", work], after)
        elif op == "wake":
            world.roost("kill", "keep")
            kill_midway(world, ["wake", "keep"], after)
        elif op == "restore":
            world.tmux("kill-server", check=False)
            kill_midway(world, ["restore"], after)
        elif op == "import":
            path = world.tmp / f"import{trial}.json"
            data = export_of(3, str(trial))
            path.write_text(json.dumps(data))
            kill_midway(world, ["import", str(path)], after)
            imported = {a["name"] for a in data["agents"]} & names(world)
            assert imported in (set(), {a["name"] for a in data["agents"]}), imported
        elif op == "gc":
            world.roost("spawn", f"old{trial}", "--cwd", work, "--detached")
            world.roost("hibernate", f"old{trial}")
            kill_midway(world, ["gc", "--older-than", "0s", "--yes"], after)
        else:
            world.roost("wake", "keep")
            kill_midway(world, ["send", "keep", f"message {trial}"], after)
        check(world, must_stay)
    # every secret handed to a launcher is gone once its writer is (the sweep of any command)
    run = world.home / "run"
    world.wait_for(
        lambda: (world.roost("events", "--limit", "1"), not any(run.glob("*.json")))[1],
        timeout=40,
        what="abandoned launch specs swept",
    )
    # and the workspace still works: one restore, one process per live agent
    world.roost("restore")
    world.roost("wake", "keep")
    # (no send here: a send killed between its paste and its Enter leaves its text in the
    # agent's input as a draft, which the next send must not submit blindly: issue 14)
    assert world.ls()["keep"]["state"] == "running"
    check(world, must_stay)
    live = [p for p in world.panes() if p["roost_id"] and p["dead"] == "0"]
    assert len({p["roost_id"] for p in live}) == len(live)  # no agent runs twice
