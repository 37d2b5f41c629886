"""A real CLI that dies of a bad flag only after the old fixed 3 s start check (issue 19,
item 5): Gemini CLI 0.61.0 loads its whole program before it reads its flags, so on a loaded
machine it lives 19-26 s and then exits 1 with its usage. roost watches the start until the
CLI shows its ready screen or lives well past its slowest start (core.status.start_window), so
the spawn fails with the CLI's own words instead of printing "spawned"."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Env
from gemini_stub import GeminiStub
from real_gemini import gemini_env, install_gemini, prepare_home

pytestmark = [pytest.mark.tmux, pytest.mark.real_gemini]

START = 180  # seconds: the CLI loads ~100 MB of JavaScript, slowly on a busy machine


@pytest.fixture
def stub() -> Iterator[GeminiStub]:
    with GeminiStub() as running:
        yield running


def test_real_gemini_dying_of_a_bad_flag_is_a_failed_spawn(world: Env, stub: GeminiStub) -> None:
    gemini: Path = install_gemini()
    prepare_home(world.user_home)
    world.env = gemini_env(world.env, world.user_home, stub.url)
    world.env["ROOST_GEMINI_BIN"] = str(gemini)
    proc = world.roost(
        "spawn",
        "gm",
        "--provider",
        "gemini",
        "--cwd",
        str(world.tmp / "work"),
        "--",
        "--no-such-flag-roost",
        check=False,
        timeout=START,
    )
    assert proc.returncode != 0, proc.stdout
    assert "spawned" not in proc.stdout
    # its words, above its usage: "Unknown arguments: such-flag-roost, suchFlagRoost"
    assert "Unknown arguments: such-flag-roost" in proc.stderr, proc.stderr
    agent = world.ls()["gm"]
    assert agent["state"] == "failed" and "such-flag-roost" in agent["last_error"]
