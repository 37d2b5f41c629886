"""Stopping an agent's whole process tree, including children that escaped it.

tmux's kill-window only hangs up the pane; children started with nohup or setsid are reparented to
init and live on. So roost tags every agent's environment with ROOST_AGENT_ID, snapshots the tree
(descendants of the pane's pid, plus every process of this user carrying the tag), then sends
TERM, waits, sends KILL to what is left, and verifies.
"""

from __future__ import annotations

import os
import time

import psutil

TAG = "ROOST_AGENT_ID"


def _own_lineage() -> set[int]:
    """This roost process and its ancestors: an agent may run `roost kill` on itself."""
    pids = {os.getpid()}
    try:
        for parent in psutil.Process().parents():
            pids.add(parent.pid)
    except psutil.Error:
        pass
    return pids


def tagged(agent_id: str) -> list[psutil.Process]:
    uid = os.getuid()
    found = []
    for proc in psutil.process_iter(["uids"]):
        try:
            if proc.info["uids"] is None or proc.info["uids"].real != uid:
                continue
            if proc.environ().get(TAG) == agent_id:
                found.append(proc)
        except (psutil.Error, OSError):
            continue
    return found


def snapshot(root_pid: int | None, agent_id: str) -> list[psutil.Process]:
    procs: dict[int, psutil.Process] = {}
    if root_pid:
        try:
            root = psutil.Process(root_pid)
            procs[root.pid] = root
            for child in root.children(recursive=True):
                procs[child.pid] = child
        except psutil.Error:
            pass
    for proc in tagged(agent_id):
        procs.setdefault(proc.pid, proc)
    for pid in _own_lineage():
        procs.pop(pid, None)
    return list(procs.values())


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
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
