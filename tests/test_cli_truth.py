"""Issue 10 with the fake CLIs on a real tmux: a failed turn is `error` with the CLI's words and
`send` refuses it; a recap written while the user was away is not work; `/clear` is delivered
once and `/compact` leaves claude idle; a silent command is idle after its start grace;
`doctor` shows the CLIs' versions."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux


def spawn(world: Env, name: str, *args: str, env: dict[str, str] | None = None) -> None:
    world.roost("spawn", name, "--cwd", str(world.tmp / "work"), *args, env=env)


def hook_events(world: Env, agent_id: str) -> list[str]:
    log = world.home / "agents" / agent_id / "hooks.log"
    return [line.split("\t")[1] for line in log.read_text().splitlines()]


def test_a_failed_turn_is_an_error_with_the_clis_words_and_send_refuses_it(world: Env) -> None:
    spawn(world, "cl")
    world.wait_status("cl", "idle")
    assert world.roost("send", "cl", "fail 500").stdout.startswith("delivered")
    failed = world.wait_status("cl", "error")
    words = (
        "API Error: 500 Internal server error. This is a server-side issue, usually "
        "temporary — try again in a moment."
    )
    assert (failed["status_source"], failed["status_reason"]) == ("hook", words)
    assert "error: API Error: 500 Internal server error" in world.roost("ls").stdout
    # never "delivered" to a broken agent: refused at once, with the reason
    refused = world.roost("send", "cl", "are you there?", check=False, timeout=20)
    assert refused.returncode == 1
    assert f"cl shows an error: {words}" in refused.stderr
    events = json.loads(world.roost("events", "cl", "--json").stdout)
    assert any(
        e["kind"] == "status" and e["status"] == "error" and e.get("reason") == words
        for e in events
    )
    assert events[-1]["kind"] == "sent" and events[-1]["delivered"] is False
    # the user sees it through: the next message they type ends the error
    world.type(world.pane_of("cl"), "hello again")
    back = world.wait_status("cl", "idle")
    assert back["status_reason"] is None
    # --wait on a turn that fails: delivered, but the reply is the failure, exit 1
    proc = world.roost("send", "cl", "fail auth", "--wait", check=False)
    assert proc.returncode == 1
    assert "cl's turn failed: Invalid API key · Fix external API key" in proc.stderr
    assert world.ls()["cl"]["status_reason"] == "Invalid API key · Fix external API key"


def test_the_screen_alone_shows_a_failed_turn(world: Env) -> None:
    """Before its first hook event (or when hooks are lost) claude's failed-turn hint in the
    empty prompt box says error."""
    spawn(world, "cl")
    agent = world.wait_status("cl", "idle")
    world.roost("send", "cl", "fail 429")
    world.wait_status("cl", "error")
    log = world.home / "agents" / agent["id"] / "hooks.log"
    log.write_text("")  # the hook log lost: only the screen is left
    db = sqlite3.connect(world.home / "roost.db")
    db.execute("UPDATE agents SET hook_offset = 0")
    db.commit()
    db.close()
    seen = world.wait_status("cl", "error")
    assert (seen["status_source"], seen["status_reason"]) == (
        "screen",
        "Resend your message to try again",
    )


def test_a_recap_while_away_is_not_work(world: Env) -> None:
    spawn(world, "cl", env={"FAKE_AGENT_RECAP_AFTER": "0.5"})
    agent = world.wait_status("cl", "idle")
    world.roost("send", "cl", "hello")
    pane = world.pane_of("cl")
    world.wait_screen(pane, "echo: hello")
    world.tmux("send-keys", "-t", pane, "-H", "1b", "5b", "4f")  # the terminal loses focus
    world.wait_screen(pane, "※ recap:")
    world.wait_for(
        lambda: hook_events(world, agent["id"])[-1] == "SubagentStop",
        what="the recap's SubagentStop",
    )
    assert world.ls()["cl"]["status"] == "idle"
    sent = world.roost("send", "cl", "still there?", timeout=20)  # not refused for a minute
    assert "confirmed by hook" in sent.stdout


def test_clear_is_delivered_once_and_confirmed_by_the_new_session(world: Env) -> None:
    spawn(world, "cl")
    first = world.wait_status("cl", "idle")
    sent = world.roost("send", "cl", "/clear")
    assert sent.stdout == "delivered to cl (confirmed by new session id)\n"
    second = world.wait_status("cl", "idle")["provider_session_id"]
    assert second != first["provider_session_id"]
    events = hook_events(world, first["id"])
    assert events.count("SessionEnd") == 1 and "UserPromptSubmit" not in events  # one /clear
    assert world.roost("send", "cl", "after the clear").returncode == 0
    assert world.ls()["cl"]["provider_session_id"] == second
    # /compact with nothing to compact: its PreCompact confirms it, and it leaves claude idle
    assert world.roost("send", "cl", "/compact").stdout == "delivered to cl (confirmed by hook)\n"
    assert hook_events(world, first["id"])[-1] == "PreCompact"
    assert world.ls()["cl"]["status"] == "idle"


def test_a_silent_command_is_idle_after_its_grace_and_working_while_it_prints(world: Env) -> None:
    spawn(world, "quiet", "--provider", "command", "--", "sleep", "1000")
    spawn(
        world,
        "ticker",
        "--provider",
        "command",
        "--",
        "sh",
        "-c",
        "while :; do date +%s%N; sleep 0.2; done",
    )
    assert world.ls()["quiet"]["status"] == "starting"
    long_ago = (datetime.now(UTC) - timedelta(minutes=2)).isoformat(timespec="milliseconds")
    db = sqlite3.connect(world.home / "roost.db")  # the start grace, over without waiting
    db.execute("UPDATE agents SET started_at = ?", (long_ago,))
    db.commit()
    db.close()
    # still for QUIET seconds since its window opened: idle; the ticker's screen moves: working
    quiet = world.wait_status("quiet", "idle", timeout=10)
    assert quiet["status_source"] == "screen"
    assert world.ls()["ticker"]["status"] == "working"
    row = next(r for r in world.roost("ls").stdout.splitlines() if r.startswith("quiet "))
    assert row.split()[1] == "idle"  # the table (the fast path) agrees


def test_doctor_shows_each_clis_version(world: Env) -> None:
    spawn(world, "alpha")
    report = json.loads(world.roost("doctor", "--json").stdout)
    assert report["ok"]
    clis = {c["name"]: c for c in report["checks"][-4:]}
    assert list(clis) == ["claude", "codex", "gemini", "aider"]
    assert clis["claude"]["detail"].startswith("2.1.332 (") and not clis["claude"]["warning"]
    assert clis["aider"]["detail"].startswith("0.86.2 (")

    untested = world.roost("doctor", env={"FAKE_AGENT_VERSION": "codex-cli 0.170.0"})
    assert untested.returncode == 0  # a warning, not a problem
    line = next(ln for ln in untested.stdout.splitlines() if ln.startswith("WARN codex:"))
    assert "0.170.0" in line and "verified with 0.169.0" in line

    gone = {"ROOST_GEMINI_BIN": str(world.tmp / "no-gemini")}
    text = world.roost("doctor", env=gone).stdout
    assert "ok   gemini: not installed" in text
    spawn(world, "gem", "--provider", "gemini")
    broken = world.roost("doctor", env=gone, check=False)
    assert broken.returncode == 1
    assert "BAD  gemini: not installed" in broken.stdout and "agents of it exist" in broken.stdout


def test_a_cli_that_breaks_as_it_takes_the_message_is_not_delivered(world: Env) -> None:
    """The screen moving is no confirmation when what moved is the CLI failing (codex's
    "Reconnecting to server…" when its server is gone): error patterns from config.toml."""
    (world.home).mkdir(parents=True, exist_ok=True)
    (world.home / "config.toml").write_text(
        '[status.patterns.command]\nerror = ["Reconnecting to server"]\n'
    )
    spawn(
        world,
        "cx",
        "--provider",
        "command",
        "--",
        "sh",
        "-c",
        'printf "ready> "; read line; echo; echo "■ Reconnecting to server… 3/5"; sleep 1000',
    )
    world.wait_status("cx", "idle")
    proc = world.roost("send", "cx", "hello", check=False)
    assert proc.returncode == 1
    assert "not delivered to cx: cx shows an error: Reconnecting to server… 3/5" in proc.stderr
    broken = world.ls()["cx"]
    assert (broken["status"], broken["status_source"], broken["status_reason"]) == (
        "error",
        "screen",
        "Reconnecting to server… 3/5",
    )
    again = world.roost("send", "cx", "hello?", check=False, timeout=20)  # refused at once
    assert again.returncode == 1 and "cx shows an error: Reconnecting" in again.stderr
