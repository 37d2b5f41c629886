"""Interrupted operations and races on a real tmux: a spawn cut off before its record, a kill cut
off after tagging the window, concurrent links, concurrent restores."""

from __future__ import annotations

import json
import sqlite3
import uuid
from typing import Any

import pytest

from conftest import Env, core_argv

pytestmark = pytest.mark.tmux


def spawn(world: Env, name: str, *args: str) -> dict[str, Any]:
    world.roost("spawn", name, "--cwd", str(world.tmp / "work"), *args)
    return world.ls()[name]


def sql(world: Env, statement: str, *args: object) -> None:
    db = sqlite3.connect(world.home / "roost.db")
    db.execute(statement, args)
    db.commit()
    db.close()


def agent_pane(world: Env, name: str) -> dict[str, Any]:
    return next(p for p in world.panes() if p["window"] == name and p["roost_id"])


def event_kinds(world: Env, name: str) -> list[str]:
    return [e["kind"] for e in json.loads(world.roost("events", name, "--json").stdout)]


def test_a_spawn_cut_off_before_its_record_resumes_the_conversation_it_started(world: Env) -> None:
    a = spawn(world, "alpha")
    world.last_start(1)  # claude wrote its transcript under the minted id
    world.tmux("kill-server")
    # what a spawn killed between the window and the record leaves: never launched, per the store
    sql(world, "UPDATE agents SET launches = 0, started_at = NULL WHERE name = 'alpha'")
    world.roost("wake", "alpha")
    start = world.last_start(2)
    assert start["error"] is None, start["error"]
    assert core_argv(start) == ["--resume", a["provider_session_id"]]
    assert world.ls()["alpha"]["state"] == "running"


def test_a_spawn_cut_off_before_claude_wrote_anything_starts_it_under_its_id(world: Env) -> None:
    world.env["FAKE_AGENT_LAZY_TRANSCRIPT"] = "1"  # no transcript until the first message
    a = spawn(world, "alpha")
    world.last_start(1)
    world.tmux("kill-server")
    sql(world, "UPDATE agents SET launches = 0, started_at = NULL WHERE name = 'alpha'")
    world.roost("wake", "alpha")
    assert core_argv(world.last_start(2)) == ["--session-id", a["provider_session_id"]]


def test_a_kill_cut_off_after_tagging_the_window_leaves_no_blind_spot(world: Env) -> None:
    spawn(world, "alpha", "--restart", "on-failure")
    pane = agent_pane(world, "alpha")
    world.wait_screen(pane["pane_id"], "❯")
    # `roost kill` marks the window stopped first; killed right then, it goes no further
    world.tmux("set-option", "-w", "-t", pane["window_id"], "@roost_state", "stopped")
    world.type(pane["pane_id"], "crash 3")

    def restarted() -> list[str]:
        world.ls()  # as a user would; it also nudges a tmux that missed the pane's SIGCHLD
        kinds = event_kinds(world, "alpha")
        return kinds if "restarted" in kinds else []

    kinds = world.wait_for(restarted, timeout=30, what="the crash logged and the agent restarted")
    assert "exited" in kinds
    assert world.ls()["alpha"]["state"] == "running"


def insert_agent(db: sqlite3.Connection, name: str) -> None:
    agent_id = str(uuid.uuid4())
    db.execute(
        "INSERT INTO agents (id, name, provider, cwd, home, args, dangerous, created_at, "
        "intent, launches, placement, restart_policy, conversation_seen, hook_offset) "
        "VALUES (?, ?, 'command', '/', ?, '[\"true\"]', 0, '2026-01-01T00:00:00+00:00', "
        "'stopped', 0, 'detached', 'never', 0, 0)",
        (agent_id, name, name),
    )


def test_concurrent_links_never_make_a_cycle(world: Env) -> None:
    world.roost("ls")  # creates the store
    db = sqlite3.connect(world.home / "roost.db")
    insert_agent(db, "a")
    insert_agent(db, "b")
    db.commit()
    for round_ in range(30):
        db.execute("UPDATE agents SET linked_parent = NULL")
        db.commit()
        results = world.roost_together(
            ("link", "a", "--parent", "b"), ("link", "b", "--parent", "a")
        )
        links = dict(db.execute("SELECT name, linked_parent FROM agents").fetchall())
        assert links["a"] is None or links["b"] is None, (round_, results)
        assert sorted(r.returncode for r in results) == [0, 2], (round_, results)
    db.close()


def test_two_restores_at_once_count_each_start_once(world: Env) -> None:
    names = [f"t{i}" for i in range(6)]
    for name in names:
        spawn(world, name)
    world.last_start(len(names))
    world.tmux("kill-server")
    results = world.roost_together(
        ("restore", "--json", "--stagger", "0"), ("restore", "--json", "--stagger", "0")
    )
    reports = [json.loads(r.stdout) for r in results]
    assert sum(r["started"] for r in reports) == len(names), reports
    assert sum(r["started"] + r["already_running"] for r in reports) == 2 * len(names), reports
    assert sorted(a for r in reports for a in r["started_agents"]) == names
    world.last_start(2 * len(names))  # a started CLI logs itself a moment later (loaded machines)
    assert len(world.starts()) == 2 * len(names)  # and no more: one process per agent
