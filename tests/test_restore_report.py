"""`roost restore` tells what it does (issue 36, point 8), on a real tmux: a progress line on
stderr for each agent as its start settles, then a report on stdout (or one JSON object) naming
what resumed its conversation (with its session id), what started, what is still hibernated,
what failed with its CLI's words and what was not started and why (needs approval, a missing
executable).

Before: nothing until every start had settled, then counts; an agent that needs approval or
whose executable is missing counted as failed; the JSON named neither the resumed sessions nor
the hibernated agents."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from typing import Any

import pytest
from test_import_hostile import one_agent, write

from conftest import Env, core_argv

pytestmark = pytest.mark.tmux

BAD_WORDS = "fatal: config.yml: no such file"


def command_tile(name: str, args: list[str], cwd: str) -> dict[str, Any]:
    [agent] = one_agent(
        id=str(uuid.uuid4()),
        name=name,
        home=name,
        provider="command",
        args=args,
        provider_session_id=None,
        cwd=cwd,
        placement="tile",
        intent="running",
    )["agents"]
    return dict(agent)


def chain(ids: list[str]) -> dict[str, Any]:
    """A tab's layout holding `ids` in this order."""
    if len(ids) == 1:
        return {"leaf": ids[0]}
    return {"split": "v", "ratio": 0.5, "a": {"leaf": ids[0]}, "b": chain(ids[1:])}


def four_command_tiles(world: Env, progress_file: str) -> None:
    """bad (its program exits at once with an error), guest (needs approval), gone (its program
    is missing) and ok, tiles of one tab in that order, imported without --allow-dangerous and
    all but guest approved. ok's program starts only once restore's stderr shows the third
    agent settled (else it exits 1 and its start fails): the progress lines are written as each
    start settles, not at the end."""
    work = world.tmp / "work"
    work.mkdir(exist_ok=True)
    cwd = str(work.resolve())
    waits_for_progress = (
        "for i in $(seq 200); do grep -q '\\[3/4\\]' \"$0\" && { echo up; exec cat; }; "
        "sleep 0.02; done; echo 'no progress line seen'; exit 1"
    )
    agents = [
        command_tile("bad", ["sh", "-c", f"echo '{BAD_WORDS}' >&2; exit 3"], cwd),
        command_tile("guest", ["sh", "-c", "echo hi; exec cat"], cwd),
        command_tile("gone", [str(world.tmp / "no-such-program")], cwd),
        command_tile("ok", ["sh", "-c", waits_for_progress, progress_file], cwd),
    ]
    tab = {"id": str(uuid.uuid4()), "name": "t", "position": 0, "focus": agents[0]["id"]}
    tab["layout"] = chain([a["id"] for a in agents])
    for agent in agents:
        agent["tab_id"] = tab["id"]
    data = {**one_agent(), "agents": agents, "tabs": [tab]}
    world.roost("import", write(world, data))
    for name in ("bad", "gone", "ok"):
        world.roost("approve", name, "--yes")
    assert world.ls()["guest"]["needs_approval"] is True


def restore(world: Env, *args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """`roost restore ARGS`, its stderr written to a file as it goes (ok's program reads it)."""
    err = world.tmp / "restore.err"
    with err.open("w") as sink:
        proc = subprocess.run(
            [sys.executable, "-m", "roost", "restore", "--concurrency", "1", *args],
            env=world.env,
            cwd=world.tmp,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=sink,
            text=True,
            timeout=120,
        )
    return proc, err.read_text().splitlines()


def assert_progress(lines: list[str]) -> None:
    assert lines[0] == "restoring: 4 to start (1 at a time), 0 to hibernate, 0 already running"
    numbered = [line for line in lines if line.startswith("[")]
    assert [line.split(":")[0] for line in numbered] == [
        "[1/4] bad",
        "[2/4] guest",
        "[3/4] gone",
        "[4/4] ok",
    ], lines
    assert numbered[0].startswith("[1/4] bad: failed: its start failed at once (exit 3)")
    assert BAD_WORDS in numbered[0]
    assert numbered[1].startswith("[2/4] guest: not started: needs approval")
    assert "roost approve guest" in numbered[1]
    assert "executable" in numbered[2] and "not found" in numbered[2]
    assert numbered[2].startswith("[3/4] gone: not started: command: executable")
    assert numbered[3] == "[4/4] ok: started (no conversation to resume)"


def test_restore_tells_each_start_as_it_settles_then_reports_each_group(world: Env) -> None:
    four_command_tiles(world, str(world.tmp / "restore.err"))
    proc, progress = restore(world)
    assert proc.returncode == 1, (proc.stdout, progress)  # a failed start: exit 1, as documented
    assert_progress(progress)
    report = proc.stdout.splitlines()
    assert report[0].startswith("restored in ")
    assert report[0].endswith(
        ": 4 live expected, 1 started, 0 already running, 0 hibernated, 1 failed, 2 not started"
    )
    assert "  started with no conversation to resume: ok" in report
    [failed] = [line for line in report if line.startswith("  failed ")]
    assert failed.startswith("  failed bad: its start failed at once (exit 3)")
    assert BAD_WORDS in failed
    [guest] = [line for line in report if line.startswith("  not started guest:")]
    assert "needs approval" in guest and "roost approve guest" in guest
    [gone] = [line for line in report if line.startswith("  not started gone:")]
    assert "executable" in gone and "not found" in gone
    world.wait_screen(world.pane_of("ok"), "up")
    after = world.ls()
    assert after["ok"]["state"] == "running" and after["guest"]["needs_approval"] is True
    assert after["bad"]["state"] == "failed" and BAD_WORDS in after["bad"]["last_error"]


def test_restore_json_is_one_object_with_every_group_and_progress_stays_on_stderr(
    world: Env,
) -> None:
    four_command_tiles(world, str(world.tmp / "restore.err"))
    proc, progress = restore(world, "--json")
    assert proc.returncode == 1
    assert_progress(progress)
    report = json.loads(proc.stdout)  # nothing but the report on stdout
    assert report["started"] == 1 and report["started_agents"] == ["ok"]
    assert report["resumed"] == 0 and report["resumed_agents"] == {}
    assert report["failed"] == 1 and BAD_WORDS in report["failed_agents"]["bad"]
    assert report["not_started"] == 2 and sorted(report["not_started_agents"]) == ["gone", "guest"]
    assert "roost approve guest" in report["not_started_agents"]["guest"]
    assert "not found" in report["not_started_agents"]["gone"]
    assert report["hibernated"] == 0 and report["hibernated_agents"] == []
    assert report["already_running"] == 0 and report["already_running_agents"] == []
    assert {"live_expected", "seconds", "peak_concurrent_starts", "left_stopped", "advice"} <= set(
        report
    )


def test_restore_names_the_resumed_session_and_the_hibernated(world: Env) -> None:
    work = str(world.tmp / "work")
    world.roost("spawn", "talk", "--cwd", work)
    world.roost("spawn", "nap", "--cwd", work, "--detached")
    sid = world.ls()["talk"]["provider_session_id"]
    world.wait_for(lambda: len(world.starts()) >= 2, what="2 agent starts")
    world.tmux("kill-server")

    proc = world.roost("restore", "--json")
    report = json.loads(proc.stdout)
    assert report["resumed"] == 1 and report["resumed_agents"] == {"talk": sid}
    assert report["hibernated_agents"] == ["nap"]
    lines = proc.stderr.splitlines()
    assert lines[0] == "restoring: 1 to start (3 at a time), 1 to hibernate, 0 already running"
    assert f"[1/1] talk: resumed its conversation {sid}" in lines

    again = world.roost("restore").stdout.splitlines()  # talk runs: nothing to start
    assert "  already running: talk" in again
    assert any(line.startswith("  still hibernated: nap (") for line in again)


def test_a_claude_agent_never_messaged_is_started_not_resumed(world: Env) -> None:
    """Claude Code writes its transcript with the first message: an agent never messaged has
    none, so restore starts it under its id and says so. Before: "resumed its conversation",
    counted and named as resumed, although no conversation came back."""
    world.env["FAKE_AGENT_LAZY_TRANSCRIPT"] = "1"  # no transcript until the first message
    world.roost("spawn", "quiet", "--cwd", str(world.tmp / "work"))
    sid = world.ls()["quiet"]["provider_session_id"]
    world.last_start(1)
    world.tmux("kill-server")

    proc = world.roost("restore", "--json")
    report = json.loads(proc.stdout)
    assert report["started_agents"] == ["quiet"]
    assert report["resumed"] == 0 and report["resumed_agents"] == {}
    assert f"[1/1] quiet: started a new conversation {sid}" in proc.stderr.splitlines()
    start = world.last_start(2)
    assert core_argv(start)[:2] == ["--session-id", sid]  # its id, the conversation begun anew

    world.tmux("kill-server")
    text = world.roost("restore").stdout.splitlines()
    assert "  started with no conversation to resume: quiet" in text
    assert not any("resumed" in line for line in text), text
