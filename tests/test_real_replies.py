"""The replies of the real Codex 0.169.0, Gemini CLI 0.61.0 and Aider 0.86.2, offline against
their stand-ins, read from each CLI's own record (codex's rollout, gemini's chat file, aider's
chat history): `roost send --wait` prints this turn's reply (never an earlier turn's with the
same words), MCP `wait_for_agents`' `last_reply` and a parent's "finished" notice carry it.
Issue 19, item 2: all three printed nothing (exit 0)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from unittest import mock

import pytest

from roost.core.observation import Observation
from roost.ops import notify, replies
from roost.ops.root import open_app

from chat_completions_stub import ChatCompletionsStub
from conftest import Env
from gemini_stub import GeminiStub
from llm_stub_server import REPLY_PREFIX
from openai_responses_stub import running_stub
from real_aider import aider_env, install_aider
from real_aider import prepare_home as prepare_aider_home
from real_codex import codex_env, install_codex, prepare_codex_home
from real_gemini import gemini_env, install_gemini
from real_gemini import prepare_home as prepare_gemini_home

pytestmark = pytest.mark.tmux

START = 180  # seconds for a start on a busy machine (aider imports litellm, gemini ~100 MB of JS)


def found(world: Env, query: str, role: str) -> list[str]:
    """Recall's hits (issue 39) for `query` in messages of `role`: each hit's NAME@TURN."""
    hits = json.loads(
        world.roost("search", query, "--role", role, "--json", check=False).stdout or "[]"
    )
    return sorted(str(h["ref"]) for h in hits)


def send_wait(world: Env, name: str, text: str) -> str:
    """`roost send NAME TEXT --wait`'s output; it must succeed."""
    return str(world.roost("send", name, text, "--wait", "--timeout", "150", timeout=180).stdout)


def seen_by_parent(world: Env, name: str) -> tuple[str | None, str | None]:
    """What a parent would get of `name`'s last turn: `wait_for_agents`' last_reply, and the
    reply in the notice of its turn finishing (working -> idle)."""
    with mock.patch.dict(os.environ, world.env, clear=True):
        app = open_app(dict(world.env))
        try:
            agent = app.store.require(name)
            finished = Observation(
                agent.replace(status="working", orchestration_parent=agent.id),
                None,
                True,
                "running",
                None,
                None,
                "idle",
                "screen",
                None,
            )
            return replies.last(app, agent), notify.details(app, [finished])[agent.id]
        finally:
            app.close()


def read_two(world: Env, name: str) -> list[dict[str, str]]:
    """`roost read NAME -n 2 --json`'s messages: from the CLI's own record (issue 35)."""
    found = json.loads(world.roost("read", name, "-n", "2", "--json").stdout)
    assert found["source"] == "transcript", found
    return list(found["messages"])


def wait_idle(world: Env, name: str) -> None:
    world.wait_for(lambda: world.ls()[name]["status"] == "idle", START, f"{name} idle")


@pytest.mark.real_codex
def test_real_codex_replies_come_from_its_rollout(world: Env) -> None:
    codex = install_codex()
    work = world.tmp / "work"
    with running_stub() as stub:
        prepare_codex_home(world.tmp / "codex-home", stub.url, [work])
        world.env = codex_env(world.env, world.user_home, world.tmp / "codex-home")
        world.env["ROOST_CODEX_BIN"] = str(codex)
        world.roost("spawn", "cx", "--provider", "codex", "--cwd", str(work))
        wait_idle(world, "cx")
        assert send_wait(world, "cx", "first question").strip() == REPLY_PREFIX + "first question"
        assert send_wait(world, "cx", "second question").strip() == REPLY_PREFIX + "second question"
        assert seen_by_parent(world, "cx") == (REPLY_PREFIX + "second question",) * 2
        assert read_two(world, "cx") == [
            {"role": "user", "text": "second question"},
            {"role": "assistant", "text": REPLY_PREFIX + "second question"},
        ]
        # recall reads the rollout the pinned CLI wrote: each turn found by its own words
        assert found(world, '"second question"', "user") == ["cx@2"]
        assert found(world, '"first question"', "agent") == ["cx@1"]


@pytest.fixture
def gemini_stub() -> Iterator[GeminiStub]:
    with GeminiStub() as running:
        yield running


@pytest.mark.real_gemini
def test_real_gemini_replies_come_from_its_chat_file(world: Env, gemini_stub: GeminiStub) -> None:
    gemini = install_gemini()
    prepare_gemini_home(world.user_home)
    world.env = gemini_env(world.env, world.user_home, gemini_stub.url)
    world.env["ROOST_GEMINI_BIN"] = str(gemini)
    world.roost("spawn", "gm", "--provider", "gemini", "--cwd", str(world.tmp / "work"))
    wait_idle(world, "gm")
    gemini_stub.queue_reply("the first answer")
    assert send_wait(world, "gm", "same words").strip() == "the first answer"
    gemini_stub.queue_reply("the second answer")  # the same words again: this turn's reply
    assert send_wait(world, "gm", "same words").strip() == "the second answer"
    assert seen_by_parent(world, "gm") == ("the second answer",) * 2
    assert read_two(world, "gm") == [
        {"role": "user", "text": "same words"},
        {"role": "assistant", "text": "the second answer"},
    ]
    # recall reads the chat file the pinned CLI wrote: each reply under its own turn
    assert found(world, '"first answer"', "agent") == ["gm@1"]
    assert found(world, '"second answer"', "agent") == ["gm@2"]


@pytest.fixture
def aider_stub() -> Iterator[ChatCompletionsStub]:
    with ChatCompletionsStub() as running:
        yield running


@pytest.mark.real_aider
def test_real_aider_replies_come_from_its_chat_history(
    world: Env, aider_stub: ChatCompletionsStub
) -> None:
    aider = install_aider()
    prepare_aider_home(world.user_home, aider_stub.url, aider)
    world.env = aider_env(world.env, world.user_home)
    world.env["ROOST_AIDER_BIN"] = str(aider)
    world.roost("spawn", "ai", "--provider", "aider", "--cwd", str(world.tmp / "work"))
    wait_idle(world, "ai")
    aider_stub.queue_reply("the first answer,\non two lines")
    assert send_wait(world, "ai", "same words").strip() == "the first answer,\non two lines"
    aider_stub.queue_reply("the second answer")
    assert send_wait(world, "ai", "same words").strip() == "the second answer"
    assert seen_by_parent(world, "ai") == ("the second answer",) * 2
    assert read_two(world, "ai") == [
        {"role": "user", "text": "same words"},
        {"role": "assistant", "text": "the second answer"},
    ]
    # recall reads the chat history the pinned CLI wrote: each reply under its own turn
    assert found(world, '"first answer"', "agent") == ["ai@1"]
    assert found(world, '"second answer"', "agent") == ["ai@2"]


def test_a_cli_that_keeps_no_record_says_so(world: Env) -> None:
    """A plain command keeps no record of replies: --wait says so (exit 1), not an empty line."""
    world.roost(
        "spawn", "sh", "--provider", "command", "--cwd", str(world.tmp / "work"), "--", "cat"
    )
    world.wait_for(lambda: world.ls()["sh"]["status"] in ("idle", "working"), 20, "sh up")
    proc = world.roost("send", "sh", "hello", "--wait", "--timeout", "30", check=False)
    assert proc.returncode == 1 and proc.stdout == "", (proc.stdout, proc.stderr)
    assert "keeps no record of its replies" in proc.stderr and "delivered" in proc.stderr
