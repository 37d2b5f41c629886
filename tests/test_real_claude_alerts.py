"""Notifications to the person (issue 21, part 4) with the real Claude Code (pinned 2.1.332,
offline against the Messages API stand-in): its permission dialog notifies once, with the
question in Claude Code's own words from the screen."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from anthropic_stub import running_stub
from conftest import Env
from real_claude import real_world

pytestmark = [pytest.mark.tmux, pytest.mark.real_claude]

ARGV_TO_FILE = str(Path(__file__).parent / "bin" / "argv-to-file")


def test_a_real_permission_dialog_notifies_once_in_claudes_words(world: Env) -> None:
    out = world.tmp / "argv.jsonl"
    with running_stub() as stub:
        real_world(world, stub.url)
        command = json.dumps([sys.executable, ARGV_TO_FILE, str(out)])
        world.home.mkdir(mode=0o700, exist_ok=True)
        (world.home / "config.toml").write_text(f"[notify]\ncommand = {command}\ntimeout = 30\n")
        world.roost(
            "spawn", "ca", "--cwd", str(world.tmp / "work"), "--", "--permission-mode", "default"
        )
        world.wait_status("ca", "idle", 60)
        stub.queue_tool_use(
            "Bash", {"command": "echo roost > marker.txt", "description": "Write a marker file"}
        )
        world.roost("send", "ca", "please write the file")
        world.wait_status("ca", "waiting", 60)
        world.roost("notify", "run", "--once")
        world.roost("notify", "run", "--once")
        screen = world.screen(world.pane_of("ca"))
        sent = [json.loads(line)[-2:] for line in out.read_text().splitlines()]
        asked = (
            "Do you want to proceed? — Bash command · Write a marker file · echo roost > marker.txt"
        )
        assert sent == [["roost: ca is waiting for you", asked]], screen
        world.tmux("send-keys", "-t", world.pane_of("ca"), "Enter")  # 1. Yes
        world.wait_status("ca", "idle", 60)
