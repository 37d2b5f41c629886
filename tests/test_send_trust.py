"""Sends that never lose, merge or fake a message (issue 9, items 6 and 7): real tmux, the fake
Claude Code writing every message it receives to a folder."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
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

    def sender(i: int) -> list[str]:  # one sender's ten sends, one after the other
        lines = []
        for j in range(10):
            p = world.roost(
                "send",
                "cl",
                f"sender {i} message {j}\nsecond line of {i}.{j}",
                check=False,
                timeout=120,
            )
            lines.append(f"{p.returncode} {p.stdout.strip()} {p.stderr.strip()}")
        return lines

    # five senders side by side, each its own thread of `roost send` processes (forked from the
    # warm roost: 50 fresh interpreters cost this test 15 CPU-seconds)
    with ThreadPoolExecutor(max_workers=5) as pool:
        outputs = list(pool.map(sender, range(5)))
    results = [line for out in outputs for line in out]
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
    # a limit the reply (60 s of work) passes and the delivery's confirmation does not: a
    # loaded machine took over a second to confirm, which a limit of 1 s then cut short
    proc = world.roost("send", "cl", "work 60", "--wait", "--timeout", "8", check=False)
    assert proc.returncode != 0 and proc.stdout == "", proc.stdout
    assert "timed out" in proc.stderr and len(proc.stderr.splitlines()) == 1
    events = json.loads(world.roost("events", "cl", "--json").stdout)
    assert [e["delivered"] for e in events if e["kind"] == "sent"] == [True, True]
