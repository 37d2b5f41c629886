"""Sends that never lose, merge or fake a message (issue 9, items 6 and 7): real tmux, the fake
Claude Code writing every message it receives to a folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux


def spawn(world: Env, name: str, *args: str) -> None:
    world.roost("spawn", name, "--cwd", str(world.tmp / "work"), *args)


def wait_idle(world: Env, name: str) -> None:
    world.wait_for(lambda: world.ls()[name]["status"] == "idle", what=f"{name} idle")


def received(folder: Path) -> list[str]:
    if not folder.is_dir():
        return []
    return [p.read_text(encoding="utf-8") for p in sorted(folder.iterdir())]


@pytest.mark.timeout(400)
def test_five_senders_times_ten_messages_each_arrive_once_and_intact(world: Env) -> None:
    inbox = world.tmp / "inbox"
    world.env["FAKE_AGENT_RECEIVED_DIR"] = str(inbox)
    spawn(world, "cl")
    wait_idle(world, "cl")
    script = (
        "import subprocess, sys\n"
        "for j in range(10):\n"
        "    text = f'sender {sys.argv[1]} message {j}\\nsecond line of {sys.argv[1]}.{j}'\n"
        "    p = subprocess.run([sys.executable, '-m', 'roost', 'send', 'cl', text],\n"
        "                       capture_output=True, text=True)\n"
        "    print(p.returncode, p.stdout.strip(), p.stderr.strip(), flush=True)\n"
    )
    senders = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(i)], env=world.env, stdout=subprocess.PIPE, text=True
        )
        for i in range(5)
    ]
    outputs = [s.communicate(timeout=380)[0] for s in senders]
    results = [line for out in outputs for line in out.splitlines()]
    assert len(results) == 50 and all(r.startswith("0 delivered to cl") for r in results), results
    expected = sorted(
        f"sender {i} message {j}\nsecond line of {i}.{j}" for i in range(5) for j in range(10)
    )
    got = world.wait_for(
        lambda: len(received(inbox)) >= 50 and received(inbox), what="50 messages received"
    )
    assert sorted(got) == expected  # each once, none merged, none lost


def test_a_text_holding_the_end_of_paste_sequence_stays_one_message(world: Env) -> None:
    inbox = world.tmp / "inbox"
    world.env["FAKE_AGENT_RECEIVED_DIR"] = str(inbox)
    spawn(world, "cl")
    wait_idle(world, "cl")
    world.roost("send", "cl", "harmless\x1b[201~\rinjected command")
    got = world.wait_for(lambda: received(inbox), what="the message")
    wait_idle(world, "cl")
    got = received(inbox)
    assert len(got) == 1 and "harmless" in got[0] and "injected command" in got[0], got
    assert "\x1b" not in got[0]


def test_wait_with_a_timeout_is_an_error_never_an_earlier_reply(world: Env) -> None:
    spawn(world, "cl")
    wait_idle(world, "cl")
    first = world.roost("send", "cl", "first question", "--wait").stdout
    assert "echo: first question" in first
    proc = world.roost("send", "cl", "work 8", "--wait", "--timeout", "1", check=False)
    assert proc.returncode != 0 and proc.stdout == "", proc.stdout
    assert "timed out" in proc.stderr and len(proc.stderr.splitlines()) == 1
    events = json.loads(world.roost("events", "cl", "--json").stdout)
    assert [e["delivered"] for e in events if e["kind"] == "sent"] == [True, True]
