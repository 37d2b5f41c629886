"""The process table as a value that can be passed in (App.procs), as the clock is: the
operations that find, stop or start processes ask it, so tests run them on a fake table.

system/procs.py's `SystemProcesses` is the real one (psutil); tests/fake_procs.py the fake.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from roost.core.orphans import Tagged


class Process(Protocol):
    """A handle on one process (psutil.Process in the real table)."""

    @property
    def pid(self) -> int: ...


class ProcessTable(Protocol):
    def snapshot(self, root_pid: int | None, agent_id: str, roost_home: str) -> list[Process]:
        """The agent's processes: the tree under `root_pid` and every process tagged as the
        agent's, never this roost process or its ancestors."""
        ...

    def kill_tree(self, procs: Sequence[Process]) -> list[int]:
        """TERM, a grace period, KILL what is left; the pids still alive after."""
        ...

    def tagged(self, roost_home: str, agent_id: str | None = None) -> list[tuple[Process, Tagged]]:
        """This user's live processes tagged with this home (and agent), with their facts."""
        ...

    def runs_inside(self, root_pid: int | None, agent_id: str, roost_home: str) -> bool:
        """Whether this roost process runs inside the agent's process tree."""
        ...

    def run_outside(self, argv: list[str], env: dict[str, str]) -> None:
        """Start `argv` outside this process's tree and return at once."""
        ...

    def open_files(self, root_pid: int) -> list[str]:
        """The regular files a process and its descendants have open."""
        ...

    def exists(self, pid: int) -> bool:
        """Whether a process with this pid exists (another user's counts: it cannot be
        signalled, but it is there)."""
        ...

    def terminate(self, pid: int) -> None:
        """Send one process SIGTERM; nothing if it is gone or not ours."""
        ...

    def kill(self, pid: int) -> None:
        """Send one process SIGKILL; nothing if it is gone or not ours."""
        ...

    def runs_service(self, pid: int) -> bool | None:
        """Whether `pid` is this user's live `roost service run` (a reused pid is another
        program's); None where the table cannot tell what a process runs."""
        ...
