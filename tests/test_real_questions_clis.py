"""Issue 34 on the real pinned Codex, Gemini CLI and aider, each in a home and a folder it has
never seen (as a new user has): its start-up question reads `waiting` with its words, nothing
roost types goes into it, and `roost answer` gets the agent to its input, where the first
prompt goes in once."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chat_completions_stub import ChatCompletionsStub, said_by
from conftest import Env
from gemini_stub import GeminiStub
from openai_responses_stub import running_stub as responses_stub
from openai_responses_stub import typed_user_texts
from real_aider import aider_env, install_aider
from real_aider import prepare_home as prepare_aider_home
from real_codex import codex_env, install_codex, prepare_codex_home
from real_gemini import gemini_env, install_gemini

pytestmark = [pytest.mark.tmux]


def _git_repo(path: Path) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def _row(world: Env, name: str) -> dict[str, Any]:
    return world.ls()[name]


def _waiting(world: Env, name: str, timeout: float = 90) -> dict[str, Any]:
    return world.wait_for(
        lambda: (r := _row(world, name))["status"] == "waiting" and r,
        timeout,
        f"{name} waiting: {world.roost('capture', name, check=False).stdout}",
    )


@pytest.mark.real_codex
def test_codex_trust_question_in_a_new_checkout(world: Env) -> None:
    """Codex asks "Trust this folder?" in a git checkout it has not seen (every new worktree);
    it was read as idle and a send was refused as a draft ("1. Trust and continue")."""
    repo = _git_repo(world.tmp / "repo")
    with responses_stub() as stub:
        codex_home = world.tmp / "codex-home"
        prepare_codex_home(codex_home, stub.url, [])  # no folder trusted
        world.env = codex_env(world.env, world.user_home, codex_home)
        world.env["ROOST_CODEX_BIN"] = str(install_codex())
        prompt = "hello codex, first words"
        out = world.roost(
            "spawn",
            "cx",
            "--provider",
            "codex",
            "--cwd",
            str(repo),
            "--prompt",
            prompt,
            timeout=120,
        ).stdout
        assert out.startswith("cx is waiting for you: Trust this folder?"), out
        row = _row(world, "cx")
        assert row["status"] == "waiting" and row["status_reason"] == "Trust this folder?"
        shown = json.loads(world.roost("answer", "cx", "--json").stdout)
        assert [c["label"] for c in shown["choices"]] == [
            "Trust and continue",
            "Back to Agent Command Center",
        ]
        assert not any(prompt in typed_user_texts(r.body) for r in stub.requests)
        done = world.roost("answer", "cx", "trust and continue", timeout=120).stdout
        assert done.startswith("answered cx: Trust and continue;"), done
        # the prompt on its command line goes in once, by codex itself
        world.wait_for(
            lambda: sum(prompt in typed_user_texts(r.body) for r in stub.requests) >= 1,
            90,
            "codex's first turn",
        )
        world.wait_for(lambda: _row(world, "cx")["status"] == "idle", 90, "cx idle")
        turns = [r for r in stub.requests if prompt in typed_user_texts(r.body)]
        assert len({id(r) for r in turns}) >= 1


@pytest.fixture
def gemini_stub_server() -> Iterator[GeminiStub]:
    with GeminiStub() as running:
        yield running


@pytest.mark.real_gemini
def test_gemini_trust_question_is_waiting_and_answered(
    world: Env, gemini_stub_server: GeminiStub
) -> None:
    """Gemini CLI's folder trust is on by default: a new user's home has no setting for it."""
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    }
    path = world.user_home / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(settings))
    world.env = gemini_env(world.env, world.user_home, gemini_stub_server.url)
    world.env["ROOST_GEMINI_BIN"] = str(install_gemini())
    work = world.tmp / "work"  # made by the world, trusted by no one
    world.roost("spawn", "gm", "--provider", "gemini", "--cwd", str(work), "--no-mcp", timeout=180)
    row = _waiting(world, "gm", 150)
    assert row["status_reason"] == "Do you trust the files in this folder?"
    shown = json.loads(world.roost("answer", "gm", "--json").stdout)
    assert shown["choices"][0]["label"] == "Trust folder (work)"
    assert shown["choices"][-1]["label"] == "Don't trust"
    sent = world.roost("send", "gm", "are you there", check=False, timeout=120)
    assert sent.returncode != 0 and "waiting for you" in sent.stderr
    done = world.roost("answer", "gm", "1", timeout=120).stdout
    assert done.startswith("answered gm: Trust folder (work);"), done
    trusted = json.loads((world.user_home / ".gemini" / "trustedFolders.json").read_text())
    assert str(work) in trusted


@pytest.fixture
def chat_stub() -> Iterator[ChatCompletionsStub]:
    with ChatCompletionsStub() as running:
        yield running


@pytest.mark.real_aider
def test_aider_gitignore_question_holds_the_first_prompt(
    world: Env, chat_stub: ChatCompletionsStub
) -> None:
    """In a git repository aider first asks to add .aider* to .gitignore; the first prompt was
    typed into that question and lost."""
    aider = install_aider()
    config = prepare_aider_home(world.user_home, chat_stub.url, aider)
    config.write_text(config.read_text().replace("git: false\n", ""))  # a user's default
    world.env = aider_env(world.env, world.user_home)
    world.env["ROOST_AIDER_BIN"] = str(aider)
    repo = _git_repo(world.tmp / "repo")
    prompt = "hello aider, first words"
    out = world.roost(
        "spawn", "ai", "--provider", "aider", "--cwd", str(repo), "--prompt", prompt, timeout=180
    ).stdout
    assert out.startswith("ai is waiting for you: Add .aider* to .gitignore (recommended)?"), out
    assert "your prompt is kept" in out
    assert _row(world, "ai")["held_inputs"] == 1
    assert "[1 held]" in world.roost("ls").stdout
    done = world.roost("answer", "ai", "y", timeout=180).stdout
    assert done.startswith("answered ai: Yes; it is at its input now"), done
    assert "its held prompt went in" in done
    world.wait_for(
        lambda: any(prompt in said_by(r.body, "user") for r in chat_stub.requests),
        120,
        "aider's first turn",
    )
    assert _row(world, "ai")["held_inputs"] == 0
    assert ".aider" in (repo / ".gitignore").read_text()
    users = [t for r in chat_stub.requests for t in said_by(r.body, "user") if prompt in t]
    assert len(set(users)) == 1
