"""Bad input: one clear line on stderr, a non-zero exit, and nothing stored changed or started."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux


def assert_refused(
    world: Env,
    *args: str,
    code: int | None = None,
    says: str,
    env: dict[str, str] | None = None,
    inprocess: bool = False,
) -> None:
    """`inprocess`: for refusals that never reach tmux (checked before anything is opened)."""
    before = snapshot(world)
    proc = (
        world.roost_inprocess(*args, env=env)
        if inprocess
        else world.roost(*args, check=False, env=env)
    )
    assert proc.returncode != 0, proc.stdout
    if code is not None:
        assert proc.returncode == code, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr  # one line, no traceback
    assert lines[0].startswith("roost: ") and says in lines[0], lines[0]
    assert snapshot(world) == before


def snapshot(world: Env) -> tuple[Any, ...]:
    """What a bad command must not change: the store's rows and tmux's objects."""
    db = world.home / "roost.db"
    rows: list[Any] = []
    if db.exists():
        try:
            conn = sqlite3.connect(db)
            rows = conn.execute("SELECT * FROM agents ORDER BY name").fetchall()
            conn.close()
        except sqlite3.DatabaseError:
            rows = [hashlib.sha256(db.read_bytes()).hexdigest()]
    return rows, sorted((p["session"], p["window"], p["pid"], p["dead"]) for p in world.panes())


@pytest.fixture
def populated(world: Env) -> Env:
    world.roost("spawn", "keep", "--cwd", str(world.tmp / "work"))
    # Quiet from here: the agent settled and no roost service recording it meanwhile, so what
    # a refused command must not change can be compared before and after.
    world.wait_status("keep", "idle")
    world.roost("service", "stop")
    return world


@pytest.mark.parametrize(
    "name",
    ["a.b", "a:b", "has space", "$(touch pwned)", "café", "", "x" * 65, "-dash", "semi;colon"],
)
def test_bad_names_are_refused_before_anything_is_created(populated: Env, name: str) -> None:
    for command in (
        ["spawn", name, "--cwd", str(populated.tmp / "work")],
        ["wake", name],
        ["kill", name],
        ["rm", name],
        ["capture", name],
    ):
        if name.startswith("-"):
            command.insert(1, "--")  # the shell way to pass a leading dash; roost still refuses
        assert_refused(populated, *command, says="invalid agent name", inprocess=True)
    assert not (populated.tmp / "pwned").exists() and not Path("pwned").exists()


def test_bad_home_name(populated: Env) -> None:
    assert_refused(
        populated, "spawn", "ok", "--home", "te.am", says="invalid home name", inprocess=True
    )


def test_missing_cwd(populated: Env) -> None:
    assert_refused(
        populated, "spawn", "new", "--cwd", str(populated.tmp / "nope"), says="does not exist"
    )


def test_unknown_provider(populated: Env) -> None:
    assert_refused(populated, "spawn", "new", "--provider", "cursor", says="cursor")


def test_missing_provider_executable(populated: Env) -> None:
    assert_refused(
        populated,
        "spawn",
        "new",
        "--provider",
        "codex",
        env={"ROOST_CODEX_BIN": "/nonexistent/codex"},
        code=6,
        says="not found",
    )
    assert_refused(
        populated,
        "spawn",
        "cmd",
        "--provider",
        "command",
        "--",
        "no-such-program-x",
        code=6,
        says="not found",
    )
    assert_refused(populated, "spawn", "cmd", "--provider", "command", code=2, says="after `--`")


def test_missing_agent(populated: Env) -> None:
    for command in ("wake", "kill", "rm", "capture", "attach"):
        assert_refused(
            populated, command, "ghost", code=4, says="no agent named 'ghost'", inprocess=True
        )


def test_corrupt_database_is_refused_and_untouched(world: Env) -> None:
    world.home.mkdir(parents=True)
    db = world.home / "roost.db"
    db.write_bytes(b"\x00garbage, not sqlite" * 200)
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    for command in (["ls"], ["spawn", "x", "--cwd", str(world.tmp)], ["wake", "x"]):
        assert_refused(world, *command, code=3, says="unreadable")
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest
    assert world.panes() == []


def test_newer_schema_is_refused_and_untouched(populated: Env) -> None:
    db = populated.home / "roost.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    assert_refused(populated, "ls", code=3, says="newer than this roost")
    assert_refused(populated, "kill", "keep", code=3, says="newer than this roost")
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest
    assert any(p["window"] == "keep" and p["dead"] == "0" for p in populated.panes())


def fake_tmux(tmp: Path, version: str) -> Path:
    """A tmux stand-in that reports an old version and otherwise behaves like tmux."""
    bin_dir = tmp / f"oldtmux-{version}"
    bin_dir.mkdir()
    script = bin_dir / "tmux"
    script.write_text(
        f'#!/bin/sh\n[ "$1" = "-V" ] && {{ echo "tmux {version}"; exit 0; }}\n'
        'exec /usr/bin/env -u TMUX tmux-real-missing "$@"\n'
    )
    script.chmod(0o755)
    return bin_dir


def test_tmux_older_than_3_2_is_refused(world: Env) -> None:
    old = fake_tmux(world.tmp, "3.1c")
    path = f"{old}:{world.env['PATH']}"
    assert_refused(
        world,
        "spawn",
        "x",
        "--cwd",
        str(world.tmp),
        env={"PATH": path},
        code=5,
        says="needs tmux 3.2 or newer; found 3.1",
    )


def test_tmux_missing_is_refused(world: Env) -> None:
    empty = world.tmp / "emptybin"
    empty.mkdir()
    (empty / "python3").symlink_to(Path(__import__("sys").executable))
    env = {"PATH": str(empty), "ROOST_CLAUDE_BIN": world.env["ROOST_CLAUDE_BIN"]}
    assert_refused(
        world, "spawn", "x", "--cwd", str(world.tmp), env=env, code=5, says="tmux is not installed"
    )


def test_usage_errors_are_one_line(world: Env) -> None:
    proc = world.roost("capture", check=False)  # once through a real interpreter
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
    assert "Missing argument" in proc.stderr and "roost capture --help" in proc.stderr
    proc = world.roost_inprocess("frobnicate")
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1


def test_every_command_has_help_with_an_example(world: Env) -> None:
    from roost.cli.main import cli

    for name, command in cli.commands.items():
        if command.hidden:
            continue
        proc = world.roost_inprocess(name, "--help")
        out = proc.stdout
        assert proc.returncode == 0 and "Example" in out and f"roost {name}" in out, name


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('[restore]\nconcurrency = "lots"\n', "line 2: restore.concurrency must be a whole number"),
        ("providers = 3\n", "line 1: providers must be a table"),
        ("[restore\nconcurrency = 2\n", "Expected ']'"),
        ('[tmux]\nbin = ["tmux"]\n', "line 2: tmux.bin must be a non-empty string"),
    ],
)
def test_a_broken_config_is_one_line_naming_file_line_and_key(
    populated: Env, text: str, says: str
) -> None:
    config = populated.home / "config.toml"
    config.write_text(text)
    for command in (
        ["restore"],
        ["spawn", "other", "--cwd", str(populated.tmp / "work")],
        ["wake", "keep"],
        ["events"],
    ):
        assert_refused(populated, *command, code=2, says=says)
        assert_refused(populated, *command, code=2, says=str(config))
    doctor = populated.roost("doctor", check=False)
    assert doctor.returncode == 1 and "BAD  config:" in doctor.stdout and says in doctor.stdout
    config.unlink()
    assert "ok   config:" in populated.roost("doctor").stdout


def _spec_count(world: Env) -> int:
    run = world.home / "run"
    return len(list(run.iterdir())) if run.is_dir() else 0


@pytest.mark.parametrize(
    "setup", ["home-777", "run-symlink", "agents-group-writable", "locks-foreign-owner"]
)
def test_a_roost_home_others_can_write_to_is_refused(populated: Env, setup: str) -> None:
    home = populated.home
    if setup == "home-777":
        home.chmod(0o777)
        says = "chmod go-w"
    elif setup == "run-symlink":
        shutil.rmtree(home / "run")  # a launcher may not have taken its spec yet
        elsewhere = populated.tmp / "elsewhere"
        elsewhere.mkdir(mode=0o700)
        (home / "run").symlink_to(elsewhere)
        says = "is a symlink"
    elif setup == "agents-group-writable":
        (home / "agents").chmod(0o770)
        says = "can be written by others (mode 770)"
    else:
        if os.geteuid() != 0:
            pytest.skip("changing a folder's owner needs root (CI runs as root)")
        os.chown(home / "locks", 65534, 65534)
        says = "belongs to uid 65534, not to you"
    for command in (
        ["spawn", "new", "--cwd", str(populated.tmp / "work")],
        ["wake", "keep"],
        ["kill", "keep"],
        ["ls"],
        ["restore"],
    ):
        assert_refused(populated, *command, code=2, says=says)
    assert _spec_count(populated) == 0
    doctor = populated.roost("doctor", check=False)
    assert doctor.returncode == 1 and "BAD  roost home:" in doctor.stdout and says in doctor.stdout
