"""Status, send, supervision and the event log, with the fake agent CLIs on a real tmux."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading

import pytest

from conftest import Env, core_argv

pytestmark = pytest.mark.tmux


def spawn(world: Env, name: str, *args: str, env: dict[str, str] | None = None) -> None:
    world.roost("spawn", name, "--cwd", str(world.tmp / "work"), *args, env=env)


def event_kinds(world: Env, name: str) -> list[str]:
    return [e["kind"] for e in json.loads(world.roost("events", name, "--json").stdout)]


def test_claude_status_follows_its_hooks(world: Env) -> None:
    spawn(world, "cl")
    # the screen may show the prompt a moment before the SessionStart hook lands; then the
    # hook takes over as the source
    idle = world.wait_for(
        lambda: (a := world.ls()["cl"])["status"] == "idle" and a["status_source"] == "hook" and a,
        what="idle from the hook",
    )
    assert idle["status_since"]
    world.roost("send", "cl", "work 120")  # until seen (a fixed few seconds can go unseen)
    working = world.wait_status("cl", "working")
    assert working["status_source"] in ("hook", "screen")
    world.tmux("send-keys", "-t", world.pane_of("cl"), "Escape")
    world.wait_status("cl", "idle")
    world.roost("send", "cl", "ask")
    waiting = world.wait_status("cl", "waiting")
    assert waiting["status_source"] in ("hook", "screen")
    pane = next(p for p in world.panes() if p["window"] == "cl")
    world.tmux("send-keys", "-t", pane["pane_id"], "1")
    world.wait_status("cl", "idle")
    kinds = [e["kind"] for e in json.loads(world.roost("events", "cl", "--json").stdout)]
    assert kinds[:2] == ["spawned", "started"] and "sent" in kinds
    statuses = [
        e["status"]
        for e in json.loads(world.roost("events", "cl", "--json").stdout)
        if e["kind"] == "status"
    ]
    assert {"idle", "working", "waiting"} <= set(statuses)


def test_a_turn_that_ends_before_any_look_is_still_one_turn(world: Env) -> None:
    """A sent prompt whose turn ends before anything looks at the agent (no service, a loaded
    machine) still shows in the event stream as working -> idle, once: what a parent's notice
    and a host's stream follow (a child on a host whose turn no look saw told nobody)."""
    spawn(world, "cl")
    world.wait_status("cl", "idle")
    world.roost("service", "stop")
    log = world.home / "agents" / world.ls()["cl"]["id"] / "hooks.log"
    world.roost("send", "cl", "work 0")  # taken (its UserPromptSubmit) and done at once
    world.wait_for(lambda: "\tStop\t" in log.read_text(), what="its Stop")
    world.ls()  # a look
    world.ls()  # and another: nothing new
    changes = [
        (e["status"], e.get("previous"))
        for e in json.loads(world.roost("events", "cl", "--json").stdout)
        if e["kind"] == "status"
    ]
    assert changes[-2:] == [("working", "idle"), ("idle", "working")], changes
    assert changes.count(("idle", "working")) == 1, changes


def test_screen_status_for_a_cli_without_hooks(world: Env) -> None:
    spawn(world, "cx", "--provider", "codex")
    idle = world.wait_status("cx", "idle")
    assert idle["status_source"] == "screen"
    world.roost("send", "cx", "work 120")  # until seen (a fixed few seconds can go unseen)
    assert world.wait_status("cx", "working")["status_source"] == "screen"
    world.tmux("send-keys", "-t", world.pane_of("cx"), "Escape")
    world.wait_status("cx", "idle")


def test_a_crash_shows_exited_with_its_code(world: Env) -> None:
    spawn(world, "cl")
    world.wait_status("cl", "idle")
    world.roost("send", "cl", "crash 7", check=False)  # it dies on receipt
    exited = world.wait_status("cl", "exited")
    assert exited["exit_code"] == 7 and exited["status_source"] == "process"
    world.roost("kill", "cl")
    assert world.ls()["cl"]["status"] == "stopped"


def test_send_delivers_long_multiline_text_intact_and_waits_for_the_reply(world: Env) -> None:
    received = world.tmp / "received"
    spawn(world, "cl", env={"FAKE_AGENT_RECEIVED_DIR": str(received)})
    text = "".join(
        f"line {i}: {'ünïcode ❯ ' if i % 7 == 0 else ''}{'x' * 60}\n" for i in range(80)
    )[:5000].rstrip("\n")
    assert len(text) > 4900 and text.count("\n") > 50
    proc = world.roost("send", "cl", "--wait", input=text)
    assert proc.stdout.startswith("echo: line 0:")
    files = sorted(received.iterdir())
    assert files[-1].read_text() == text


def test_send_wakes_a_stopped_agent_first(world: Env) -> None:
    spawn(world, "cl")
    world.wait_status("cl", "idle")
    world.roost("kill", "cl")
    out = world.roost("send", "cl", "hello again", "--wait").stdout
    assert out.strip() == "echo: hello again"
    assert core_argv(world.starts()[-1])[0] == "--resume"


def test_send_to_an_agent_that_dies_is_not_delivered(world: Env) -> None:
    died = world.roost(
        "spawn",
        "dies",
        "--cwd",
        str(world.tmp / "work"),
        "--provider",
        "command",
        "--",
        "sh",
        "-c",
        "exit 3",
        check=False,
    )
    assert died.returncode == 1 and "its start failed at once (exit 3)" in died.stderr
    assert world.ls()["dies"]["state"] == "failed"
    proc = world.roost("send", "dies", "anyone there?", check=False)  # it starts it again
    assert proc.returncode == 1 and "not delivered to dies" in proc.stderr
    assert "its start failed at once (exit 3)" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1
    sent = [
        e for e in json.loads(world.roost("events", "dies", "--json").stdout) if e["kind"] == "sent"
    ]
    assert sent and sent[-1]["delivered"] is False


def test_crash_loop_under_on_failure_ends_in_failed(world: Env) -> None:
    died = world.roost(
        "spawn",
        "loop",
        "--cwd",
        str(world.tmp / "work"),
        "--restart",
        "on-failure",
        env={"FAKE_AGENT_EXIT_ON_START": "3"},
        check=False,
    )
    assert died.returncode == 1 and "its start failed at once (exit 3)" in died.stderr
    failed = world.wait_for(
        lambda: "crash loop" in ((a := world.ls()["loop"])["last_error"] or "") and a,
        timeout=40,
        what="the crash loop",
    )
    assert failed["state"] == "failed"
    # the supervisor logs "failed" instead of sleeping for a restart: nothing starts after it
    kinds = world.wait_for(
        lambda: "failed" in (k := event_kinds(world, "loop")) and k, what="the failed event"
    )
    assert len(world.starts()) == 4  # the first start and three restarts, never more
    assert kinds.count("restarted") == 3 and kinds.count("failed") == 1
    world.roost("wake", "loop", env={"FAKE_AGENT_EXIT_ON_START": ""})  # the user clears it
    assert world.wait_status("loop", "idle")["last_error"] is None


def test_never_policy_does_not_restart(world: Env) -> None:
    died = world.roost(
        "spawn",
        "once",
        "--cwd",
        str(world.tmp / "work"),
        env={"FAKE_AGENT_EXIT_ON_START": "2"},
        check=False,
    )
    assert died.returncode == 1 and "its start failed at once (exit 2)" in died.stderr
    assert world.ls()["once"]["state"] == "failed"  # its reason stays until a start holds
    # the supervisor logs the exit after deciding; under on-failure a restart would follow it
    world.wait_for(lambda: "exited" in event_kinds(world, "once"), what="the exited event")
    assert len(world.starts()) == 1
    assert "restarted" not in event_kinds(world, "once")


def test_a_lost_conversation_is_unresumable_never_silently_fresh(world: Env) -> None:
    spawn(world, "cl", "--prompt", "remember this")
    world.wait_status("cl", "idle")
    before = world.ls()["cl"]
    world.wait_for(lambda: world.ls()["cl"]["status"] == "idle", what="read hooks")
    world.roost("kill", "cl")
    transcript = next(
        (world.user_home / ".claude" / "projects").rglob(f"{before['provider_session_id']}.jsonl")
    )
    transcript.unlink()  # as Claude Code's cleanupPeriodDays would
    starts = len(world.starts())
    proc = world.roost("wake", "cl", check=False)
    assert proc.returncode == 7 and "unresumable" in proc.stderr and "--fresh" in proc.stderr
    assert len(world.starts()) == starts  # nothing was started
    after = world.ls()["cl"]
    assert after["status"] == "failed"
    assert after["provider_session_id"] == before["provider_session_id"]
    world.roost("wake", "cl", "--fresh")
    fresh = world.ls()["cl"]
    assert fresh["provider_session_id"] != before["provider_session_id"]
    assert core_argv(world.last_start(starts + 1))[:2] == [
        "--session-id",
        fresh["provider_session_id"],
    ]


def test_claude_saying_no_conversation_marks_it_unresumable(world: Env) -> None:
    spawn(world, "cl", "--prompt", "hello")
    sid = world.wait_status("cl", "idle")["provider_session_id"]
    world.roost("kill", "cl")
    world.ls()  # read the hook events of the kill (SessionEnd carries the transcript path)
    # the transcript is still somewhere, but not where claude looks for it in this cwd
    transcript = next((world.user_home / ".claude" / "projects").rglob(f"{sid}.jsonl"))
    moved = world.tmp / f"{sid}.jsonl"
    transcript.rename(moved)
    import sqlite3

    db = sqlite3.connect(world.home / "roost.db")
    db.execute("UPDATE agents SET transcript_path = ?", (str(moved),))
    db.commit()
    db.close()
    # roost sees a transcript and resumes; claude cannot find it, and says so at once
    woke = world.roost("wake", "cl", check=False)
    assert woke.returncode == 1 and "No conversation found with session ID" in woke.stderr
    failed = world.wait_for(
        lambda: (a := world.ls()["cl"])["last_error"].startswith("unresumable") and a,
        what="unresumable",
    )
    assert failed["state"] == "failed" and "--fresh" in failed["last_error"]
    assert failed["provider_session_id"] == sid  # never replaced behind the user's back
    kinds = [e["kind"] for e in json.loads(world.roost("events", "cl", "--json").stdout)]
    assert "unresumable" in kinds


def test_clear_moves_to_a_new_session_id_and_keeps_the_lineage(world: Env) -> None:
    spawn(world, "cl")
    first = world.wait_status("cl", "idle")["provider_session_id"]
    world.roost("send", "cl", "/clear")
    sent = [
        e for e in json.loads(world.roost("events", "cl", "--json").stdout) if e["kind"] == "sent"
    ]
    assert sent[-1]["command"] is True  # no turn: a budget waits for one
    second = world.wait_for(
        lambda: (sid := world.ls()["cl"]["provider_session_id"]) != first and sid,
        what="new session id",
    )
    export = json.loads(world.roost("export").stdout)
    [agent] = export["agents"]
    assert agent["session_history"] == [first, second]
    world.roost("kill", "cl")
    world.roost("wake", "cl")
    assert core_argv(world.last_start(2))[:2] == ["--resume", second]


def test_watch_prints_changes_until_interrupted(world: Env) -> None:
    spawn(world, "cl")
    world.wait_status("cl", "idle")
    watcher = subprocess.Popen(
        [sys.executable, "-m", "roost", "watch", "--json", "--interval", "0.3"],
        # faulthandler: a watch that ignores Ctrl-C shows where it is on SIGABRT (seen on CI once)
        env={**world.env, "PYTHONFAULTHANDLER": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # as a shell runs a foreground command: Ctrl-C's default action. A test run started in
        # the background of a script ignores SIGINT, and would hand the ignoring down (found by
        # the faulthandler above: the watch sat in its sleep, the signal ignored)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    lines: list[str] = []
    reader = threading.Thread(
        target=lambda: lines.extend(iter(watcher.stdout.readline, "")), daemon=True
    )
    reader.start()

    def seen() -> list[str]:
        return [
            c["status"]
            for c in map(json.loads, list(lines))
            if c["name"] == "cl" and c.get("kind", "status") == "status"
        ]

    try:
        world.wait_for(lambda: seen() == ["idle"], what="watch's first line")
        world.roost("send", "cl", "work 2")
        world.wait_for(
            lambda: "working" in (s := seen()) and s[-1] == "idle",
            60,  # a loaded machine: each of watch's looks may take seconds
            what="working, then idle again",
        )
    finally:
        watcher.send_signal(signal.SIGINT)
        try:
            watcher.wait(timeout=30)
        except subprocess.TimeoutExpired:
            watcher.send_signal(signal.SIGABRT)  # its threads' stacks, to stderr
            err = watcher.stderr.read() if watcher.stderr else ""
            raise AssertionError(f"watch ran 30 s past Ctrl-C; it was at:\n{err}") from None
        reader.join(timeout=10)
    statuses = seen()
    assert statuses[0] == "idle" and "working" in statuses and statuses[-1] == "idle"
    assert watcher.returncode in (0, 130)


def test_ls_fast_path_loads_nothing_heavy(world: Env) -> None:
    """`roost ls` is run all the time: its fast path answers without Click, subprocess, psutil
    or json (no hook line to read for a command agent), and without core/settings.py's typed
    sections (~12 ms of CPU) for a config.toml roost has found valid before (issue 37: cold ls
    <= 2.5 x its floor). A config edited since is checked again: a wrong key is still its one
    line, never read unchecked."""
    spawn(world, "quiet", "--provider", "command", "--", "sh", "-c", "echo ready; sleep 300")
    (world.home / "config.toml").write_text(
        '[status.patterns.command]\nwaiting = ["Proceed? (y/n)"]\n[restore]\nconcurrency = 2\n'
    )
    world.wait_for(lambda: world.ls()["quiet"]["status"] == "idle", what="idle")
    world.ls()["quiet"]  # the full CLI records the status; the fast path then only reads
    code = (
        "import sys, io\nfrom roost.cli import fast\nout = io.StringIO()\nsys.stdout = out\n"
        "code = fast.fast(False)\nsys.stdout = sys.__stdout__\n"
        "heavy = ['click', 'subprocess', 'psutil', 'json', "
        "'textual', 'platformdirs', 'roost.core.settings']\n"
        "print(code, [m for m in heavy if m in sys.modules])\n"
    )

    def fast_ls() -> str:
        return subprocess.run(
            [sys.executable, "-c", code],
            env=world.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout.strip()

    assert fast_ls() == "0 []"
    (world.home / "config.toml").write_text("[restore]\nconcurrency = 0\n")
    assert fast_ls().startswith("None"), "an edited config is checked, then the full CLI speaks"
    proc = world.roost("ls", check=False)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "restore.concurrency" in proc.stderr, proc.stderr


def test_ls_gives_up_on_a_hung_tmux_with_one_line(world: Env) -> None:
    spawn(world, "a1", "--provider", "command", "--", "sleep", "300")
    world.ls()["a1"]
    hung = world.tmp / "hung-tmux"
    hung.write_text(
        '#!/bin/sh\nfor a in "$@"; do [ "$a" = list-panes ] && exec sleep 600; done\n'
        'exec tmux "$@"\n'
    )
    hung.chmod(0o755)
    (world.home / "config.toml").write_text(f'[tmux]\nbin = "{hung}"\n')
    for args in (["ls"], ["ls", "--json"]):
        proc = world.roost(*args, check=False, env={"ROOST_TMUX_TIMEOUT": "1"}, timeout=30)
        assert proc.returncode == 5, proc.stderr
        assert proc.stderr.startswith("roost: tmux did not answer within 1 s (list-panes")
        assert len(proc.stderr.splitlines()) == 1


def test_read_prints_an_agents_recent_conversation_and_refuses_a_stranger(world: Env) -> None:
    """`roost read NAME`: what the MCP tool read_conversation gives a parent, for a person (and
    for a parent elsewhere, through its host's roost: test_hostchildren.py)."""
    spawn(world, "cl")
    world.wait_status("cl", "idle")
    assert world.roost("send", "cl", "hello there", "--wait").stdout == "echo: hello there\n"
    said = json.loads(world.roost("read", "cl", "--json").stdout)
    assert said["name"] == "cl" and said["source"] == "transcript", said
    assert said["messages"][-2:] == [
        {"role": "user", "text": "hello there"},
        {"role": "assistant", "text": "echo: hello there"},
    ]
    assert world.roost("read", "cl", "-n", "1").stdout == "assistant: echo: hello there\n"
    for bad in (["read", "nobody"], ["read", "cl", "-n", "0"], ["read", "-x"]):
        refused = world.roost(*bad, check=False)
        assert refused.returncode != 0 and refused.stdout == "", (bad, refused)
    assert "no agent named 'nobody'" in world.roost("read", "nobody", check=False).stderr
