"""config.toml and tmux.conf that are not small regular files, and a tmux.conf tmux rejects
(issue 18 item 10): roost reads only regular files of bounded size; anything else is one line
and a non-zero exit (config.toml) or a warning with agents that start (tmux.conf), and doctor
names it. Every roost run here has a memory cap and a time limit: the old code read /dev/zero
until the kernel killed it."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux

LIMIT = 60.0  # seconds: far above a `roost spawn` here, even loaded (16 s seen), not a hang


def capped(world: Env, *args: str) -> subprocess.CompletedProcess[str]:
    """`roost ARGS` with 1 GiB of address space: a runaway read fails fast, not the machine."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    try:
        return subprocess.run(
            [sys.executable, "-m", "roost", *args],
            capture_output=True,
            text=True,
            env=world.env,
            timeout=LIMIT,
            cwd=world.tmp,
            preexec_fn=cap,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"roost {' '.join(args)} hung (over {LIMIT:g} s)")


def make(world: Env, name: str, kind: str) -> None:
    path = world.home / name
    path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path, 0o600)
    elif kind == "huge":
        with open(path, "wb") as fh:  # sparse: 2 GiB of NULs, a second on no disk
            fh.truncate(2 << 30)
    else:
        path.symlink_to(kind)


@pytest.mark.parametrize("kind", ["fifo", "/dev/urandom", "/dev/zero", "huge"])
def test_a_config_toml_that_is_no_small_regular_file_is_one_line(world: Env, kind: str) -> None:
    world.roost("spawn", "alpha", "--cwd", str(world.tmp / "work"))
    make(world, "config.toml", kind)
    for args in (("ls",), ("ls", "--json"), ("spawn", "beta", "--cwd", str(world.tmp / "work"))):
        proc = capped(world, *args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert proc.stderr.count("\n") == 1 and "config.toml" in proc.stderr, proc.stderr
    assert "beta" not in world.tmux("list-sessions", "-F", "#{session_name}").split()
    report = json.loads(capped(world, "doctor", "--json").stdout)
    bad = next(c for c in report["checks"] if c["name"] == "config")
    assert not bad["ok"] and "config.toml" in bad["detail"], bad


def running(world: Env, name: str) -> bool:
    return world.ls()[name]["state"] == "running"


def test_a_tmux_conf_line_tmux_rejects_warns_and_agents_start_and_restore(world: Env) -> None:
    world.home.mkdir(mode=0o700, parents=True)
    (world.home / "tmux.conf").write_text("set -g @mine hi\nthis-is-not-a-command\n")
    for name in ("alpha", "beta"):
        proc = capped(world, "spawn", name, "--cwd", str(world.tmp / "work"))
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
        assert "tmux.conf:2: unknown command: this-is-not-a-command" in proc.stderr, proc.stderr
        assert running(world, name)
    assert "[roost]" in world.tmux("show-options", "-gv", "status-left")  # roost's settings
    world.tmux("kill-server")
    world.wait_for(lambda: not world.panes(), what="server gone")
    proc = capped(world, "restore")
    assert proc.returncode == 0, proc.stderr
    states = {n: a["status"] for n, a in world.ls().items()}
    assert all(a["state"] == "running" for a in world.ls().values()), states
    report = json.loads(capped(world, "doctor", "--json").stdout)
    conf = next(c for c in report["checks"] if c["name"] == "tmux.conf")
    assert conf["warning"] and "unknown command" in conf["detail"], conf


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero"])
def test_a_tmux_conf_that_is_no_regular_file_is_skipped_with_a_warning(
    world: Env, kind: str
) -> None:
    world.home.mkdir(mode=0o700, parents=True)
    make(world, "tmux.conf", kind)
    proc = capped(world, "spawn", "alpha", "--cwd", str(world.tmp / "work"))  # a hang fails
    assert proc.returncode == 0, proc.stderr
    assert "tmux.conf" in proc.stderr and "not sourced" in proc.stderr, proc.stderr
    assert running(world, "alpha")
    report = json.loads(capped(world, "doctor", "--json").stdout)
    conf = next(c for c in report["checks"] if c["name"] == "tmux.conf")
    assert conf["warning"] and "not sourced" in conf["detail"], conf
