"""The workspace end to end on a real tmux: restore hibernates, wake on use, export/import."""

from __future__ import annotations

import json
import sqlite3
import uuid

import psutil
import pytest

from conftest import Env, core_argv

pytestmark = pytest.mark.tmux


def spawn(world: Env, name: str, *args: str) -> None:
    world.roost("spawn", name, "--cwd", str(world.tmp / "work"), *args)


def agent_processes(world: Env) -> list[int]:
    """Fake agent CLIs running for this world (tagged with its ROOST_HOME)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            cmd = proc.info["cmdline"] or []
            if (
                any(c.endswith("fake_agent.py") for c in cmd)
                and proc.environ().get("ROOST_HOME") == world.env["ROOST_HOME"]
                and proc.status() != psutil.STATUS_ZOMBIE
            ):
                found.append(proc.pid)
        except psutil.Error:
            continue
    return found


# 39 `roost` processes of set-up: 40 s on CI's machine, past the default 120 s when it is busy
# (seen on the shared machine); the long timeout also deals it out with the longest tests.
@pytest.mark.timeout(300)
def test_restore_of_thirty_agents_starts_only_the_four_tiles(world: Env) -> None:
    for i in range(4):
        spawn(world, f"tile{i}", *(["--tab", "side"] if i >= 2 else []))
    spawn(world, "lead", "--detached", "--prompt", "remember the plan")
    for i in range(19):
        parent = ["--parent", "lead"] if i < 10 else ["--orchestrated-by", "lead"]
        spawn(world, f"park{i}", "--detached", *parent)
    for i in range(6):
        spawn(world, f"gone{i}")
        world.roost("bury", f"gone{i}")
    for name in ("lead", "park3", "gone2"):
        world.roost("pin", name)
    before = world.ls()
    assert len(before) == 30
    world.wait_for(lambda: len(world.starts()) >= 30, what="30 agent starts")

    world.tmux("kill-server")
    world.wait_for(lambda: not agent_processes(world), what="agents gone with the server")
    report = json.loads(world.roost("restore", "--json", "--concurrency", "2").stdout)
    assert report["live_expected"] == 4 and report["started"] == 4
    assert report["hibernated"] == 26 and report["failed"] == 0
    assert report["peak_concurrent_starts"] <= 2

    world.wait_for(lambda: len(agent_processes(world)) == 4, what="4 agent processes")
    after = world.ls()
    running = sorted(n for n, a in after.items() if a["state"] == "running")
    assert running == ["tile0", "tile1", "tile2", "tile3"]
    assert {n for n, a in after.items() if a["state"] == "hibernated"} == set(after) - set(running)
    sessions = {p["session"] for p in world.panes()}
    assert sessions == {"tile0", "tile1", "tile2", "tile3"}  # hibernated agents: not even a keeper
    # every record intact, with its links, pins, ids and session ids
    for name, a in before.items():
        b = after[name]
        for key in (
            "id",
            "provider_session_id",
            "placement",
            "tab",
            "pinned",
            "linked_parent",
            "orchestration_parent",
            "orchestration_root",
            "cwd",
            "created_at",
        ):
            assert a[key] == b[key], (name, key)
    assert after["park0"]["linked_parent"] == "lead"
    assert after["park15"]["orchestration_root"] == "lead"
    assert [n for n, a in after.items() if a["pinned"]] == ["lead", "park3", "gone2"]

    # a second restore starts nothing
    again = json.loads(world.roost("restore", "--json").stdout)
    assert again["started"] == 0 and again["already_running"] == 4

    # waking a parked agent resumes its own conversation
    starts = len(world.starts())
    world.roost("wake", "lead")
    start = world.last_start(starts + 1)
    assert core_argv(start) == ["--resume", before["lead"]["provider_session_id"]]
    assert world.ls()["lead"]["state"] == "running"
    assert world.ls()["lead"]["placement"] == "detached"  # waking never changes placement


def test_place_and_unbury_wake_on_use_and_park_keeps_running(world: Env) -> None:
    spawn(world, "a")
    spawn(world, "b", "--split", "h")
    assert json.loads(world.roost("tab", "ls", "--json").stdout) == [
        {"name": "main", "tiles": ["a", "b"], "focus": "b"}
    ]
    world.roost("park", "a")
    assert world.ls()["a"]["state"] == "running" and world.ls()["a"]["placement"] == "detached"
    world.roost("hibernate", "a")
    assert world.ls()["a"]["state"] == "hibernated"
    assert "a" not in {p["session"] for p in world.panes()}
    world.roost("place", "a", "--tab", "work")
    assert world.ls()["a"]["state"] == "running" and world.ls()["a"]["tab"] == "work"
    world.roost("bury", "b")
    assert world.ls()["b"]["state"] == "hibernated" and world.ls()["b"]["placement"] == "buried"
    world.roost("unbury", "b")
    assert world.ls()["b"]["state"] == "running" and world.ls()["b"]["tab"] == "main"


def test_a_failed_start_neither_stops_the_others_nor_changes_intent(world: Env) -> None:
    for name in ("ok1", "bad", "ok2"):
        (world.tmp / name).mkdir()
        world.roost("spawn", name, "--cwd", str(world.tmp / name))
    world.tmux("kill-server")
    (world.tmp / "bad").rmdir()
    proc = world.roost("restore", "--json", check=False)
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["started"] == 2 and report["failed"] == 1
    assert "does not exist" in report["failed_agents"]["bad"]
    after = world.ls()
    assert after["bad"]["state"] == "failed" and "does not exist" in after["bad"]["last_error"]
    assert after["bad"]["placement"] == "tile" and after["bad"]["tab"] == "main"
    (world.tmp / "bad").mkdir()
    world.roost("wake", "bad")  # a good start clears the failure
    assert world.ls()["bad"]["state"] == "running" and world.ls()["bad"]["last_error"] is None


def test_reload_restarts_only_running_tiles_in_the_new_mode(world: Env) -> None:
    spawn(world, "t1")
    spawn(world, "p1", "--detached")
    spawn(world, "h1", "--detached")
    world.roost("hibernate", "h1")
    world.last_start(3)
    starts = len(world.starts())
    world.roost("reload", "--dangerous")
    new = world.last_start(starts + 1)
    world.wait_for(lambda: world.ls()["t1"]["state"] == "running", what="t1 back")
    assert len(world.starts()) == starts + 1  # only t1 restarted
    assert "--dangerously-skip-permissions" in new["argv"]
    assert world.ls()["h1"]["state"] == "hibernated"
    assert all(a["dangerous"] for a in world.ls().values())  # the rest take it when they wake
    spawn(world, "later")  # new agents take the workspace's mode, unless told otherwise
    spawn(world, "careful", "--no-dangerous")
    assert world.ls()["later"]["dangerous"] and not world.ls()["careful"]["dangerous"]


def test_kill_tree_and_park_tree(world: Env) -> None:
    spawn(world, "root")
    spawn(world, "kid", "--parent", "root")
    spawn(world, "grandkid", "--orchestrated-by", "kid")
    spawn(world, "other")
    assert world.ls()["grandkid"]["orchestration_root"] == "kid"
    world.roost("park", "root", "--tree")
    placements = {n: a["placement"] for n, a in world.ls().items()}
    assert placements == {
        "root": "detached",
        "kid": "detached",
        "grandkid": "detached",
        "other": "tile",
    }
    world.roost("kill", "root", "--tree")
    states = {n: a["state"] for n, a in world.ls().items()}
    assert states == {
        "root": "stopped",
        "kid": "stopped",
        "grandkid": "stopped",
        "other": "running",
    }


def test_rm_nulls_links_instead_of_dangling(world: Env) -> None:
    spawn(world, "p")
    spawn(world, "c", "--parent", "p", "--detached")
    world.roost("rm", "p")
    assert world.ls()["c"]["linked_parent"] is None
    cycle = world.roost("link", "c", "--parent", "c", check=False)
    assert cycle.returncode == 2 and "cycle" in cycle.stderr


@pytest.mark.timeout(300)  # some twenty roost calls, each a process: slow on a loaded machine
def test_export_import_round_trip_exactly_and_bad_input_changes_nothing(world: Env) -> None:
    spawn(world, "a")
    spawn(world, "b", "--tab", "t2", "--split", "h", "--parent", "a")
    spawn(world, "c", "--detached", "--orchestrated-by", "a")
    spawn(world, "d")
    world.roost("bury", "d")
    world.roost("pin", "c")
    exported = world.roost("export").stdout
    data = json.loads(exported)
    assert data["format"] == "roost-workspace" and data["version"] == 1

    # into a fresh roost home: the same workspace, byte for byte
    fresh = {"ROOST_HOME": str(world.tmp / "other-home")}
    path = world.tmp / "ws.json"
    path.write_text(exported)
    world.roost("import", str(path), env=fresh)
    assert world.roost("export", env=fresh).stdout == exported

    # bad input: refused with one line, nothing changed
    def refused(doc: object, says: str) -> None:
        bad = world.tmp / "bad.json"
        bad.write_text(doc if isinstance(doc, str) else json.dumps(doc))
        proc = world.roost("import", str(bad), env=fresh, check=False)
        assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
        assert says in proc.stderr
        assert world.roost("export", env=fresh).stdout == exported

    refused("{not json", "not JSON")
    refused({"format": "other"}, "not a roost workspace")
    refused({**data, "version": 99}, "unsupported export version")
    refused(data, "already used")  # importing the same agents twice
    fresh_ids = exported
    for a in data["agents"]:  # new roost ids everywhere they appear (tiles, links, pins)
        fresh_ids = fresh_ids.replace(a["id"], str(uuid.uuid4()))
    renamed = json.loads(fresh_ids)
    for a in renamed["agents"]:
        a["name"] = "n" + a["name"]
    refused(renamed, "already belongs to another agent")  # its conversations are taken
    for a in renamed["agents"]:
        # no conversation, so no transcript of one either (an agent's own files only)
        a["provider_session_id"], a["session_history"], a["transcript_path"] = None, [], None
    refused(renamed, "tab name")  # its tabs exist already
    for t in renamed["tabs"]:
        t["name"] = "n" + t["name"]
    renamed["tabs"][0]["layout"] = {"split": "x", "ratio": 5, "a": {}, "b": {}}
    refused(renamed, "a split needs split")
    db = sqlite3.connect(world.tmp / "other-home" / "roost.db")
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_gc_removes_stale_and_idle_but_never_pinned_or_live(world: Env) -> None:
    for name in ("live", "idle", "pinned", "fresh"):
        spawn(world, name, *([] if name == "live" else ["--detached"]))
    world.roost("pin", "pinned")
    spawn(world, "stale", "--detached")
    world.last_start(5)
    world.wait_for(
        lambda: all(a["status"] != "starting" for a in world.ls().values()), what="hooks read"
    )  # reading hook events counts as activity
    for name in ("idle", "stale"):  # a running agent is never removed (tests/test_gc.py)
        world.roost("hibernate", name)
    world.ls()  # reads the hook events of the hibernations (activity) before the clock is set
    db = sqlite3.connect(world.home / "roost.db")
    db.execute(
        "UPDATE agents SET last_active_at = '2020-01-01T00:00:00+00:00' "
        "WHERE name IN ('idle', 'pinned', 'live')"
    )
    db.execute("UPDATE agents SET placement = NULL WHERE name = 'stale'")
    db.commit()
    db.close()
    dry = world.roost("gc", "--older-than", "7d", "--dry-run").stdout
    assert "would remove idle" in dry and "would remove stale" in dry
    assert "pinned" not in dry and "live" not in dry and "fresh" not in dry
    assert set(world.ls()) == {"live", "idle", "pinned", "fresh", "stale"}
    world.roost("gc", "--older-than", "7d", "--yes")
    assert set(world.ls()) == {"live", "pinned", "fresh"}
    bad = world.roost("gc", "--older-than", "soon", check=False)
    assert bad.returncode == 2 and "not a duration" in bad.stderr
