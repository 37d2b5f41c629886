"""The tests' warm roost (tests/zygote.py) answers as `subprocess.run([python, -m, roost, ...])`
would: output, exit code, standard input, environment, working directory, and a time limit
that kills the call."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from zygote import Zygote

from conftest import Env


@pytest.fixture
def zygote() -> Iterator[Zygote]:
    made = Zygote(tempfile.mkdtemp(prefix="rz"))  # a short path: a socket's is at most 107 bytes
    yield made
    made.stop()


def plain(
    args: list[str], env: dict[str, str], cwd: Path, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "roost", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        input=input,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("args", "input"),
    [
        (["--version"], None),
        (["frobnicate"], None),  # a usage error: exit 2, one line
        (["ls", "--json"], None),
        (["import", "-"], "not json\r\n"),  # read from standard input
        (["spawn", "bad name", "--cwd", "."], None),
    ],
)
def test_a_call_answers_as_a_fresh_interpreter_would(
    world: Env, zygote: Zygote, args: list[str], input: str | None
) -> None:
    warm = zygote.run(args, world.env, str(world.tmp), input, 60)
    cold = plain(args, world.env, world.tmp, input)
    assert (warm.returncode, warm.stdout, warm.stderr) == (
        cold.returncode,
        cold.stdout,
        cold.stderr,
    )


def test_a_call_takes_the_callers_environment_and_folder(world: Env, zygote: Zygote) -> None:
    world.roost("spawn", "a", "--provider", "command", "--cwd", ".", "--", "sleep", "300")
    listed = zygote.run(["ls", "--json"], world.env, str(world.tmp), None, 60)
    assert [a["cwd"] for a in __import__("json").loads(listed.stdout)] == [str(world.tmp)]
    other = {**world.env, "ROOST_HOME": str(world.tmp / "elsewhere")}
    assert zygote.run(["ls", "--json"], other, str(world.tmp), None, 60).stdout == "[]\n"
    assert not zygote.serves({**world.env, "LC_ALL": "C"})  # decided at an interpreter's start


def test_a_call_past_its_time_limit_is_killed(world: Env, zygote: Zygote) -> None:
    script = world.tmp / "tmux-hangs"
    script.write_text("#!/bin/sh\nexec sleep 600\n")
    script.chmod(0o755)
    world.home.mkdir(parents=True, exist_ok=True)
    (world.home / "config.toml").write_text(f'[tmux]\nbin = "{script}"\n')
    began = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        zygote.run(
            ["spawn", "x", "--cwd", "."],
            {**world.env, "ROOST_TMUX_TIMEOUT": "300"},
            str(world.tmp),
            None,
            1,
        )
    assert time.monotonic() - began < 30
    children = psutil.Process(zygote.proc.pid).children()
    _, alive = psutil.wait_procs(children, timeout=10)
    assert alive == []  # the call was killed and reaped


def test_started_calls_run_side_by_side_and_one_killed_midway_says_so(
    world: Env, zygote: Zygote
) -> None:
    """`start` is Popen's shape: calls run at once (each its own pid), a kill reaches the one
    it names, and a call whose status came back is never signalled again."""
    script = world.tmp / "tmux-hangs"
    script.write_text("#!/bin/sh\nexec sleep 600\n")
    script.chmod(0o755)
    world.home.mkdir(parents=True, exist_ok=True)
    (world.home / "config.toml").write_text(f'[tmux]\nbin = "{script}"\n')
    hung_env = {**world.env, "ROOST_TMUX_TIMEOUT": "300"}
    hung = zygote.start(["spawn", "x", "--cwd", "."], hung_env, str(world.tmp), capture=False)
    quick = [zygote.start(["--version"], world.env, str(world.tmp)) for _ in range(3)]
    assert len({hung.pid, *(q.pid for q in quick)}) == 4
    for call in quick:
        out, err = call.communicate(timeout=60)
        assert (call.returncode, err) == (0, "") and out.startswith("roost")
        call.send_signal(9)  # ended and reaped: a no-op, never a signal to a reused pid
        assert call.poll() == 0
    for timeout in (0, 0.2):  # 0: a non-blocking look, as Popen's
        with pytest.raises(subprocess.TimeoutExpired):
            hung.wait(timeout=timeout)
    with pytest.raises(ValueError):  # input nobody would read to its end
        zygote.start(["--version"], world.env, str(world.tmp), stdin=True, capture=False)
    assert hung.poll() is None
    # its hung "tmux" started (a child to clean up, not leak), then the kill
    left = world.wait_for(lambda: psutil.Process(hung.pid).children(recursive=True), 30)
    hung.kill()
    for child in left:
        child.kill()
    assert hung.wait(timeout=30) == -9
