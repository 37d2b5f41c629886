"""Issue 10 on the real Claude Code CLI (the pinned install, offline against the Messages API
stand-in): failed turns (the stand-in answering 500 and 401) are `error` with Claude Code's own
words and `send` refuses them; `/clear` is delivered once, confirmed by the new session id; the
recap an idle claude writes after the user went away is not work."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from roost.core import status as statuses
from roost.providers import hooks, traits

from anthropic_stub import running_stub
from conftest import Env
from real_claude import real_world

pytestmark = [pytest.mark.tmux, pytest.mark.real_claude]


def hook_events(world: Env, agent_id: str) -> list[tuple[str, dict[str, Any]]]:
    log = world.home / "agents" / agent_id / "hooks.log"
    return [
        (entry[1], entry[2])
        for entry in map(hooks.parse_line, log.read_text().splitlines())
        if entry is not None
    ]


def user_types(world: Env, name: str, text: str) -> None:
    """What a user at the pane does: paste a line, then Enter a moment later."""
    pane = world.pane_of(name)
    world.tmux("set-buffer", "-b", "user", text)
    world.tmux("paste-buffer", "-p", "-d", "-b", "user", "-t", pane)
    world.wait_for(lambda: text in world.screen(pane), what="the pasted text")
    world.tmux("send-keys", "-t", pane, "Enter")


def test_failed_turns_are_errors_in_claudes_words_and_clear_is_delivered_once(world: Env) -> None:
    with running_stub() as stub:
        # no retries: a failed request ends the turn at once (10 retries take minutes)
        real_world(world, stub.url, CLAUDE_CODE_MAX_RETRIES="0")
        world.roost("spawn", "cc", "--cwd", str(world.tmp / "work"))
        agent = world.wait_status("cc", "idle", 60)

        stub.fail_with(500, "api_error", "Internal server error")
        assert (
            world.roost("send", "cc", "are you up?").stdout
            == "delivered to cc (confirmed by hook)\n"
        )
        failed = world.wait_status("cc", "error", 60)
        assert failed["status_source"] == "hook"
        assert failed["status_reason"].startswith(
            "API Error: 500 Internal server error. This is a server-side issue"
        )
        assert "error: API Error: 500 Internal server error" in world.roost("ls").stdout
        refused = world.roost("send", "cc", "and now?", check=False, timeout=30)
        assert refused.returncode == 1
        assert "cc shows an error: API Error: 500 Internal server error" in refused.stderr

        # the words roost's screen patterns look for, on the real screen (which its hook may
        # have come before)
        def reads(reason: str) -> bool:
            screen = world.screen(world.pane_of("cc"))
            patterns = statuses.patterns_for(traits.CLAUDE.patterns)
            return statuses.reading(screen, patterns) == ("error", reason)

        world.wait_for(lambda: reads("Resend your message to try again"), 30, "the 500's words")

        stub.fail_with(401, "authentication_error", "invalid x-api-key")
        user_types(world, "cc", "try once more")  # the user sees it through
        world.wait_for(
            lambda: (
                (a := world.ls()["cc"])["status_reason"] == "Invalid API key · Fix external API key"
                and a
            ),
            60,
            "the 401",
        )
        world.wait_for(lambda: reads("Once fixed, resend your message"), 30, "the 401's words")
        world.wait_for(  # the hook's line may come after the screen's words
            lambda: (
                [p.get("error") for e, p in hook_events(world, agent["id"]) if e == "StopFailure"]
                == ["server_error", "authentication_failed"]
            ),
            30,
            "both StopFailure hooks",
        )

        stub.fail_with(None)
        user_types(world, "cc", "fixed now")
        back = world.wait_for(
            lambda: (
                (a := world.ls()["cc"])["status"] == "idle" and a["status_reason"] is None and a
            ),
            60,
            "idle again",
        )
        first = back["provider_session_id"]

        sent = world.roost("send", "cc", "/clear")
        assert sent.stdout == "delivered to cc (confirmed by new session id)\n"
        second = world.wait_for(
            lambda: (s := world.ls()["cc"]["provider_session_id"]) != first and s,
            what="the new session id",
        )
        clears = [
            (e, p.get("source") or p.get("reason"))
            for e, p in hook_events(world, agent["id"])
            if e in ("SessionEnd", "SessionStart")
        ]
        assert clears == [
            ("SessionStart", "startup"),
            ("SessionEnd", "clear"),
            ("SessionStart", "clear"),
        ]  # sent once, done once
        reply = world.roost("send", "cc", "after the clear", "--wait").stdout
        assert reply.strip() == "stub reply: after the clear"
        assert world.ls()["cc"]["provider_session_id"] == second
        # /compact: PreCompact, the summary's SubagentStop (outside any turn), SessionStart
        # (source compact, the same id); idle after it
        sent = world.roost("send", "cc", "/compact")
        assert sent.stdout == "delivered to cc (confirmed by hook)\n"
        world.wait_screen(world.pane_of("cc"), "Compacted", timeout=60)
        world.wait_for(
            lambda: hook_events(world, agent["id"])[-1][0] == "SessionStart",
            what="the compaction's SessionStart",
        )
        assert [e for e, _ in hook_events(world, agent["id"])[-3:]] == [
            "PreCompact",
            "SubagentStop",
            "SessionStart",
        ]
        assert world.ls()["cc"]["status"] == "idle"


@pytest.mark.timeout(420)
@pytest.mark.minutes
def test_a_recap_written_while_away_leaves_claude_idle(world: Env) -> None:
    """Claude Code writes a "※ recap" 3 minutes after the terminal lost focus (once a session
    has 3 prompts): a subagent, so SubagentStop fires with no turn around it. Slow by nature
    (Claude Code's delay is fixed offline): ~3.5 minutes, mostly waiting."""
    with running_stub() as stub:
        # the recap is on by default; offline set-ups (no nonessential traffic) turn it off
        real_world(world, stub.url, CLAUDE_CODE_ENABLE_AWAY_SUMMARY="1")
        world.roost("spawn", "rc", "--cwd", str(world.tmp / "work"))
        agent = world.wait_status("rc", "idle", 60)
        for n in range(3):
            assert (
                world.roost("send", "rc", f"step {n}", "--wait").stdout.strip()
                == f"stub reply: step {n}"
            )
        pane = world.pane_of("rc")
        world.tmux("send-keys", "-t", pane, "-H", "1b", "5b", "4f")  # focus out: the user left
        world.wait_for(
            lambda: "SubagentStop" in [e for e, _ in hook_events(world, agent["id"])],
            timeout=300,
            what="the recap's SubagentStop",
        )
        world.wait_screen(pane, "※ recap", timeout=30)
        events = [e for e, _ in hook_events(world, agent["id"])]
        assert events[-1] == "SubagentStop" and events.count("Stop") == 3
        assert world.ls()["rc"]["status"] == "idle"
        sent = world.roost("send", "rc", "back again", timeout=30)  # at once, not refused
        assert sent.stdout == "delivered to rc (confirmed by hook)\n"


def test_two_claudes_in_one_cwd_keep_their_own_conversations(world: Env) -> None:
    """The closing note's rows for Claude Code, measured: two agents in one cwd messaged in
    reverse order, each with its own session id and transcript; `waiting` on a permission
    dialog, refused by send; killing one leaves the other working; waking it resumes its own
    transcript file."""
    import psutil

    with running_stub() as stub:
        real_world(world, stub.url)
        work = str(world.tmp / "work")
        world.roost("spawn", "ca", "--cwd", work, "--", "--permission-mode", "default")
        world.roost("spawn", "cb", "--cwd", work)
        a, b = world.wait_status("ca", "idle", 60), world.wait_status("cb", "idle", 60)
        assert a["provider_session_id"] != b["provider_session_id"]
        for name in ("cb", "ca"):
            assert (
                world.roost("send", name, f"I am {name}", "--wait").stdout.strip()
                == f"stub reply: I am {name}"
            )
        projects = world.user_home / ".claude" / "projects"

        # Claude Code may append a turn's records after its Stop hook (a loaded CI run found no
        # file yet for the turn just answered): wait for each file to hold its turn
        def holding(name: str, sid: str) -> Path | None:
            found = projects.rglob(f"{sid}.jsonl")
            return next((t for t in found if f"I am {name}" in t.read_text()), None)

        transcripts = {
            n: world.wait_for(
                partial(holding, n, s["provider_session_id"]), 30, f"{n}'s transcript"
            )
            for n, s in (("ca", a), ("cb", b))
        }
        assert transcripts["ca"].parent == transcripts["cb"].parent  # one cwd
        assert "I am ca" in transcripts["ca"].read_text()
        assert "I am ca" not in transcripts["cb"].read_text()

        # waiting: a tool call that needs permission (ca runs in the default mode)
        stub.queue_tool_use(
            "Bash", {"command": "echo roost > marker.txt", "description": "Write a marker file"}
        )
        world.roost("send", "ca", "please write the file")
        waiting = world.wait_status("ca", "waiting", 60)
        refused = world.roost("send", "ca", "hello?", check=False, timeout=90)
        assert refused.returncode == 1 and "ca is waiting for you" in refused.stderr
        world.tmux("send-keys", "-t", world.pane_of("ca"), "Enter")  # 1. Yes
        world.wait_status("ca", "idle", 60)
        assert waiting["status_source"] in ("hook", "screen")

        # working while the other is killed: the kill leaves it alone
        stub.set_delay(30)
        world.roost("send", "cb", "a long one")
        world.wait_status("cb", "working", 60)
        cb_pid = world.ls()["cb"]["pid"]
        world.roost("kill", "ca")
        assert world.ls()["ca"]["status"] == "stopped"
        assert psutil.pid_exists(cb_pid) and world.ls()["cb"]["status"] == "working"
        stub.release()
        world.wait_status("cb", "idle", 60)

        world.roost("wake", "ca")
        woken = world.wait_status("ca", "idle", 60)
        assert woken["provider_session_id"] == a["provider_session_id"]
        stub.set_delay(0)
        reply = world.roost("send", "ca", "who was I?", "--wait").stdout
        assert reply.strip() == "stub reply: who was I?"
        world.wait_for(  # the same file goes on
            lambda: "who was I?" in transcripts["ca"].read_text(),
            30,
            "the new turn in ca's transcript",
        )
        assert "I am ca" in transcripts["ca"].read_text()
        assert "who was I?" not in transcripts["cb"].read_text()
        # and the model is sent the earlier turn, not cb's
        sent_to_model = json.dumps(stub.messages("main")[-1].body["messages"])
        assert "I am ca" in sent_to_model and "I am cb" not in sent_to_model
