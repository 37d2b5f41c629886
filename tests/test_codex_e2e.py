"""roost with the fake Codex CLI (tests/fake_agent.py, flavor codex, which behaves as 0.169.0
does) on a real tmux: exact session ids for several agents in one cwd, kill leaving shared
helpers and other agents alone, an error on the screen, an id learned after a clean exit.
tests/test_real_codex.py proves the same on the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
from functools import partial
from pathlib import Path

import psutil
import pytest

from conftest import FAKE_BIN, Env

pytestmark = pytest.mark.tmux


def spawn(world: Env, name: str, *args: str) -> None:
    world.roost("spawn", name, "--provider", "codex", "--cwd", str(world.tmp / "work"), *args)


def session_id(world: Env, name: str) -> str | None:
    """The provider session id roost has learned for the agent, None before it has one."""
    id_: str | None = world.ls()[name]["provider_session_id"]
    return id_


def session_of(world: Env, pid: int) -> str:
    """The id the fake codex with this pid chose (its start log says)."""
    return next(s["session_id"] for s in world.starts() if s["pid"] == pid)


def test_three_agents_in_one_cwd_messaged_in_reverse_order_keep_their_own_ids(world: Env) -> None:
    names = ["ca", "cb", "cc"]
    for name in names:
        spawn(world, name)
    for name in names:
        assert world.wait_status(name, "idle")["provider_session_id"] is None  # no rollout yet
    for name in reversed(names):  # the newest rollout is cc's, the oldest ca's
        world.roost("send", name, f"hello from {name}")
        world.wait_for(partial(session_id, world, name), what=f"{name}'s id")
    seen = world.ls()
    own = {name: session_of(world, seen[name]["pid"]) for name in names}
    assert {name: seen[name]["provider_session_id"] for name in names} == own
    assert len(set(own.values())) == 3
    for name in names:
        world.roost("kill", name)
    for name in ["cb", "cc", "ca"]:
        before = len(world.starts())
        world.roost("wake", name)
        start = world.last_start(before + 1)
        assert start["argv"][:2] == ["resume", own[name]] and start["session_id"] == own[name]
    world.wait_status("ca", "idle")
    world.roost("send", "ca", "who am I")
    world.wait_screen(world.pane_of("ca"), "echo: who am I")
    rollout = next(Path(world.user_home, ".codex", "sessions").rglob(f"*{own['ca']}.jsonl"))
    assert "hello from ca" in rollout.read_text() and "who am I" in rollout.read_text()


def test_kill_leaves_the_users_shared_codex_server_and_other_agents_alone(world: Env) -> None:
    # the user's own codex (not roost's) on the same ~/.codex, with its shared app-server
    user_env = {k: v for k, v in world.env.items() if not k.startswith("ROOST_")}
    user_env["FAKE_AGENT_DAEMON_LINGER"] = "60"
    user = subprocess.Popen(
        [str(FAKE_BIN / "codex")],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=user_env,
        cwd=world.tmp,
    )
    try:
        pidfile = world.user_home / ".codex" / "fake-app-server" / "pid"
        server = int(
            str(
                world.wait_for(
                    lambda: pidfile.exists() and pidfile.read_text(), what="the user's app-server"
                )
            )
        )
        spawn(world, "ca")
        spawn(world, "cb")
        world.wait_status("ca", "idle")
        world.wait_status("cb", "idle")
        for name in ("ca", "cb"):
            argv = psutil.Process(world.ls()[name]["pid"]).cmdline()
            assert "--no-daemon" in argv
        world.roost("kill", "ca")
        stopped = next(
            e
            for e in json.loads(world.roost("events", "ca", "--json").stdout)
            if e["kind"] == "killed"
        )["pids"]
        assert server not in stopped and user.pid not in stopped
        assert psutil.pid_exists(server) and user.poll() is None
        assert int(pidfile.read_text()) == server  # no agent started a server of its own
        world.roost("send", "cb", "still here")
        world.wait_screen(world.pane_of("cb"), "echo: still here")
        world.wait_status("cb", "idle")
    finally:
        user.kill()
        user.wait()
        if pidfile.exists():
            psutil.Process(int(pidfile.read_text())).kill()


def test_a_failed_turn_shows_error_and_send_refuses_until_the_next_turn(world: Env) -> None:
    spawn(world, "cx")
    world.wait_status("cx", "idle")
    # delivered, but codex fails the turn at once: on a screen-confirmed CLI an error where the
    # text went confirms nothing, so send may say so (exit 1); the status is what counts here
    world.roost("send", "cx", "fail auth", check=False)
    assert world.wait_status("cx", "error")["status_source"] == "screen"
    proc = world.roost("send", "cx", "hello?", check=False)
    assert proc.returncode == 1 and "shows an error" in proc.stderr
    world.type(world.pane_of("cx"), "try again")  # the user sees it through, by hand
    world.wait_screen(world.pane_of("cx"), "echo: try again")
    world.wait_status("cx", "idle")


def test_an_agent_that_quit_before_roost_looked_resumes_its_own_conversation(world: Env) -> None:
    spawn(world, "cx")
    spawn(world, "other")  # same cwd, messaged later: its rollout is the newest
    world.wait_status("cx", "idle")
    pane = world.pane_of("cx")
    world.type(pane, "remember me")
    world.wait_screen(pane, "echo: remember me")
    world.roost("send", "other", "me too")
    world.wait_screen(world.pane_of("other"), "echo: me too")
    world.type(pane, "/quit")  # exits on its own: roost never saw its rollout open
    world.wait_screen(pane, "codex resume")
    world.wait_for(lambda: world.ls()["cx"]["state"] == "stopped", what="cx exited")
    sid = world.starts()[0]["session_id"]
    assert world.ls()["cx"]["provider_session_id"] == sid  # from its dead pane's last words
    world.roost("wake", "cx")
    assert world.last_start(3)["argv"][:2] == ["resume", sid]
    assert os.path.basename(world.last_start(3)["cwd"]) == "work"


def test_send_wait_prints_the_reply_from_the_rollout(world: Env) -> None:
    """codex has no Stop hook: --wait reads this turn's answer from its rollout (issue 19)."""
    spawn(world, "cx")
    world.wait_status("cx", "idle")
    sent = world.roost("send", "cx", "what is two and two", "--wait", "--timeout", "60")
    assert sent.stdout.strip() == "echo: what is two and two"
