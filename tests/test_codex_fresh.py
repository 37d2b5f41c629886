"""A codex agent that was never messaged has no conversation (codex writes its rollout at the
first message): after a tmux server death `roost restore` starts it fresh and says so in its
event log, instead of refusing it (exit 7) and exiting 1 (issue 19, item 7). One whose CLI
may hold a conversation roost never learned the id of (a rollout of its cwd, written since its
start, that no agent owns) is still refused, naming it. Fake codex (as 0.169.0) on a real tmux."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux


def events(world: Env, name: str, kind: str) -> list[dict[str, Any]]:
    return [
        e for e in json.loads(world.roost("events", name, "--json").stdout) if e["kind"] == kind
    ]


def rollout_id(rollouts: Path) -> str | None:
    """The session id on the first whole line of the one rollout under `rollouts`, if any."""
    found = list(rollouts.rglob("rollout-*.jsonl"))
    if len(found) != 1:
        return None
    first, newline, _ = found[0].read_text().partition("\n")
    return json.loads(first)["payload"]["id"] if newline else None


def test_restore_starts_an_unmessaged_codex_fresh_and_refuses_one_with_an_unknown_rollout(
    world: Env,
) -> None:
    quiet, typed = world.tmp / "work", world.tmp / "typed"
    typed.mkdir()
    world.roost("spawn", "quiet", "--provider", "codex", "--cwd", str(quiet))
    world.roost("spawn", "typed", "--provider", "codex", "--cwd", str(typed))
    for name in ("quiet", "typed"):
        world.wait_status(name, "idle")
    # Someone types into `typed` by hand; the tmux server dies before roost looks again, so
    # roost never learns the id of the rollout codex wrote.
    world.type(world.pane_of("typed"), "by hand")
    rollouts = Path(world.user_home, ".codex", "sessions")
    # the file exists before codex has written its first line: wait for a whole one
    sid = world.wait_for(lambda: rollout_id(rollouts), what="typed's rollout")
    world.tmux("kill-server")

    restored = world.roost("restore", check=False)
    assert restored.returncode == 1, restored.stderr  # typed is refused ...
    assert sid in restored.stdout + restored.stderr
    assert world.ls()["typed"]["provider_session_id"] is None
    start = world.last_start(3)  # ... quiet started, with a new conversation
    assert start["cwd"] == str(quiet) and "resume" not in start["argv"]
    world.wait_status("quiet", "idle")
    (fresh,) = events(world, "quiet", "fresh-start")
    assert "no conversation yet" in fresh["reason"]
    assert not events(world, "typed", "fresh-start")
