"""roost with the real Claude Code CLI, offline: a pinned install from npm talking to a Messages
API stand-in on 127.0.0.1. Spawn, status from its hooks, send, working and idle again, the
transcript, kill, wake: the same session and the same transcript file continue."""

from __future__ import annotations

import json

import pytest

from anthropic_stub import running_stub
from conftest import Env
from real_claude import read_transcript, real_world, transcript_texts

pytestmark = [pytest.mark.tmux, pytest.mark.real_claude]


def test_roost_runs_real_claude_code_end_to_end(world: Env) -> None:
    work = world.tmp / "work"
    with running_stub() as stub:
        real_world(world, stub.url)
        user_settings = world.user_home / ".claude" / "settings.json"

        world.roost("spawn", "cc", "--cwd", str(work))
        idle = world.wait_status("cc", "idle", 60)
        sid = idle["provider_session_id"]
        assert idle["status_source"] in ("hook", "screen")

        stub.set_delay(30)  # hold the reply: the agent stays busy until released
        world.roost("send", "cc", "hello from roost")
        working = world.wait_status("cc", "working", 60)
        assert working["status_source"] in ("hook", "screen")
        stub.release()
        assert world.wait_status("cc", "idle", 60)["status_source"] in ("hook", "screen")

        transcript = world.wait_for(
            lambda: next((world.user_home / ".claude" / "projects").rglob(f"{sid}.jsonl"), None),
            what="transcript",
        )
        # the transcript may lag the Stop hook by a few milliseconds
        world.wait_for(
            lambda: (
                "stub reply: hello from roost"
                in " ".join(transcript_texts(read_transcript(transcript), "assistant"))
            ),
            what="reply in transcript",
        )
        entries = read_transcript(transcript)
        assert "hello from roost" in " ".join(transcript_texts(entries, "user"))
        hook_log = world.home / "agents" / idle["id"] / "hooks.log"

        def hooked() -> set[str]:
            return {line.split("\t")[1] for line in hook_log.read_text().splitlines()}

        # the Stop hook's line may come after the transcript's record
        world.wait_for(lambda: {"SessionStart", "UserPromptSubmit", "Stop"} <= hooked(), 30)

        world.roost("kill", "cc")
        assert world.ls()["cc"]["status"] == "stopped"
        world.roost("wake", "cc")
        assert world.ls()["cc"]["provider_session_id"] == sid
        world.wait_status("cc", "idle", 60)
        reply = world.roost("send", "cc", "second message", "--wait").stdout
        assert "stub reply: second message" in reply
        world.wait_for(
            lambda: (
                "second message" in " ".join(transcript_texts(read_transcript(transcript), "user"))
            ),
            what="second prompt",
        )
        entries = read_transcript(transcript)  # the same file goes on
        users = " ".join(transcript_texts(entries, "user"))
        assert "hello from roost" in users and "second message" in users
        assert not user_settings.exists()  # roost never writes the user's settings
        log = json.loads(world.roost("events", "cc", "--json").stdout)
        starts = [e for e in log if e["kind"] == "started"]
        assert [s["resume"] for s in starts] == [False, True]
        assert "killed" in [e["kind"] for e in log]
        # the woken claude was started with --resume <the same id> (its command line says so)
        import psutil

        argv = psutil.Process(world.ls()["cc"]["pid"]).cmdline()
        assert "--resume" in argv and argv[argv.index("--resume") + 1] == sid
