"""A process table for the fake tmux (core.processes.ProcessTable) that behaves as the real one
(system/procs.py on psutil) does, for the operations' tests: no monkeypatching, no real process.

Every live agent pane of the fake tmux is a process tagged as its agent's (ROOST_AGENT_ID,
ROOST_HOME, TMUX), whose death ends the pane with 128 + the signal. A test adds others: children
(that inherit their parent's tags, as a fork does), escaped orphans, zombies, other users'
processes. As with psutil: a signal to a gone pid does nothing (NoSuchProcess, swallowed), one to
another user's process is refused (AccessDenied, swallowed: it survives), a zombie is dead but
still listed, a process deaf to SIGTERM needs the SIGKILL. Waits are the clock's.

>>> from roost.core.clock import ManualClock
>>> from datetime import UTC, datetime
>>> table = FakeProcesses(FakeTmux(), "/h", ManualClock(datetime(2031, 1, 1, tzinfo=UTC)))
>>> deaf = table.add({TAG: "a", HOME_TAG: "/h"}, deaf=True)
>>> theirs = table.add({TAG: "a", HOME_TAG: "/h"}, uid=OTHER_UID)
>>> [p.pid for p in table.snapshot(None, "a", "/h")] == [deaf.pid]  # theirs: not readable
True
>>> table.kill_tree([deaf, theirs]) == [theirs.pid], table.clock.slept
(True, [3.0, 2.0])
"""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass, field

from roost.core.clock import ManualClock
from roost.core.orphans import Tagged, parse_tmux
from roost.core.processes import Process
from roost.system.procs import HOME_TAG, TAG
from roost.tmux.fake import PID_BASE, FakeTmux

MY_UID, OTHER_UID = os.getuid(), os.getuid() + 1
SERVER_PID = PID_BASE - 1  # the fake tmux server's pid (tmux/fake.py's server_pid)
THIS_ROOST = PID_BASE - 2  # this roost process: never in a snapshot, never signalled
GRACE, AFTER_KILL = 3.0, 2.0  # the real kill_tree's waits


@dataclass
class FakeProc:
    pid: int
    env: dict[str, str]
    parent: int | None = None
    uid: int = MY_UID
    deaf: bool = False  # ignores SIGTERM (a CLI that traps it): only SIGKILL ends it
    zombie: bool = False  # dead, never reaped: listed, yet not alive
    alive: bool = True
    files: list[str] = field(default_factory=list)  # what it has open
    pane_id: str | None = None  # the fake pane it runs in: its death ends the pane

    @property
    def running(self) -> bool:
        return self.alive and not self.zombie


class FakeProcesses:
    def __init__(self, tmux: FakeTmux, home: str, clock: ManualClock) -> None:
        self.tmux, self.home, self.clock = tmux, home, clock
        self.table: dict[int, FakeProc] = {}
        self.own: set[int] = {THIS_ROOST}  # this roost and its ancestors (an agent's, to test)
        self.signals: list[tuple[int, int]] = []  # (pid, signal) in the order sent
        self.outside: list[tuple[list[str], dict[str, str]]] = []  # what run_outside started
        self._pids = 2 * PID_BASE  # above the fake tmux's pane pids

    # ---- what tests use -------------------------------------------------------------------
    def add(
        self,
        env: dict[str, str] | None = None,
        parent: int | None = None,
        uid: int = MY_UID,
        deaf: bool = False,
        zombie: bool = False,
        files: Sequence[str] = (),
    ) -> FakeProc:
        """A process: a child of `parent` inherits its tags (as after fork), unless `env`."""
        self._sync()
        self._pids += 1
        inherited = dict(self.table[parent].env) if parent in self.table else {}
        env = env if env is not None else inherited
        proc = FakeProc(self._pids, env, parent, uid, deaf, zombie, files=list(files))
        self.table[proc.pid] = proc
        return proc

    def process(self, pid: int) -> FakeProc:
        self._sync()
        return self.table[pid]

    # ---- core.processes.ProcessTable ---------------------------------------------------------
    def snapshot(self, root_pid: int | None, agent_id: str, roost_home: str) -> list[Process]:
        self._sync()
        found: dict[int, FakeProc] = {}
        if root_pid in self.table and self.table[root_pid].alive:
            found[root_pid] = self.table[root_pid]
            for proc in self._descendants(root_pid):
                found[proc.pid] = proc
        for _proc, facts in self.tagged(roost_home, agent_id):
            found.setdefault(facts.pid, self.table[facts.pid])
        return [p for pid, p in found.items() if pid not in self.own]

    def kill_tree(self, procs: Sequence[Process]) -> list[int]:
        pids = [p.pid for p in procs]
        for pid in pids:
            self._signal(pid, signal.SIGTERM)
        alive = [pid for pid in pids if self._running(pid)]
        if alive:
            self.clock.sleep(GRACE)  # the real one waits out the grace for these
        for pid in alive:
            self._signal(pid, signal.SIGKILL)
        survivors = [pid for pid in alive if self._running(pid)]
        if survivors:
            self.clock.sleep(AFTER_KILL)
        return survivors

    def tagged(self, roost_home: str, agent_id: str | None = None) -> list[tuple[Process, Tagged]]:
        self._sync()
        found: list[tuple[Process, Tagged]] = []
        for proc in self.table.values():
            env = proc.env
            if not proc.running or proc.uid != MY_UID or proc.pid in self.own:
                continue  # another user's environment is not readable
            if env.get(HOME_TAG) != roost_home or not env.get(TAG):
                continue
            if agent_id is not None and env[TAG] != agent_id:
                continue
            socket, server = parse_tmux(env.get("TMUX", ""))
            facts = Tagged(
                proc.pid,
                env[TAG],
                socket,
                server,
                server == SERVER_PID,
                env.get("ROOST_TMUX_SOCKET", ""),
            )
            found.append((proc, facts))
        return found

    def runs_inside(self, root_pid: int | None, agent_id: str, roost_home: str) -> bool:
        self._sync()
        for pid in self.own:
            env = self.table[pid].env if pid in self.table else {}
            if pid == root_pid or (env.get(TAG) == agent_id and env.get(HOME_TAG) == roost_home):
                return True
        return False

    def run_outside(self, argv: list[str], env: dict[str, str]) -> None:
        self.outside.append((list(argv), dict(env)))

    def open_files(self, root_pid: int) -> list[str]:
        self._sync()
        root = self.table.get(root_pid)
        if root is None or not root.alive:
            return []
        return [f for p in [root, *self._descendants(root_pid)] for f in p.files]

    # ---- the make-believe ----------------------------------------------------------------
    def _sync(self) -> None:
        """The fake tmux's agent panes are processes: a new live one appears, a dead one's ends."""
        live = {}
        for pane in self.tmux.panes.values():
            agent_id = self.tmux.windows[pane.window_id].options.get("@roost_id", "")
            if agent_id and not pane.dead:
                live[pane.pid] = (pane.id, agent_id)
        for pid, (pane_id, agent_id) in live.items():
            if pid not in self.table:
                env = {
                    TAG: agent_id,
                    HOME_TAG: self.home,
                    "TMUX": f"{self.tmux.socket_path()},{SERVER_PID},0",
                    "ROOST_TMUX_SOCKET": self.tmux.socket,
                }
                self.table[pid] = FakeProc(pid, env, pane_id=pane_id)
        for proc in self.table.values():
            if proc.pane_id is not None and proc.pid not in live:
                proc.alive = False

    def exists(self, pid: int) -> bool:
        self._sync()
        return self._running(pid)

    def terminate(self, pid: int) -> None:
        self._sync()
        self._signal(pid, signal.SIGTERM)

    def kill(self, pid: int) -> None:
        self._sync()
        self._signal(pid, signal.SIGKILL)

    def runs_service(self, pid: int) -> bool | None:
        return None  # the fake's processes carry no command line: as where /proc is absent

    def _descendants(self, pid: int) -> list[FakeProc]:
        children = [p for p in self.table.values() if p.parent == pid and p.alive]
        return [d for c in children for d in (c, *self._descendants(c.pid))]

    def _running(self, pid: int) -> bool:
        return pid in self.table and self.table[pid].running

    def _signal(self, pid: int, sig: int) -> None:
        self.signals.append((pid, sig))
        proc = self.table.get(pid)
        if proc is None or not proc.running:
            return  # gone (NoSuchProcess) or a zombie: nothing to end
        if proc.uid != MY_UID:
            return  # AccessDenied, as psutil says it; the real kill_tree swallows it
        if sig == signal.SIGTERM and proc.deaf:
            return
        proc.alive = False
        if proc.pane_id is not None:
            self.tmux.exit(proc.pane_id, 128 + sig)
