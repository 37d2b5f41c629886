"""roost with the real Gemini CLI, offline: a pinned install from npm (tests/real_gemini.py)
talking to a Gemini API stand-in on 127.0.0.1 (tests/gemini_stub.py).

What is proven on the real CLI, because roost's gemini provider and its patterns rely on it:
spawn with the session id roost chose; idle, working, waiting (a tool that needs approval) and
error (an invalid key, a daily quota) read off its screen, and working while it quietly retries
a server error; a send confirmed by the CLI's own chat file; kill; wake continues the same chat
file and the model sees the earlier turn; three agents in one cwd, messaged in the reverse order
of their starts, keep their own conversations; killing one leaves another working.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import psutil
import pytest

from roost.core import status
from roost.core.ids import is_roost_id
from roost.providers import traits

from conftest import Env
from gemini_stub import INTERNAL, QUOTA, UNAUTHENTICATED, GeminiStub, user_texts
from real_gemini import chat_file, gemini_env, install_gemini, prepare_home, said

# Gemini takes up to 96 s to start on a loaded machine (docs/PROVIDERS.md): beyond the default.
pytestmark = [pytest.mark.tmux, pytest.mark.real_gemini, pytest.mark.timeout(360)]

START = 180  # seconds for a start: the CLI loads ~100 MB of JavaScript, slowly on a busy machine


@pytest.fixture(scope="session")
def gemini_bin() -> Path:
    return install_gemini()


@pytest.fixture
def stub() -> Iterator[GeminiStub]:
    with GeminiStub() as running:
        yield running


def offline(world: Env, stub: GeminiStub, gemini: Path) -> None:
    prepare_home(world.user_home)
    world.env = gemini_env(world.env, world.user_home, stub.url)
    world.env["ROOST_GEMINI_BIN"] = str(gemini)


def wait_status(world: Env, name: str, wanted: str, timeout: float = 60) -> dict[str, Any]:
    return world.wait_for(
        lambda: (a := world.ls()[name])["status"] == wanted and a,
        timeout,
        f"{name} {wanted}: {world.roost('capture', name).stdout}",
    )


def argv_of(world: Env, name: str) -> list[str]:
    return psutil.Process(world.ls()[name]["pid"]).cmdline()


def pane_of(world: Env, name: str) -> str:
    return next(p["pane_id"] for p in world.panes() if p["window"] == name)


def reason(world: Env, name: str) -> str | None:
    """The error's reason, read off the agent's screen with gemini's patterns."""
    found = status.reading(
        world.roost("capture", name).stdout, status.patterns_for(traits.GEMINI.patterns)
    )
    return found[1] if found and found[0] == "error" else None


def type_in(world: Env, pane: str, text: str) -> None:
    """A user typing at the prompt (roost refuses to send to an agent showing an error)."""
    world.tmux("send-keys", "-t", pane, "-l", text)
    time.sleep(1.0)  # typed that fast it reads as a paste: an Enter right after is a newline
    world.tmux("send-keys", "-t", pane, "Enter")


def test_roost_runs_real_gemini_end_to_end(world: Env, stub: GeminiStub, gemini_bin: Path) -> None:
    offline(world, stub, gemini_bin)
    work = world.tmp / "work"
    world.roost("spawn", "gm", "--provider", "gemini", "--cwd", str(work))
    sid = wait_status(world, "gm", "idle", START)["provider_session_id"]
    assert is_roost_id(sid) and argv_of(world, "gm")[-2:] == ["--session-id", sid]

    stub.set_delay(60)  # the agent stays busy until released
    sent = world.roost("send", "gm", "hello from roost").stdout
    assert "confirmed by session file" in sent
    assert wait_status(world, "gm", "working")["status_source"] in ("screen", "title")
    stub.release()
    wait_status(world, "gm", "idle")
    path = world.wait_for(lambda: chat_file(world.user_home, sid), what="chat file")
    assert said(path, "user") == ["hello from roost"]
    world.wait_for(
        lambda: "stub reply: hello from roost" in said(path, "gemini"),
        what="the reply in the chat file",
    )

    # waiting: a shell command asks for approval first
    stub.queue_tool_call("run_shell_command", {"command": "touch made-by-gemini"})
    replies = len(said(path, "gemini"))
    world.roost("send", "gm", "make a file")
    wait_status(world, "gm", "waiting")
    world.tmux("send-keys", "-t", pane_of(world, "gm"), "Enter")  # 1. Allow once
    # the turn's last answer recorded before the next failure is set (the screen may read idle
    # before the tool's result reached the stand-in)
    world.wait_for(
        lambda: len(texts := said(path, "gemini")) > replies and texts[-1].startswith("stub reply"),
        what="the answer after the tool",
    )
    wait_status(world, "gm", "idle")
    assert (work / "made-by-gemini").exists()

    # errors, in the CLI's own words; roost sends nothing to an agent showing one
    stub.fail_with(UNAUTHENTICATED)
    world.roost("send", "gm", "who am I talking to")
    wait_status(world, "gm", "error")
    assert "API key not valid" in (reason(world, "gm") or "")
    refused = world.roost("send", "gm", "again", check=False)
    assert refused.returncode == 1 and "shows an error" in refused.stderr
    stub.fail_with(None)
    type_in(world, pane_of(world, "gm"), "better now")  # a turn that went through ends it
    # its answer recorded before the next failure is set: the screen may read idle as soon as
    # the error's words scroll away, before this turn's request reached the stand-in
    world.wait_for(
        lambda: "stub reply: better now" in said(path, "gemini"), what="the turn that went through"
    )
    wait_status(world, "gm", "idle")
    # the model's daily quota on this turn: a dialog first, then the error (a CLI's own call
    # after the turn before, which a loaded run saw land here, is answered)
    stub.fail_with(QUOTA, ("turn",), after="one more")
    world.roost("send", "gm", "one more")
    limited = wait_status(world, "gm", "limited")  # issue 23: a quota, with no reset time
    assert "Usage limit reached" in limited["status_reason"]
    assert (limited["limit_kind"], limited["limit_resets_at"]) == ("quota", None)
    assert "Usage limit reached" in (reason(world, "gm") or "")
    world.tmux("send-keys", "-t", pane_of(world, "gm"), "2")  # 2. Stop
    world.wait_for(
        lambda: "exhausted your daily quota" in (reason(world, "gm") or ""), what="the quota error"
    )
    print("GEMINI QUOTA", world.ls()["gm"]["status"], world.ls()["gm"]["status_reason"])
    assert world.ls()["gm"]["status"] == "limited"  # its words after the dialog say so too
    stub.fail_with(INTERNAL, ("turn",))  # a server error: the CLI retries quietly, and works
    type_in(world, pane_of(world, "gm"), "are you there")
    wait_status(world, "gm", "working")
    for _ in range(8):
        time.sleep(1)
        assert world.ls()["gm"]["status"] == "working"
    stub.fail_with(None)
    wait_status(world, "gm", "idle", 90)

    world.roost("kill", "gm")
    assert world.ls()["gm"]["status"] == "stopped"
    world.roost("wake", "gm")
    assert argv_of(world, "gm")[-2:] == ["-r", sid]
    wait_status(world, "gm", "idle", START)
    again = world.roost("send", "gm", "second message")
    assert "delivered" in again.stdout
    wait_status(world, "gm", "idle")
    world.wait_for(
        lambda: "stub reply: second message" in said(path, "gemini"),
        what="the second reply in the same chat file",
    )
    assert said(path, "user")[0] == "hello from roost"
    seen = next(
        user_texts(r.body)
        for r in reversed(stub.turns())
        if user_texts(r.body)[-1:] == ["second message"]
    )
    assert "hello from roost" in seen  # the model saw the earlier turn


def test_three_real_gemini_agents_in_one_cwd(
    world: Env, stub: GeminiStub, gemini_bin: Path
) -> None:
    offline(world, stub, gemini_bin)
    names = ("g1", "g2", "g3")
    for name in names:
        world.roost("spawn", name, "--provider", "gemini", "--cwd", str(world.tmp / "work"))
    ids = {name: wait_status(world, name, "idle", START)["provider_session_id"] for name in names}
    assert len(set(ids.values())) == 3
    for name in reversed(names):  # messaged in the reverse order of their starts
        assert "confirmed by session file" in world.roost("send", name, f"I am {name}").stdout
    for name in names:
        wait_status(world, name, "idle")
        path = world.wait_for(partial(chat_file, world.user_home, ids[name]), what="file")
        assert said(path, "user") == [f"I am {name}"]

    stub.set_delay(120)
    world.roost("send", "g1", "a long task")
    wait_status(world, "g1", "working")
    world.roost("kill", "g2")
    assert world.ls()["g2"]["status"] == "stopped"
    busy = world.ls()
    assert busy["g1"]["status"] == "working" and busy["g3"]["status"] == "idle"
    assert psutil.pid_exists(busy["g1"]["pid"]) and psutil.pid_exists(busy["g3"]["pid"])
    stub.release()
    wait_status(world, "g1", "idle")
    g1_file = chat_file(world.user_home, ids["g1"])
    world.wait_for(lambda: "stub reply: a long task" in said(g1_file, "gemini"), what="reply")

    world.roost("wake", "g2")
    assert argv_of(world, "g2")[-2:] == ["-r", ids["g2"]]
    wait_status(world, "g2", "idle", START)
    world.roost("send", "g2", "who am I")
    # the turn at the model (delivery is confirmed by the chat file, which may come first)
    seen = world.wait_for(
        lambda: next(
            (
                user_texts(r.body)
                for r in reversed(stub.turns())
                if user_texts(r.body)[-1:] == ["who am I"]
            ),
            None,
        ),
        60,
        "g2's turn at the model",
    )
    wait_status(world, "g2", "idle")
    assert "I am g2" in seen and "I am g1" not in seen and "I am g3" not in seen
