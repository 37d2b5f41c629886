"""Lineage you can trust (issue 13): a provider session id changes only on proof from the agent's
own process, every id an agent had stays visible with when and why, and an earlier one can be
resumed on purpose. Real tmux, the fake claude."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import pytest

from conftest import Env, core_argv

pytestmark = pytest.mark.tmux


def spawn(world: Env, name: str) -> None:
    world.roost("spawn", name, "--cwd", str(world.tmp / "work"))


def agent(world: Env, name: str) -> dict[str, Any]:
    return world.ls()[name]


def wait_idle(world: Env, name: str) -> dict[str, Any]:
    return world.wait_for(
        lambda: (
            (a := agent(world, name))["status"] == "idle" and a["status_source"] == "hook" and a
        ),
        what=f"{name} idle by its hooks",
    )


def events(world: Env, name: str) -> list[dict[str, Any]]:
    return json.loads(world.roost("events", name, "--json").stdout)


def append_foreign_start(world: Env, name: str, at: float | None = None, cwd: str = "/tmp") -> str:
    """What a stray writer (an orphaned twin, another tool) appends to the agent's hook log: a
    SessionStart of another conversation, in the shape hook.sh writes without a token."""
    sid = str(uuid.uuid4())
    payload = {
        "session_id": sid,
        "transcript_path": f"/tmp/{sid}.jsonl",
        "cwd": cwd,
        "hook_event_name": "SessionStart",
        "source": "clear",
    }
    log = world.home / "agents" / agent(world, name)["id"] / "hooks.log"
    with log.open("a") as fh:
        fh.write(
            f"{int(at if at is not None else time.time())}\tSessionStart\t{json.dumps(payload)}\n"
        )
    return sid


def ignored(world: Env, name: str, sid: str) -> list[dict[str, Any]]:
    return [
        e
        for e in events(world, name)
        if e["kind"] == "session-ignored" and e.get("session_id") == sid
    ]


def test_a_foreign_session_start_while_it_runs_changes_nothing(world: Env) -> None:
    spawn(world, "cl")
    first = wait_idle(world, "cl")["provider_session_id"]
    foreign = append_foreign_start(world, "cl")
    assert agent(world, "cl")["provider_session_id"] == first
    [event] = ignored(world, "cl", foreign)
    assert event["reason"]  # why, in words
    world.roost("kill", "cl")
    world.roost("wake", "cl")
    assert core_argv(world.last_start(2))[:2] == ["--resume", first]
    assert wait_idle(world, "cl")["provider_session_id"] == first


def test_a_stale_session_start_from_before_the_launch_changes_nothing(world: Env) -> None:
    spawn(world, "cl")
    first = wait_idle(world, "cl")["provider_session_id"]
    # the agent's own cwd, only its time (an hour before this launch) gives it away
    foreign = append_foreign_start(
        world, "cl", at=time.time() - 3600, cwd=str((world.tmp / "work").resolve())
    )
    assert agent(world, "cl")["provider_session_id"] == first
    assert ignored(world, "cl", foreign)


def test_a_session_start_written_while_hibernated_is_not_woken_into(world: Env) -> None:
    spawn(world, "cl")
    first = wait_idle(world, "cl")["provider_session_id"]
    world.roost("send", "cl", "hello")
    world.roost("hibernate", "cl")
    foreign = append_foreign_start(world, "cl", cwd=str((world.tmp / "work").resolve()))
    world.roost("wake", "cl")
    assert core_argv(world.last_start(2))[:2] == ["--resume", first]
    assert wait_idle(world, "cl")["provider_session_id"] == first
    assert ignored(world, "cl", foreign)


def test_clear_is_adopted_and_the_lineage_is_visible(world: Env) -> None:
    spawn(world, "cl")
    first = wait_idle(world, "cl")["provider_session_id"]
    world.roost("send", "cl", "hello")
    world.roost("send", "cl", "/clear")
    second = world.wait_for(
        lambda: (sid := agent(world, "cl")["provider_session_id"]) != first and sid,
        what="the id after /clear",
    )
    history = agent(world, "cl")["session_history"]
    assert [(h["session_id"], h["reason"]) for h in history] == [
        (first, "spawn"),
        (second, "clear"),
    ]
    assert history[1]["previous"] == first and history[1]["at"] >= history[0]["at"]
    lines = world.roost("events", "cl").stdout
    assert f"session_id={second}" in lines and "reason=clear" in lines


def test_wake_session_resumes_an_earlier_conversation_on_purpose(world: Env) -> None:
    spawn(world, "cl")
    first = wait_idle(world, "cl")["provider_session_id"]
    world.roost("send", "cl", "hello")
    world.roost("send", "cl", "/clear")
    second = world.wait_for(
        lambda: (sid := agent(world, "cl")["provider_session_id"]) != first and sid,
        what="the id after /clear",
    )
    running = world.roost("wake", "cl", "--session", first, check=False)
    assert running.returncode != 0 and running.stderr.count("\n") == 1  # kill it first
    world.roost("kill", "cl")
    unknown = world.roost("wake", "cl", "--session", str(uuid.uuid4()), check=False)
    assert unknown.returncode != 0 and unknown.stderr.count("\n") == 1
    assert "session history" in unknown.stderr
    assert agent(world, "cl")["provider_session_id"] == second  # nothing changed
    world.roost("wake", "cl", "--session", first)
    assert core_argv(world.last_start(2))[:2] == ["--resume", first]
    shown = agent(world, "cl")
    assert shown["provider_session_id"] == first
    assert [h["reason"] for h in shown["session_history"]] == ["spawn", "clear", "chosen"]


# ---- status signals (issue 13) -----------------------------------------------------------------
def test_a_clean_exit_and_a_crash_read_differently(world: Env) -> None:
    for name in ("clean", "crash"):
        spawn(world, name)
        wait_idle(world, name)
    world.roost("send", "clean", "/exit")
    world.roost("send", "crash", "crash 3", check=False)  # it dies before confirming

    def ended() -> dict[str, Any] | None:
        found = world.ls()
        return found if all(found[n]["status"] == "exited" for n in ("clean", "crash")) else None

    found = world.wait_for(ended, what="both ended")
    assert (found["clean"]["exit_code"], found["clean"]["crashed"]) == (0, False)
    assert (found["crash"]["exit_code"], found["crash"]["crashed"]) == (3, True)
    table = world.roost("ls").stdout
    [clean] = [line for line in table.splitlines() if line.startswith("clean ")]
    [crash] = [line for line in table.splitlines() if line.startswith("crash ")]
    assert " exited " in clean and "crashed" not in clean
    assert " crashed (3) " in crash
    world.roost("kill", "clean")
    assert world.ls()["clean"]["status"] == "stopped"  # the user's kill: stopped, as before


def test_a_spinner_in_the_title_is_work_for_any_program(world: Env) -> None:
    """A quiet program whose terminal title shows a spinner works (a still, blank screen alone
    would read starting, then idle)."""
    script = "printf '\\033]2;\\342\\240\\213 Thinking\\033\\\\'; exec sleep 300"
    world.roost(
        "spawn",
        "quiet",
        "--provider",
        "command",
        "--cwd",
        str(world.tmp / "work"),
        "--",
        "sh",
        "-c",
        script,
    )
    found = world.wait_for(
        lambda: (a := agent(world, "quiet"))["status"] == "working" and a,
        what="working by its title",
    )
    assert found["status_source"] == "title"
