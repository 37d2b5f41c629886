"""Finding and stopping an agent's processes, including those that escaped its tree.

tmux's kill-window only hangs up the pane; children started with nohup or setsid are reparented
to init and live on, and an agent deaf to SIGHUP outlives even its tmux server. So roost tags
every agent's environment with ROOST_AGENT_ID and ROOST_HOME (two roost homes may hold the same
agent id after an export and import: each finds only its own), snapshots the tree (descendants
of the pane's pid, plus every process of this user carrying both tags), then sends TERM, waits,
sends KILL to what is left, and verifies. Whose a tagged process is: core.orphans.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Sequence
from typing import IO

import psutil

from roost.core.orphans import Tagged, parse_tmux
from roost.core.processes import Process

TAG = "ROOST_AGENT_ID"
HOME_TAG = "ROOST_HOME"


def _own_lineage() -> set[int]:
    """This roost process and its ancestors: an agent may run `roost kill` on itself."""
    pids = {os.getpid()}
    try:
        for parent in psutil.Process().parents():
            pids.add(parent.pid)
    except psutil.Error:
        pass
    return pids


def runs_inside(root_pid: int | None, agent_id: str, roost_home: str) -> bool:
    """Whether this process runs inside the agent's process tree: the agent's pane process, or
    a process tagged as the agent's, is this process or one of its ancestors (an agent running
    `roost kill` on itself). Such a caller spares itself and would die half-way."""
    for pid in _own_lineage():
        if pid == root_pid:
            return True
        try:
            env = psutil.Process(pid).environ()
        except (psutil.Error, OSError):
            continue
        if env.get(TAG) == agent_id and env.get(HOME_TAG) == roost_home:
            return True
    return False


def run_limited(
    argv: list[str], cwd: str, env: dict[str, str], out: IO[str], limit: float
) -> int | None:
    """Run `argv` to its end with its output in `out`, for at most `limit` seconds; then kill it
    and everything it started (its own session and process group: a script's `npm install`
    dies with it, not only the shell) and return None."""
    import subprocess

    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        return proc.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # its group's id is its pid (a new session)
        except ProcessLookupError:
            pass
        proc.wait()
        return None


def run_outside(argv: list[str], env: dict[str, str]) -> None:
    """Start `argv` outside this process's tree and return at once: a double fork in a new
    session, so that it is reparented to init (or the nearest subreaper) before it runs, and
    no kill of this process's ancestors reaches it. Its output goes nowhere: it reports through
    the event log."""
    first = os.fork()
    if first == 0:  # the intermediate: a new session, one more fork, and gone
        try:
            os.setsid()
            middle = os.getpid()
            if os.fork() == 0:
                while os.getppid() == middle:  # not before it is reparented
                    time.sleep(0.001)
                null = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(null, fd)
                os.chdir("/")  # not the caller's folder (an agent's worktree, kept busy)
                os.execvpe(argv[0], argv, env)
        finally:
            os._exit(0)
    os.waitpid(first, 0)


def tagged(roost_home: str, agent_id: str | None = None) -> list[tuple[psutil.Process, Tagged]]:
    """This user's live processes tagged with this roost home (and this agent, if given), with
    the facts core.orphans decides on; never this roost process or its ancestors."""
    uid = os.getuid()
    mine = _own_lineage()
    found = []
    needle = f"{HOME_TAG}={roost_home}" if agent_id is None else f"{TAG}={agent_id}"
    for proc in _carrying(needle):
        try:
            if proc.uids().real != uid or proc.pid in mine:
                continue
            env = proc.environ()
            if (
                env.get(HOME_TAG) != roost_home
                or not env.get(TAG)
                or (agent_id is not None and env[TAG] != agent_id)
            ):
                continue
            if proc.status() == psutil.STATUS_ZOMBIE:
                continue
        except (psutil.Error, OSError):
            continue
        socket, server = parse_tmux(env.get("TMUX", ""))
        found.append(
            (
                proc,
                Tagged(
                    proc.pid,
                    env[TAG],
                    os.path.realpath(socket) if socket else "",
                    server,
                    server is not None and _is_tmux(server),
                    env.get("ROOST_TMUX_SOCKET", ""),
                ),
            )
        )
    return found


def _carrying(variable: str) -> list[psutil.Process]:
    """The processes whose environment may hold `variable` (NAME=value). On Linux a raw look at
    /proc/<pid>/environ skips the others without parsing their environments: restore asks this
    once per agent, so it must stay cheap with hundreds of processes."""
    if not os.path.isdir("/proc/self"):
        return list(psutil.process_iter())
    needle = b"\0" + variable.encode() + b"\0"
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                data = b"\0" + fh.read() + b"\0"
        except OSError:
            continue  # gone, or another user's
        if needle in data:
            try:
                found.append(psutil.Process(int(entry)))
            except psutil.Error:
                continue
    return found


def _is_tmux(pid: int) -> bool:
    try:
        return "tmux" in psutil.Process(pid).name()
    except psutil.Error:
        return False


def snapshot(root_pid: int | None, agent_id: str, roost_home: str) -> list[psutil.Process]:
    procs: dict[int, psutil.Process] = {}
    if root_pid:
        try:
            root = psutil.Process(root_pid)
            procs[root.pid] = root
            for child in root.children(recursive=True):
                procs[child.pid] = child
        except psutil.Error:
            pass
    for proc, _facts in tagged(roost_home, agent_id):
        procs.setdefault(proc.pid, proc)
    for pid in _own_lineage():
        procs.pop(pid, None)
    return list(procs.values())


def port_holder(port: int) -> str | None:
    """Who listens on loopback TCP `port`, as `pid N (name)`, when this user may see it; None
    when it cannot tell (another user's process, or a system that does not say)."""
    try:
        found = psutil.net_connections(kind="tcp")
    except (psutil.Error, OSError):
        return None
    for conn in found:
        if conn.laddr and conn.laddr.port == port and conn.status == psutil.CONN_LISTEN:
            if conn.pid is None:
                return None
            try:
                return f"pid {conn.pid} ({psutil.Process(conn.pid).name()})"
            except psutil.Error:
                return f"pid {conn.pid}"
    return None


def open_files(root_pid: int) -> list[str]:
    """The regular files that a process and its descendants have open, by absolute path: what
    tells which of a CLI's session files is this agent's (the CLI holds its own open)."""
    try:
        root = psutil.Process(root_pid)
        tree = [root, *root.children(recursive=True)]
    except psutil.Error:
        return []
    found: list[str] = []
    for proc in tree:
        try:
            found.extend(f.path for f in proc.open_files())
        except psutil.Error:
            continue  # gone meanwhile, or not ours to look at
    return found


def kill_tree(procs: list[psutil.Process], grace: float = 3.0) -> list[int]:
    """TERM, wait `grace` seconds, KILL the rest, wait again. Returns the pids still alive."""
    _signal_all(procs, "terminate")
    alive = _wait_gone(procs, grace)
    _signal_all(alive, "kill")
    return [p.pid for p in _wait_gone(alive, 2.0)]


def _signal_all(procs: list[psutil.Process], how: str) -> None:
    for proc in procs:
        try:
            getattr(proc, how)()
        except psutil.Error:
            pass


def _wait_gone(procs: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    deadline = time.monotonic() + timeout
    alive = procs
    while True:
        alive = [p for p in alive if _alive(p)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


def _alive(proc: psutil.Process) -> bool:
    """Running and not a zombie (dead, unreaped: a container's init may never reap it)."""
    try:
        return bool(proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


class SystemProcesses:
    """The real process table (core.processes.ProcessTable): this module's functions."""

    def snapshot(self, root_pid: int | None, agent_id: str, roost_home: str) -> list[Process]:
        return list(snapshot(root_pid, agent_id, roost_home))

    def kill_tree(self, procs: Sequence[Process]) -> list[int]:
        return kill_tree([p for p in procs if isinstance(p, psutil.Process)])

    def tagged(self, roost_home: str, agent_id: str | None = None) -> list[tuple[Process, Tagged]]:
        return list(tagged(roost_home, agent_id))

    def runs_inside(self, root_pid: int | None, agent_id: str, roost_home: str) -> bool:
        return runs_inside(root_pid, agent_id, roost_home)

    def run_outside(self, argv: list[str], env: dict[str, str]) -> None:
        run_outside(argv, env)

    def open_files(self, root_pid: int) -> list[str]:
        return open_files(root_pid)

    def exists(self, pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def terminate(self, pid: int) -> None:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass

    def kill(self, pid: int) -> None:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass

    def runs_service(self, pid: int) -> bool | None:
        return runs_service(pid)


def runs_service(pid: int) -> bool | None:
    """Whether `pid` is this user's live `roost service run` (one started by hand, outside the
    service's pane); None where /proc cannot tell. A reused pid is another program's."""
    words = _live_cmdline(pid)
    if not isinstance(words, list):
        return words
    said = b" ".join(words)
    return b"roost" in said and b" service run" in said


def roost_alive(pid: int) -> bool | None:
    """Whether `pid` is a live roost process of this user (a recorded endpoint's server, read
    without connecting to it); None where /proc cannot tell."""
    words = _live_cmdline(pid)
    return any(b"roost" in w for w in words) if isinstance(words, list) else words


def _live_cmdline(pid: int) -> list[bytes] | bool | None:
    """The words of `pid`'s command line if it is a live process of this user; else False
    (gone, or another user's), or None where /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            words = fh.read().split(b"\0")
    except FileNotFoundError:
        return False if os.path.isdir("/proc/self") else None
    except OSError:
        return None
    try:
        os.kill(pid, 0)
    except (PermissionError, ProcessLookupError):
        return False
    return words
