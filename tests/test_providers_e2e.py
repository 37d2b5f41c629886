"""Each provider through roost on a real tmux, with the fake CLIs: start, learn id, resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux


def without_mcp(argv: list[str]) -> list[str]:
    """A codex argv without roost's `-c mcp_servers.roost.*` overrides (tests/test_mcp_wiring.py
    checks those) and its `-c notify=` program (tests/test_cli_hooks.py)."""
    ours = ("mcp_servers.roost.", "notify=")
    skip = {
        i
        for i, arg in enumerate(argv)
        if arg == "-c" and i + 1 < len(argv) and argv[i + 1].startswith(ours)
    }
    return [arg for i, arg in enumerate(argv) if i not in skip and i - 1 not in skip]


def test_codex_session_id_is_learned_from_its_rollout_and_resumed(world: Env) -> None:
    world.roost(
        "spawn",
        "cx",
        "--provider",
        "codex",
        "--dangerous",
        "--prompt",
        "hi codex",
        "--cwd",
        str(world.tmp / "work"),
    )
    start = world.last_start(1)
    assert without_mcp(start["argv"]) == [
        "--no-daemon",
        "--dangerously-bypass-approvals-and-sandbox",
        "--",
        "hi codex",
    ]
    sid = start["session_id"]
    assert world.wait_for(
        lambda: world.ls()["cx"]["provider_session_id"] == sid, what="codex id learned"
    )
    world.roost("kill", "cx")
    world.roost("wake", "cx")
    assert without_mcp(world.last_start(2)["argv"]) == [
        "resume",
        sid,
        "--no-daemon",
        "--dangerously-bypass-approvals-and-sandbox",
    ]
    assert world.last_start(2)["session_id"] == sid


def test_codex_wake_before_any_conversation_starts_fresh_and_says_so(world: Env) -> None:
    died = world.roost(
        "spawn",
        "cx",
        "--provider",
        "codex",
        "--cwd",
        str(world.tmp / "work"),
        env={"FAKE_AGENT_EXIT_ON_START": "1"},
        check=False,
    )  # before a rollout
    assert died.returncode == 1 and "its start failed at once (exit 1)" in died.stderr
    assert world.ls()["cx"]["state"] == "failed"
    world.roost("wake", "cx")  # no conversation to lose (issue 19, item 7): a new one
    assert without_mcp(world.last_start(2)["argv"]) == ["--no-daemon"]
    fresh = [
        e
        for e in json.loads(world.roost("events", "cx", "--json").stdout)
        if e["kind"] == "fresh-start"
    ]
    assert len(fresh) == 1 and "no conversation yet" in str(fresh[0])


def gemini_file(world: Env, sid: str) -> Path:
    """The fake gemini's chat file of a session (0.61's layout), found by its id."""
    (path,) = (world.user_home / ".gemini" / "tmp").glob(f"*/chats/session-*-{sid[:8]}.jsonl")
    return path


def test_gemini_starts_with_roosts_id_and_resumes_its_file(world: Env) -> None:
    world.roost(
        "spawn", "gm", "--provider", "gemini", "--prompt", "hello", "--cwd", str(world.tmp / "work")
    )
    start = world.last_start(1)
    sid = world.ls()["gm"]["provider_session_id"]
    assert start["argv"] == ["--session-id", sid, "--prompt-interactive=hello"]
    assert start["session_id"] == sid
    world.wait_for(lambda: "hello" in gemini_file(world, sid).read_text(), what="chat file")
    world.roost("kill", "gm")
    world.roost("wake", "gm")
    assert world.last_start(2)["argv"] == ["-r", sid]


def test_gemini_without_a_message_starts_again_under_its_id(world: Env) -> None:
    world.roost("spawn", "gm", "--provider", "gemini", "--cwd", str(world.tmp / "work"))
    sid = world.ls()["gm"]["provider_session_id"]
    world.wait_for(lambda: world.ls()["gm"]["status"] == "idle", what="idle")
    world.roost("kill", "gm")  # gemini deletes a session file that holds no message
    world.roost("wake", "gm")
    assert world.last_start(2)["argv"] == ["--session-id", sid]


def test_three_gemini_agents_in_one_cwd_keep_their_own_conversations(world: Env) -> None:
    names = ("g1", "g2", "g3")
    for name in names:
        world.roost("spawn", name, "--provider", "gemini", "--cwd", str(world.tmp / "work"))
    for name in names:
        world.wait_status(name, "idle")
    for name in reversed(names):  # messaged in the reverse order of their starts
        assert "delivered" in world.roost("send", name, f"I am {name}").stdout
    ids = {name: world.ls()[name]["provider_session_id"] for name in names}
    assert len(set(ids.values())) == 3
    for name in names:
        text = gemini_file(world, ids[name]).read_text()
        assert f"I am {name}" in text and all(f"I am {o}" not in text for o in names if o != name)
    world.roost("kill", "g2")
    world.roost("wake", "g2")
    assert world.last_start(4)["argv"] == ["-r", ids["g2"]]


@pytest.mark.parametrize(
    ("name", "provider"), [("gm", "gemini"), ("ai", "aider")], ids=["gemini", "aider"]
)
def test_gemini_and_aider_status_on_their_screens(world: Env, name: str, provider: str) -> None:
    world.roost("spawn", name, "--provider", provider, "--cwd", str(world.tmp / "work"))
    world.wait_status(name, "idle")
    world.roost("send", name, "work 30")
    world.wait_status(name, "working")
    pane = next(p for p in world.panes() if p["window"] == name)
    world.tmux("send-keys", "-t", pane["pane_id"], "Escape")
    world.wait_status(name, "idle")
    world.roost("send", name, "ask")
    world.wait_status(name, "waiting")
    world.tmux("send-keys", "-t", pane["pane_id"], "Enter")
    world.wait_status(name, "idle")
    # the send is confirmed by the echo, or by the error itself when the CLI draws it first:
    # then the send says the turn failed (and that the message was delivered), by design
    failed = world.roost("send", name, "api-error", check=False)
    assert failed.returncode == 0 or "turn failed" in failed.stderr, failed.stderr
    world.wait_status(name, "error")
    refused = world.roost("send", name, "again", check=False)
    assert refused.returncode != 0 and "not delivered" in refused.stdout + refused.stderr
    world.type(pane["pane_id"], "all good")  # a later turn that went through ends it
    world.wait_status(name, "idle")


def test_aider_keeps_its_chat_history_and_restores_it(world: Env) -> None:
    world.roost(
        "spawn",
        "ai",
        "--provider",
        "aider",
        "--prompt",
        "add tests",
        "--cwd",
        str(world.tmp / "work"),
    )
    start = world.last_start(1)
    assert start["argv"][0] == "--chat-history-file"
    history = start["argv"][1]
    assert history.startswith(str(world.home))
    pane = next(p for p in world.panes() if p["window"] == "ai")
    world.wait_screen(pane["pane_id"], "echo: add tests")  # the prompt was typed in for aider
    world.roost("kill", "ai")
    world.roost("wake", "ai")
    assert world.last_start(2)["argv"] == ["--chat-history-file", history, "--restore-chat-history"]
    world.wait_screen(pane["pane_id"], "Restored")


def test_command_provider_reruns_argv_verbatim_without_a_shell(world: Env) -> None:
    marker = world.tmp / "ran.txt"
    world.roost(
        "spawn",
        "cmd",
        "--provider",
        "command",
        "--cwd",
        str(world.tmp / "work"),
        "--",
        "sh",
        "-c",
        'printf "%s" "$1" > "$2"; exec sleep 1000',
        "sh",
        "; $(touch pwned) `id`",
        str(marker),
    )
    world.wait_for(marker.exists, what="command ran")
    assert marker.read_text() == "; $(touch pwned) `id`"
    assert not (world.tmp / "work" / "pwned").exists()
    assert world.ls()["cmd"]["state"] == "running"
