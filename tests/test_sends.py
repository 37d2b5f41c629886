"""Issue 14 on a real tmux with the fake agent CLIs: sends that never merge into (nor lose) a
draft someone left typed, time limits that bound the whole send, and starts that die at once
reported as failed (restore, spawn, wake, attach, reload --dangerous)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux

PROMPTS = {"claude": "❯ ", "codex": "› ", "gemini": " > ", "aider": "> "}
AUTH = {"FAKE_AGENT_AUTH_ERROR": "1"}


def spawn(
    world: Env, name: str, *args: str, env: dict[str, str] | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    return world.roost("spawn", name, "--cwd", str(world.tmp / "work"), *args, env=env, check=check)


def pane_of(world: Env, name: str) -> str:
    return next(p["pane_id"] for p in world.panes() if p["window"] == name)


def screen(world: Env, name: str) -> str:
    return world.tmux("capture-pane", "-p", "-t", pane_of(world, name))


def wait_idle(world: Env, name: str) -> None:
    world.wait_for(lambda: world.ls()[name]["status"] == "idle", 20, f"{name} idle")


def in_a_terminal(
    world: Env, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`roost ARGS` with a pseudo-terminal for its input (its output captured)."""
    leader, follower = pty.openpty()
    try:
        return subprocess.run(
            [sys.executable, "-m", "roost", *args],
            stdin=follower,
            capture_output=True,
            text=True,
            env={**world.env, **(env or {})},
            cwd=world.tmp,
            timeout=60,
        )
    finally:
        os.close(leader)
        os.close(follower)


def received(world: Env) -> list[str]:
    folder = world.tmp / "received"
    return [p.read_text() for p in sorted(folder.glob("*.txt"))] if folder.is_dir() else []


# ---- drafts --------------------------------------------------------------------------------------
@pytest.mark.parametrize("provider", ["claude", "codex", "gemini", "aider"])
def test_a_draft_on_the_input_line_is_neither_merged_nor_lost(world: Env, provider: str) -> None:
    spawn(
        world,
        "ag",
        "--provider",
        provider,
        env={"FAKE_AGENT_RECEIVED_DIR": str(world.tmp / "received")},
    )
    wait_idle(world, "ag")
    world.tmux("send-keys", "-t", pane_of(world, "ag"), "-l", "draft-words")
    world.wait_for(
        lambda: PROMPTS[provider] + "draft-words" in screen(world, "ag"), what="the draft on screen"
    )

    refused = world.roost("send", "ag", "real message", check=False)
    assert refused.returncode == 1
    assert 'ag has a draft on its input line ("draft-words")' in refused.stderr
    assert "neither submitted nor lost" in refused.stderr
    # the draft is where it was, untouched; the agent received nothing
    assert screen(world, "ag").rstrip().splitlines()[-1] == PROMPTS[provider] + "draft-words"
    assert received(world) == []

    # once the person submits it, sends go through again, each as its own prompt
    world.tmux("send-keys", "-t", pane_of(world, "ag"), "Enter")
    world.wait_for(lambda: received(world) == ["draft-words"], what="the draft submitted")
    wait_idle(world, "ag")
    world.roost("send", "ag", "real message")
    world.wait_for(
        lambda: received(world) == ["draft-words", "real message"], what="the message, alone"
    )


def test_text_left_by_an_interrupted_send_is_not_merged_into_the_next(world: Env) -> None:
    """A send killed between its paste and its Enter leaves its text on the input line: the
    next send treats it as a draft like any other, rather than submitting both as one."""
    spawn(world, "cl", env={"FAKE_AGENT_RECEIVED_DIR": str(world.tmp / "received")})
    wait_idle(world, "cl")
    pane = pane_of(world, "cl")
    world.tmux("set-buffer", "-b", "cut-off", "first message")  # what roost's paste does
    world.tmux("paste-buffer", "-p", "-d", "-b", "cut-off", "-t", pane)  # ... and no Enter
    world.wait_for(lambda: "❯ first message" in screen(world, "cl"), what="the pasted text")

    refused = world.roost("send", "cl", "second message", check=False)
    assert refused.returncode == 1 and '("first message")' in refused.stderr
    assert received(world) == []
    assert screen(world, "cl").rstrip().splitlines()[-1] == "❯ first message"


# ---- time limits ---------------------------------------------------------------------------------
def test_timeout_bounds_the_wait_for_a_busy_agent(world: Env) -> None:
    spawn(world, "cl")
    wait_idle(world, "cl")
    world.roost("send", "cl", "work 120")
    world.wait_for(lambda: world.ls()["cl"]["status"] == "working", what="busy")

    # without the bound it would wait 60 s for the agent to be ready: the subprocess's own
    # 30 s limit would fail the test
    late = world.roost("send", "cl", "x", "--wait", "--timeout", "3", check=False, timeout=30)
    assert late.returncode == 1
    assert "timed out after" in late.stderr
    assert "waiting for cl to be ready for input (it is working" in late.stderr

    ready = world.roost("send", "cl", "x", "--ready-timeout", "2", check=False, timeout=30)
    assert ready.returncode == 1 and "waiting for cl to be ready for input" in ready.stderr
    assert "--ready-timeout waits longer" in ready.stderr


def test_bad_time_limits_are_refused_before_anything(world: Env) -> None:
    for flag in ("--timeout", "--ready-timeout"):
        bad = world.roost_inprocess("send", "cl", "x", flag, "0")
        assert bad.returncode == 2 and f"{flag} must be a positive number" in bad.stderr


def test_send_help_documents_the_defaults(world: Env) -> None:
    out = world.roost_inprocess("send", "--help").stdout
    assert "--timeout" in out and "600" in out and "--ready-timeout" in out and "60" in out


# ---- starts that die at once -------------------------------------------------------------------
def test_spawn_whose_cli_dies_at_once_fails_with_its_words(world: Env) -> None:
    failed = spawn(world, "cl", env=AUTH, check=False)
    assert failed.returncode == 1
    assert "API Error: 401" in failed.stderr and "authentication_error" in failed.stderr
    assert "its start failed at once (exit 1)" in failed.stderr
    agent = world.ls()["cl"]
    assert agent["state"] == "failed" and "API Error: 401" in agent["last_error"]

    # attach without a terminal refuses before it tries anything (issue 35)
    starts = len(world.starts())
    refused = world.roost("attach", "cl", check=False, env=AUTH)
    assert refused.returncode == 2 and "roost attach needs a terminal" in refused.stderr
    assert len(world.starts()) == starts and world.ls()["cl"]["state"] == "failed"
    # in a terminal, attach shows why instead of a dead screen (it tries the start again)
    attached = in_a_terminal(world, "attach", "cl", env=AUTH)
    assert attached.returncode == 1 and "API Error: 401" in attached.stderr
    assert len(world.starts()) == starts + 1
    woke = world.roost("wake", "cl", check=False, env=AUTH)
    assert woke.returncode == 1 and "API Error: 401" in woke.stderr
    # a start that holds clears it
    world.roost("wake", "cl")
    assert world.ls()["cl"]["last_error"] is None


def test_restore_reports_starts_that_die_and_stops_after_repeated_auth_failures(world: Env) -> None:
    names = [f"t{i}" for i in range(5)]
    for name in names:
        spawn(world, name)
    world.tmux("kill-server")

    # 3 starts at once, no stagger: still one login failure at a time until one start held
    done = world.roost(
        "restore", "--json", "--concurrency", "3", "--stagger", "0", check=False, env=AUTH
    )
    assert done.returncode == 1
    report = json.loads(done.stdout)
    failed, skipped = report["failed_agents"], report["not_started_agents"]
    assert len(failed) == 2 and len(skipped) == 3 and set(failed) | set(skipped) == set(names)
    assert report["started"] == 0
    assert all("API Error: 401" in why for why in failed.values())
    # the login to fix is said once, for the fleet (issue 23, part 3), not once per agent
    assert all(
        why == "not started: claude's login failed (see the advice)" for why in skipped.values()
    )
    assert sum("log in to claude" in line for line in report["advice"]) == 1
    assert "log in to claude once (or fix its API key), then `roost restore`" in report["advice"][0]
    agents = world.ls()
    assert all("API Error: 401" in agents[n]["last_error"] for n in failed)

    text = world.roost("restore", check=False, env=AUTH)
    assert text.returncode == 1 and "failed" in text.stdout and "API Error: 401" in text.stdout
    assert text.stdout.count("log in to claude") == 1

    # logged in again: the next restore starts them all
    again = world.roost("restore", "--json")
    assert json.loads(again.stdout)["failed"] == 0


# ---- a mode the CLI refuses ----------------------------------------------------------------------
ROOT = {"FAKE_AGENT_AS_ROOT": "1"}
REFUSAL = "--dangerously-skip-permissions cannot be used with root/sudo privileges"


def test_spawn_dangerous_refused_by_claude_fails_with_its_reason(world: Env) -> None:
    failed = spawn(world, "cl", "--dangerous", env=ROOT, check=False)
    assert failed.returncode == 1 and REFUSAL in failed.stderr
    assert REFUSAL in world.ls()["cl"]["last_error"]


def test_reload_dangerous_refused_by_claude_keeps_the_previous_mode(world: Env) -> None:
    spawn(world, "a1", env=ROOT)
    spawn(world, "a2", env=ROOT)
    wait_idle(world, "a1")
    refused = world.roost("reload", "--dangerous", check=False, env=ROOT)
    assert refused.returncode == 1 and REFUSAL in refused.stderr
    assert "previous mode" in refused.stderr
    agents = world.ls()
    for name in ("a1", "a2"):
        assert agents[name]["state"] == "running" and not agents[name]["dangerous"]
        assert agents[name]["last_error"] is None
    starts = [json.loads(line) for line in world.agent_log.read_text().splitlines()]
    last = {s["cwd"]: s for s in starts}  # the last start of each (same cwd: the last one)
    assert all("--dangerously-skip-permissions" not in s["argv"] for s in last.values())
    wait_idle(world, "a1")
    world.roost("send", "a1", "hello")  # it works as before
