"""Other programs run in the foreground of a roost command: in roost's place (`attach`,
`open`), on its terminal while roost waits (the TUI's attach, `roost --host H attach`), or
briefly for one answer (`doctor`'s `--version`). With tmux/run.py, system/procs.py,
system/ssh.py, system/git.py, system/outbound.py, launch.py and web/term.py, the only modules
that start processes (tests/test_contracts.py holds the rest to it). No argv goes through a
shell."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from typing import NoReturn


def replace_roost(argv: list[str], env: Mapping[str, str]) -> NoReturn:
    """Become `argv` (this process's pid, terminal and exit status), e.g. `tmux attach`."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.execvpe(argv[0], argv, dict(env))


def on_terminal(argv: list[str], env: Mapping[str, str] | None = None) -> int:
    """Run `argv` on this terminal until it ends; its exit status."""
    sys.stdout.flush()
    return subprocess.call(argv, env=None if env is None else dict(env))


def on_terminal_keeping_stderr(argv: list[str]) -> tuple[int, str]:
    """Run `argv` on this terminal, its stderr kept aside (a file, never a pipe that could
    fill): (exit status, what it said there)."""
    sys.stdout.flush()
    with tempfile.TemporaryFile("w+") as err:
        code = subprocess.call(argv, stderr=err)
        err.seek(0)
        return code, err.read()


class NoAnswer(Exception):
    """The program did not end in time, or could not start (the reason)."""


def answer(argv: list[str], env: Mapping[str, str], timeout: float) -> tuple[int, str, str]:
    """Run `argv` with no input, in a session of its own, for at most `timeout` s: (exit
    status, stdout, stderr). NoAnswer when it runs past that or cannot start."""
    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            env=dict(env),
            timeout=timeout,
            check=False,
            start_new_session=True,
        )
    except subprocess.TimeoutExpired:
        raise NoAnswer(f"no answer within {timeout:g} s") from None
    except OSError as exc:
        raise NoAnswer(str(exc.strerror or exc)) from None
    return proc.returncode, proc.stdout, proc.stderr
