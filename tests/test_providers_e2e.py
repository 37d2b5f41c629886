"""Each provider through roost on a real tmux, with the fake CLIs: start, learn id, resume."""

from __future__ import annotations

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux


def test_codex_session_id_is_learned_from_its_rollout_and_resumed(world: Env) -> None:
    world.roost("spawn", "cx", "--provider", "codex", "--dangerous", "--prompt", "hi codex",
                "--cwd", str(world.tmp / "work"))
    start = world.last_start(1)
    assert start["argv"] == ["--no-daemon", "--dangerously-bypass-approvals-and-sandbox",
                             "hi codex"]
    sid = start["session_id"]
    assert world.wait_for(lambda: world.ls()["cx"]["provider_session_id"] == sid,
                          what="codex id learned")
    world.roost("kill", "cx")
    world.roost("wake", "cx")
    assert world.last_start(2)["argv"] == ["resume", sid, "--no-daemon",
                                           "--dangerously-bypass-approvals-and-sandbox"]
    assert world.last_start(2)["session_id"] == sid


def test_codex_wake_before_its_id_is_known_says_so(world: Env) -> None:
    died = world.roost("spawn", "cx", "--provider", "codex", "--cwd", str(world.tmp / "work"),
                       env={"FAKE_AGENT_EXIT_ON_START": "1"}, check=False)  # before a rollout
    assert died.returncode == 1 and "its start failed at once (exit 1)" in died.stderr
    assert world.ls()["cx"]["state"] == "failed"
    proc = world.roost("wake", "cx", check=False)
    assert proc.returncode == 7 and "session id is not known yet" in proc.stderr
    assert "--fresh" in proc.stderr
    world.roost("wake", "cx", "--fresh")  # the user's explicit choice: a new conversation
    assert world.last_start(2)["argv"] == ["--no-daemon"]


def test_gemini_learns_its_id_and_resumes(world: Env) -> None:
    world.roost("spawn", "gm", "--provider", "gemini", "--prompt", "hello",
                "--cwd", str(world.tmp / "work"))
    start = world.last_start(1)
    assert start["argv"] == ["-i", "hello"]
    sid = start["session_id"]
    world.wait_for(lambda: world.ls()["gm"]["provider_session_id"] == sid, what="gemini id")
    world.roost("kill", "gm")
    world.roost("wake", "gm")
    assert world.last_start(2)["argv"] == ["-r", sid]


def test_aider_keeps_its_chat_history_and_restores_it(world: Env) -> None:
    world.roost("spawn", "ai", "--provider", "aider", "--prompt", "add tests",
                "--cwd", str(world.tmp / "work"))
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
    world.roost("spawn", "cmd", "--provider", "command", "--cwd", str(world.tmp / "work"), "--",
                "sh", "-c", 'printf "%s" "$1" > "$2"; exec sleep 1000', "sh",
                "; $(touch pwned) `id`", str(marker))
    world.wait_for(marker.exists, what="command ran")
    assert marker.read_text() == "; $(touch pwned) `id`"
    assert not (world.tmp / "work" / "pwned").exists()
    assert world.ls()["cmd"]["state"] == "running"
