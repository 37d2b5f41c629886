"""Other programs run in the foreground of a roost command: in roost's place (`attach`,
`open`), or on its terminal while roost waits (the TUI's attach, `roost --host H attach`).
With tmux/run.py, system/procs.py, system/ssh.py, system/git.py, system/outbound.py,
launch.py and web/term.py, the only modules that start processes (tests/test_contracts.py
holds the rest to it). No argv goes through a shell."""

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


STDERR_KEPT = 64 << 10  # bytes: the end of what it said (ssh's reason is its last line)


def on_terminal_keeping_stderr(argv: list[str]) -> tuple[int, str]:
    """Run `argv` on this terminal, its stderr kept aside (a file, never a pipe that could
    fill): (exit status, the last STDERR_KEPT bytes it said there)."""
    sys.stdout.flush()
    with tempfile.TemporaryFile("w+b") as err:
        code = subprocess.call(argv, stderr=err)
        end = err.seek(0, os.SEEK_END)
        err.seek(max(0, end - STDERR_KEPT))
        return code, err.read().decode("utf-8", "replace")
