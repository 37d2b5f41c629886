"""Agent homes on a real tmux: topology, exit, crash, kill, wake, server loss, team homes."""

from __future__ import annotations

import json
import sys
from typing import Any

import psutil
import pytest

from conftest import Env, core_argv

pytestmark = pytest.mark.tmux


def spawn(world: Env, name: str, *args: str) -> dict[str, Any]:
    world.roost("spawn", name, "--cwd", str(world.tmp / "work"), *args)
    return world.ls()[name]


def agent_pane(world: Env, name: str) -> dict[str, Any]:
    return next(p for p in world.panes() if p["window"] == name and p["roost_id"])


def test_spawn_builds_a_home_with_a_keeper_and_the_agent_in_its_own_window(world: Env) -> None:
    # Without the roost service: with it, a claude's first prompt is typed once roost's tools
    # are connected (tests/test_real_claude_mcp_http.py), not given on its command line.
    world.roost("service", "stop")
    a = spawn(world, "alpha", "--prompt", "hello roost")
    assert a["state"] == "running" and a["home"] == "alpha" and a["provider"] == "claude"
    panes = world.panes()
    assert [(p["session"], p["window_index"], p["window"]) for p in panes] == [
        ("alpha", "0", "home"),
        ("alpha", "1", "alpha"),
    ]
    keeper, agent = panes
    assert keeper["keeper"] == "1" and keeper["home"] == "1" and keeper["roost_id"] == ""
    assert agent["roost_id"] == a["id"] and int(agent["pid"]) == a["pid"]
    # the keeper is a light shell, not a Python interpreter
    assert psutil.Process(int(keeper["pid"])).name() in ("sh", "dash", "bash")
    world.wait_screen("alpha:0", "running (pid")
    # claude was started with the minted session id and the prompt as its first message
    start = world.last_start(1)
    assert core_argv(start) == ["--session-id", a["provider_session_id"], "--", "hello roost"]
    assert start["cwd"] == str(world.tmp / "work")
    world.wait_screen(agent["pane_id"], "echo: hello roost")


def test_exit_keeps_the_home_and_wake_resumes_the_same_conversation(world: Env) -> None:
    a = spawn(world, "alpha", "--prompt", "remember 42")
    pane = agent_pane(world, "alpha")
    world.wait_screen(pane["pane_id"], "echo: remember 42")
    world.type(pane["pane_id"], "crash 3")
    world.wait_for(lambda: world.ls()["alpha"]["state"] == "stopped", what="alpha stopped")
    after = world.ls()["alpha"]
    assert after["exit_code"] == 3 and after["pid"] is None
    assert [p["window"] for p in world.panes()] == ["home", "alpha"]  # home survived
    world.wait_screen("alpha:0", "exited (status 3)")
    world.roost("wake", "alpha")
    woke = world.ls()["alpha"]
    assert woke["state"] == "running" and woke["provider_session_id"] == a["provider_session_id"]
    assert core_argv(world.last_start(2)) == ["--resume", a["provider_session_id"]]
    transcript = json.loads(
        next((world.user_home / ".claude/projects").glob(f"*/{a['provider_session_id']}.jsonl"))
        .read_text()
        .splitlines()[0]
    )
    assert transcript["message"]["content"] == "remember 42"
    # the same window, respawned: nothing piles up
    assert [p["window"] for p in world.panes()] == ["home", "alpha"]


def test_kill_stops_the_agent_keeps_home_and_record_then_wake(world: Env) -> None:
    a = spawn(world, "alpha")
    pid = a["pid"]
    out = world.roost("kill", "alpha").stdout
    assert "stopped alpha" in out
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    killed = world.ls()["alpha"]
    assert killed["state"] == "stopped" and killed["id"] == a["id"]
    assert [p["window"] for p in world.panes()] == ["home", "alpha"]
    world.wait_screen("alpha:0", "stopped (last exit")
    assert "was not running" in world.roost("kill", "alpha").stdout  # idempotent
    world.roost("wake", "alpha")
    assert world.ls()["alpha"]["state"] == "running"
    assert "already running" in world.roost("wake", "alpha").stdout  # idempotent


def test_kill_stops_children_that_escaped_with_setsid_and_nohup(world: Env) -> None:
    orphan_file = world.tmp / "orphans.txt"
    world.env["FAKE_AGENT_ORPHAN_FILE"] = str(orphan_file)
    spawn(world, "alpha")
    pane = agent_pane(world, "alpha")
    world.wait_screen(pane["pane_id"], "❯")
    world.type(pane["pane_id"], "orphan")
    world.wait_for(lambda: orphan_file.exists() and orphan_file.read_text().strip(), what="orphans")
    orphans = [int(x) for x in orphan_file.read_text().split()]
    agent_pid = int(pane["pid"])
    # one escaped the tree (setsid + double fork, reparented to init), one ignores SIGHUP (nohup)
    tree = {c.pid for c in psutil.Process(agent_pid).children(recursive=True)}
    assert len(orphans) == 2 and any(pid not in tree for pid in orphans)
    world.roost("kill", "alpha")
    for pid in orphans:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_tmux_server_killed_then_wake_recreates_the_home_with_its_keeper(world: Env) -> None:
    a = spawn(world, "alpha")
    world.last_start(1)  # up and running, transcript written
    world.tmux("kill-server")
    gone = world.ls()["alpha"]
    assert gone["state"] == "stopped" and gone["pid"] is None
    world.roost("wake", "alpha")
    panes = world.panes()
    assert [(p["session"], p["window_index"], p["window"], p["keeper"]) for p in panes] == [
        ("alpha", "0", "home", "1"),
        ("alpha", "1", "alpha", ""),
    ]
    assert world.ls()["alpha"]["state"] == "running"
    assert core_argv(world.last_start(2)) == ["--resume", a["provider_session_id"]]


def test_spawn_of_an_existing_agent(world: Env) -> None:
    spawn(world, "alpha")
    again = world.roost("spawn", "alpha", check=False)
    assert again.returncode != 0 and "already exists and is running" in again.stderr
    world.roost("kill", "alpha")
    other = world.roost("spawn", "alpha", "--provider", "codex", check=False)
    assert other.returncode != 0 and "another provider" in other.stderr
    woke = world.roost("spawn", "alpha")  # a stopped agent: spawn wakes it
    assert "woke alpha" in woke.stdout
    assert world.ls()["alpha"]["state"] == "running"


def test_team_home_holds_several_agents_and_survives_their_removal(world: Env) -> None:
    spawn(world, "a1", "--home", "team")
    spawn(world, "a2", "--home", "team")
    assert [(p["session"], p["window"]) for p in world.panes()] == [
        ("team", "home"),
        ("team", "a1"),
        ("team", "a2"),
    ]
    assert world.ls()["a1"]["home"] == "team"
    world.wait_screen("team:0", "a2")
    world.roost("rm", "a1")
    assert [p["window"] for p in world.panes()] == ["home", "a2"]
    world.roost("rm", "a2")
    assert world.panes() == []  # the last agent took the home with it
    assert world.ls() == {}


def test_rm_forgets_the_agent_and_its_home(world: Env) -> None:
    a = spawn(world, "alpha")
    world.roost("rm", "alpha")
    assert world.ls() == {} and world.panes() == []
    assert (
        not psutil.pid_exists(a["pid"]) or psutil.Process(a["pid"]).status() == psutil.STATUS_ZOMBIE
    )
    again = world.roost("rm", "alpha", check=False)
    assert again.returncode == 4 and "no agent named 'alpha'" in again.stderr


def test_capture_is_bounded_and_shows_the_screen(world: Env) -> None:
    spawn(world, "alpha", "--prompt", "ping")
    world.wait_for(lambda: "echo: ping" in world.roost("capture", "alpha").stdout, what="reply")
    out = world.roost("capture", "alpha", "--lines", "3").stdout
    assert 1 <= len(out.splitlines()) <= 3
    bad = world.roost("capture", "alpha", "--lines", "0", check=False)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_agent_gets_the_callers_environment_but_the_store_keeps_no_secret(world: Env) -> None:
    secret = "sk-test-" + "9" * 20
    world.roost(
        "spawn",
        "alpha",
        "--cwd",
        str(world.tmp / "work"),
        env={"MY_API_KEY": secret, "LANG": "C", "LC_ALL": "POSIX", "LC_CTYPE": "C"},
    )
    start = world.last_start(1)
    assert start["env"]["MY_API_KEY"] == secret
    assert start["env"]["ROOST_AGENT_ID"] == world.ls()["alpha"]["id"]
    assert {start["env"][k] for k in ("LANG", "LC_ALL", "LC_CTYPE")} == {"C.UTF-8"}
    assert "TMUX" in start["env"] and world.socket in start["env"]["TMUX"]  # roost's, not ours
    # on disk only in the environment kept for restarts and keeper wakes: owner-only
    saved = world.home / "agents" / start["env"]["ROOST_AGENT_ID"] / "env.json"
    assert oct(saved.stat().st_mode & 0o777) == oct(0o600)
    for path in (world.home).rglob("*"):
        if path.is_file() and path != saved:
            assert secret.encode() not in path.read_bytes(), path
    assert not list((world.home / "run").iterdir())  # the hand-over file is gone


def test_wake_from_inside_another_tmux_session_lands_in_the_agents_home(world: Env) -> None:
    spawn(world, "alpha")
    world.roost("kill", "alpha")
    user_socket = world.socket + "-user"
    user = ["tmux", "-L", user_socket, "-f", "/dev/null"]
    import subprocess

    subprocess.run(
        [*user, "new-session", "-d", "-s", "mine", "-x", "120", "-y", "40"],
        env=world.env,
        check=True,
    )
    try:
        user_tmux = subprocess.run(
            [*user, "display", "-p", "#{socket_path},1,0"],
            env=world.env,
            capture_output=True,
            text=True,
        ).stdout.strip()
        inside = {**world.env, "TMUX": user_tmux, "TMUX_PANE": "%0"}
        world.roost("wake", "alpha", env=inside)
        panes = world.panes()
        assert [(p["session"], p["window"]) for p in panes] == [
            ("alpha", "home"),
            ("alpha", "alpha"),
        ]
        mine = subprocess.run(
            [*user, "list-windows", "-a", "-F", "#{session_name}:#{window_name}"],
            env=world.env,
            capture_output=True,
            text=True,
        ).stdout.split()
        assert len(mine) == 1 and mine[0].startswith("mine:")
        # attach from a pane of the user's tmux: the client lands in alpha's home
        world.roost("kill", "alpha")
        roost_cmd = f"cd {world.tmp} && exec {sys.executable} -m roost attach alpha"
        subprocess.run(
            [
                *user,
                "new-window",
                "-t",
                "mine:",
                "-n",
                "att",
                *[
                    a
                    for k in (
                        "ROOST_HOME",
                        "ROOST_TMUX_SOCKET",
                        "TMUX_TMPDIR",
                        "HOME",
                        "ROOST_CLAUDE_BIN",
                        "FAKE_AGENT_LOG",
                        "PATH",
                    )
                    for a in ("-e", f"{k}={world.env[k]}")
                ],
                roost_cmd,
            ],
            env=world.env,
            check=True,
        )
        clients = world.wait_for(
            lambda: world.tmux(
                "list-clients", "-F", "#{?client_control_mode,,#{client_session}:#{window_name}}"
            ).split(),
            what="a client attached to roost's server",
        )
        assert clients == ["alpha:alpha"]
        assert world.ls()["alpha"]["state"] == "running"  # attach woke it
    finally:
        subprocess.run([*user, "kill-server"], env=world.env, capture_output=True)


def test_no_launch_spec_outlives_a_start(world: Env) -> None:
    """Launch specs hold the agent's whole environment (API keys): none may stay on disk."""
    import os as _os
    import time as _time

    run = world.home / "run"
    world.roost("spawn", "one", "--cwd", str(world.tmp / "work"))
    world.wait_for(lambda: not any(run.iterdir()), what="the launcher to delete its spec")
    # a spec left by a roost killed between writing it and starting the agent: swept
    stale, fresh = run / "x-0.json", run / "y-0.json"
    for path in (stale, fresh):
        path.write_text('{"env": {"API_KEY": "secret"}}')
    old = _time.time() - 120
    _os.utime(stale, (old, old))
    world.roost("events")
    assert not stale.exists() and fresh.exists()  # a spec younger than a start is left alone
    fresh.unlink()
    # a start that fails after the spec was written removes it at once
    wrapper = world.tmp / "tmux-fails-new-window"
    wrapper.write_text(
        '#!/bin/sh\nfor a in "$@"; do [ "$a" = new-window ] && '
        '{ echo "tmux: no space" >&2; exit 1; }; done\nexec tmux "$@"\n'
    )
    wrapper.chmod(0o755)
    (world.home / "config.toml").write_text(f'[tmux]\nbin = "{wrapper}"\n')
    proc = world.roost("spawn", "two", "--cwd", str(world.tmp / "work"), check=False)
    assert proc.returncode == 5 and "no space" in proc.stderr
    assert [p.name for p in run.iterdir() if p.suffix == ".json"] == []  # no spec, no secret
