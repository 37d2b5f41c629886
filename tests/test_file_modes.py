"""Files roost creates (issue 9, item 2): owner-only, and never written through a symlink."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def spawned(world: Env) -> tuple[Env, Path]:
    """A claude agent that ran once (its settings and hook log exist), and its folder."""
    world.roost("spawn", "keep", "--cwd", str(world.tmp / "work"))
    world.last_start(1)
    agent_id = world.ls()["keep"]["id"]
    return world, world.home / "agents" / agent_id


def test_the_database_hook_log_and_settings_are_owner_only(spawned: tuple[Env, Path]) -> None:
    world, folder = spawned
    made = [world.home / "roost.db", folder / "hooks.log", folder / "claude-settings.json"]
    made += [p for p in (world.home / "roost.db-wal", world.home / "roost.db-shm") if p.exists()]
    assert {str(p): mode(p) for p in made} == {str(p): 0o600 for p in made}


def test_a_new_database_is_owner_only_even_under_a_loose_umask(world: Env) -> None:
    subprocess.run(
        ["sh", "-c", 'umask 000 && exec "$0" -m roost ls', sys.executable],
        env=world.env,
        check=True,
        capture_output=True,
        cwd=world.tmp,
    )
    assert mode(world.home / "roost.db") == 0o600


def plant(link: Path, victim: Path) -> str:
    victim.write_text("precious\n")
    link.unlink(missing_ok=True)
    link.symlink_to(victim)
    return victim.read_text()


def test_a_symlink_at_the_settings_tmp_file_is_not_written_through(
    spawned: tuple[Env, Path],
) -> None:
    world, folder = spawned
    victim = world.tmp / "victim-settings"
    world.roost("kill", "keep")
    before = plant(folder / "claude-settings.json.tmp", victim)
    world.roost("wake", "keep")  # writes the settings again
    world.last_start(2)
    assert victim.read_text() == before
    settings = folder / "claude-settings.json"
    assert not settings.is_symlink() and mode(settings) == 0o600
    assert "hooks" in json.loads(settings.read_text())
    assert not (folder / "claude-settings.json.tmp").exists()


def test_a_symlink_at_the_hook_log_is_not_written_through(spawned: tuple[Env, Path]) -> None:
    world, folder = spawned
    victim = world.tmp / "victim-log"
    world.roost("kill", "keep")  # planted while no agent runs: hook.sh (a shell `>>`) is
    before = plant(folder / "hooks.log", victim)  # not roost's Python; roost must not follow it
    world.roost("wake", "keep")  # marks the launch in the log
    world.last_start(2)
    assert victim.read_text() == before
    log = folder / "hooks.log"
    assert not log.is_symlink() and mode(log) == 0o600
    assert "RoostLaunch" in log.read_text()


def test_a_symlink_at_a_lock_file_is_refused_not_followed(spawned: tuple[Env, Path]) -> None:
    world, _folder = spawned
    lock = world.home / "locks" / "keep.lock"
    lock.unlink(missing_ok=True)
    target = world.tmp / "made-through-the-lock"
    lock.symlink_to(target)  # dangling: following it would create the target
    proc = world.roost("kill", "keep", check=False)
    assert proc.returncode != 0
    [line] = proc.stderr.splitlines()
    assert line.startswith("roost: ") and "symlink" in line and str(lock) in line, line
    assert not target.exists()
