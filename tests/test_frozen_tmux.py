"""A spawn while roost's tmux server is stopped (SIGSTOP) (issue 18 item 15): one line, a
non-zero exit, and nothing stored: the agent never existed, so no `failed` record is left."""

from __future__ import annotations

import os
import signal

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux


def test_a_spawn_on_a_frozen_server_stores_nothing(world: Env) -> None:
    world.roost("spawn", "alpha", "--cwd", str(world.tmp / "work"))
    server = int(world.tmux("display-message", "-p", "#{pid}").strip())
    os.kill(server, signal.SIGSTOP)
    try:
        proc = world.roost(
            "spawn",
            "beta",
            "--cwd",
            str(world.tmp / "work"),
            check=False,
            env={"ROOST_TMUX_TIMEOUT": "2"},
        )
    finally:
        os.kill(server, signal.SIGCONT)
    assert proc.returncode == 5, (proc.stdout, proc.stderr)
    assert proc.stderr.count("\n") == 1 and "did not answer" in proc.stderr, proc.stderr
    agents = world.ls()
    assert set(agents) == {"alpha"}, agents
    assert "beta" not in world.roost("events").stdout
