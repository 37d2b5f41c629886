"""roost with the real Aider, offline: a pinned install from PyPI in its own venv
(tests/real_aider.py) talking to a Chat Completions stand-in on 127.0.0.1
(tests/chat_completions_stub.py).

What is proven on the real CLI, because roost's aider provider and its patterns rely on it:
spawn; idle (">" alone on the last line, not the prompts it echoes), working ("Waiting for
<model>"), waiting (its question after an authentication failure) and error (litellm's words,
while it retries a rate limit or a server error, and after it gave up) read off its screen; a
send confirmed by its chat history; kill; wake restores the same history file and the model sees
the earlier turn; two agents in one cwd keep their own conversations; killing one leaves the
other working.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from roost.core import status
from roost.providers import traits

from chat_completions_stub import INTERNAL, QUOTA, UNAUTHENTICATED, ChatCompletionsStub, said_by
from conftest import Env
from real_aider import aider_env, install_aider, prepare_home, prompts_and_replies

# Aider takes 60-100 s to start on a loaded machine (docs/PROVIDERS.md), beyond the default limit.
pytestmark = [pytest.mark.tmux, pytest.mark.real_aider, pytest.mark.timeout(360)]

START = 180  # seconds for a start: aider imports litellm, slowly on a busy machine


@pytest.fixture(scope="session")
def aider_bin() -> Path:
    return install_aider()


@pytest.fixture
def stub() -> Iterator[ChatCompletionsStub]:
    with ChatCompletionsStub() as running:
        yield running


def offline(world: Env, stub: ChatCompletionsStub, aider: Path) -> None:
    prepare_home(world.user_home, stub.url, aider)
    world.env = aider_env(world.env, world.user_home)
    world.env["ROOST_AIDER_BIN"] = str(aider)


def wait_status(world: Env, name: str, wanted: str, timeout: float = 60) -> dict[str, Any]:
    return world.wait_for(
        lambda: (a := world.ls()[name])["status"] == wanted and a,
        timeout,
        f"{name} {wanted}: {world.roost('capture', name).stdout}",
    )


def history(world: Env, name: str) -> Path:
    return world.home / "agents" / world.ls()[name]["id"] / "aider.chat.history.md"


def pane_of(world: Env, name: str) -> str:
    return next(p["pane_id"] for p in world.panes() if p["window"] == name)


def reason(world: Env, name: str) -> str | None:
    """The error's reason, read off the agent's screen with aider's patterns."""
    found = status.reading(
        world.roost("capture", name).stdout, status.patterns_for(traits.AIDER.patterns)
    )
    return found[1] if found and found[0] == "error" else None


def type_in(world: Env, pane: str, text: str) -> None:
    """A user typing at the prompt (roost sends nothing to an agent showing an error)."""
    world.tmux("send-keys", "-t", pane, "-l", text)
    time.sleep(0.5)
    world.tmux("send-keys", "-t", pane, "Enter")


def seen_by_model(stub: ChatCompletionsStub, last: str) -> list[str]:
    """The user texts of the latest turn whose last user text is ``last``."""
    return next(
        said_by(r.body, "user")
        for r in reversed(stub.turns())
        if said_by(r.body, "user")[-1:] == [last]
    )


def test_roost_runs_real_aider_end_to_end(
    world: Env, stub: ChatCompletionsStub, aider_bin: Path
) -> None:
    offline(world, stub, aider_bin)
    world.roost("spawn", "ai", "--provider", "aider", "--cwd", str(world.tmp / "work"))
    assert wait_status(world, "ai", "idle", START)["status_source"] == "screen"

    stub.set_delay(60)  # the agent stays busy until released
    assert "confirmed by session file" in world.roost("send", "ai", "hello from roost").stdout
    world.wait_for(
        lambda: "Waiting for gpt-4o" in world.roost("capture", "ai").stdout, 90, "aider's spinner"
    )
    assert world.ls()["ai"]["status"] == "working"
    stub.release()
    wait_status(world, "ai", "idle")
    file = history(world, "ai")
    prompts, text = prompts_and_replies(file)
    assert prompts == ["hello from roost"] and "stub reply: hello from roost" in text

    # an invalid key: aider offers its help page first (waiting), then shows the error
    stub.fail_with(UNAUTHENTICATED)
    world.roost("send", "ai", "who am I talking to")
    wait_status(world, "ai", "waiting")
    type_in(world, pane_of(world, "ai"), "n")
    wait_status(world, "ai", "error")
    assert "AuthenticationError" in (reason(world, "ai") or "")
    refused = world.roost("send", "ai", "again", check=False)
    assert refused.returncode == 1 and "shows an error" in refused.stderr
    stub.fail_with(None)
    type_in(world, pane_of(world, "ai"), "better now")  # a turn that went through ends it
    # its answer recorded before the next failure is set (the screen may read idle first)
    world.wait_for(
        lambda: "stub reply: better now" in prompts_and_replies(file)[1], what="the turn through"
    )
    wait_status(world, "ai", "idle")
    # a rate limit and a server error: an error while aider retries; idle once one gets through
    # (aider draws the exception's line, then its own words for it: either may be the one read)
    for failure, words in (
        (QUOTA, ("RateLimitError", "rate limited you")),
        (INTERNAL, ("InternalServerError",)),
    ):
        stub.fail_with(failure)
        world.roost("send", "ai", f"try {words[0]}")
        wait_status(world, "ai", "error")
        said = reason(world, "ai") or ""
        assert any(w in said for w in words), said
        stub.fail_with(None)
        wait_status(world, "ai", "idle", 90)
        assert f"stub reply: try {words[0]}" in prompts_and_replies(file)[1]

    world.roost("kill", "ai")
    assert world.ls()["ai"]["status"] == "stopped"
    world.roost("wake", "ai")
    argv = psutil.Process(world.ls()["ai"]["pid"]).cmdline()
    assert argv[-3:] == ["--chat-history-file", str(file), "--restore-chat-history"]
    wait_status(world, "ai", "idle", START)
    assert "delivered" in world.roost("send", "ai", "second message").stdout
    wait_status(world, "ai", "idle")
    prompts, text = prompts_and_replies(file)  # the same file goes on
    assert prompts[0] == "hello from roost" and prompts[-1] == "second message"
    assert "<blank>" not in prompts  # no Enter of roost's became an empty prompt
    assert "stub reply: second message" in text
    assert "hello from roost" in seen_by_model(stub, "second message")


def test_two_real_aider_agents_in_one_cwd(
    world: Env, stub: ChatCompletionsStub, aider_bin: Path
) -> None:
    offline(world, stub, aider_bin)
    for name in ("a1", "a2"):
        world.roost("spawn", name, "--provider", "aider", "--cwd", str(world.tmp / "work"))
    for name in ("a1", "a2"):
        wait_status(world, name, "idle", START)
    for name in ("a2", "a1"):
        assert "confirmed by session file" in world.roost("send", name, f"I am {name}").stdout
    for name in ("a1", "a2"):
        wait_status(world, name, "idle")
        assert prompts_and_replies(history(world, name))[0] == [f"I am {name}"]

    stub.set_delay(120)
    world.roost("send", "a1", "a long task")
    wait_status(world, "a1", "working")
    world.roost("kill", "a2")
    assert world.ls()["a2"]["status"] == "stopped"
    busy = world.ls()["a1"]
    assert busy["status"] == "working" and psutil.pid_exists(busy["pid"])
    stub.release()
    wait_status(world, "a1", "idle")
    assert "stub reply: a long task" in prompts_and_replies(history(world, "a1"))[1]

    world.roost("wake", "a2")
    wait_status(world, "a2", "idle", START)
    world.roost("send", "a2", "who am I")
    wait_status(world, "a2", "idle")
    seen = seen_by_model(stub, "who am I")
    assert "I am a2" in seen and "I am a1" not in seen
