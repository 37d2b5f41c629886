"""A warm `python -m roost` for the tests: one process per xdist worker that imported roost once
and forks a child for each `world.roost(...)` call, so a call costs a fork instead of an
interpreter's start and roost's imports (about 0.2 CPU-seconds each, a quarter of a test
world's CPU: docs/TESTING.md).

Each call is still a process of its own, as a user's: the child takes the call's standard
streams (passed over a unix socket), environment, working directory and arguments, runs
`python -m roost` (runpy, as `-m` does) and exits through the interpreter's own exit, so its
exit status (or the signal that killed it) is what the caller gets. The zygote reaps its
children and sends each one's wait status back on the request's connection. It is
single-threaded, so every fork is safe.

Calls whose environment changes what Python decides at its start (locale, PYTHON*) run as a
plain subprocess instead (conftest.py), and so does everything when the zygote is missing.

Run: python zygote.py SOCKET_PATH
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
from typing import Any, NoReturn

HEADER = struct.Struct("!I")  # a length, or a pid
CODE = struct.Struct("!i")  # an exit code; minus the signal that killed it
MAX_FDS = 3


def _warm() -> None:
    """What most commands import (not the TUI's, the MCP SDK's or the web's)."""
    import roost.cli.main
    import roost.entry
    import roost.ops.lifecycle
    import roost.ops.send
    import roost.ops.workspace  # noqa: F401


def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    data, fds, _, _ = socket.recv_fds(conn, 1 << 20, MAX_FDS)
    while len(data) < HEADER.size or len(data) < HEADER.size + HEADER.unpack_from(data)[0]:
        more = conn.recv(1 << 20)
        if not more:
            raise EOFError("the request was cut")
        data += more
    (size,) = HEADER.unpack_from(data)
    return json.loads(data[HEADER.size : HEADER.size + size]), list(fds)


def _child(request: dict[str, Any], fds: list[int]) -> None:
    """In the forked child: become `python -m roost ARGS` and never return."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    import runpy

    sys.argv = ["-m", *request["args"]]  # runpy sets argv[0] to roost's __main__, as -m does
    runpy.run_module("roost", run_name="__main__", alter_sys=True)
    sys.exit(0)


def serve(path: str) -> None:
    _warm()
    import gc

    # The warm objects out of the collector's reach: a child's collections never touch them, so
    # never copy their pages (a call's CPU: 56 ms before, 41 after, for an `ls --json`).
    gc.freeze()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    waiting: dict[int, socket.socket] = {}
    print("ready", flush=True)
    parent = os.getppid()
    while os.getppid() == parent:  # its test process gone (killed): so is it
        readable, _, _ = select.select([server.fileno(), wake_r], [], [], 1.0)
        if wake_r in readable:
            while True:
                try:
                    if not os.read(wake_r, 512):
                        break
                except BlockingIOError:
                    break
        if server.fileno() in readable:
            conn, _ = server.accept()
            try:
                request, fds = _receive(conn)
            except (OSError, EOFError, ValueError):
                conn.close()
                continue
            pid = os.fork()
            if pid == 0:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                for fd in (wake_r, wake_w):
                    os.close(fd)
                server.close()
                conn.close()
                for conn_waiting in waiting.values():
                    conn_waiting.close()
                _child(request, fds)
            for fd in fds:
                os.close(fd)
            _send_pid(conn, pid)  # before it can be reaped: its pidfd names this child alone
            waiting[pid] = conn
        while waiting:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            done = waiting.pop(pid, None)
            if done is not None:
                try:
                    done.sendall(CODE.pack(os.waitstatus_to_exitcode(status)))
                except OSError:
                    pass
                done.close()


def _send_pid(conn: socket.socket, pid: int) -> None:
    """The child's pid, with a pidfd where the kernel has them (Linux 5.3+): the caller's
    signals then go through it. A caller gone meanwhile costs nothing but its answer."""
    pidfd_open = getattr(os, "pidfd_open", None)
    pidfd = -1
    try:
        if pidfd_open is not None:
            with contextlib.suppress(OSError):
                pidfd = pidfd_open(pid)
        if pidfd >= 0:
            socket.send_fds(conn, [HEADER.pack(pid)], [pidfd])
        else:
            conn.sendall(HEADER.pack(pid))
    except OSError:
        pass  # its status is still sent (and dropped) once it is reaped
    finally:
        if pidfd >= 0:
            os.close(pidfd)


# ---- the tests' side -------------------------------------------------------------------------
# What Python decides at its start from the environment: a call that changes these runs as a
# plain subprocess, whose interpreter starts with them.
AT_START = ("PYTHON", "LANG", "LC_", "LANGUAGE")


def _at_start(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(AT_START)}


class Zygote:
    """One warm roost per test process (an xdist worker), started at its first call."""

    def __init__(self, folder: str) -> None:
        self.path = os.path.join(folder, "zygote.sock")
        self.env = dict(os.environ)
        self.proc = subprocess.Popen(
            [sys.executable, __file__, self.path],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            env=self.env,
        )
        assert self.proc.stdout is not None
        if self.proc.stdout.readline() != b"ready\n":
            raise RuntimeError("the zygote did not start")

    def serves(self, env: dict[str, str]) -> bool:
        return self.proc.poll() is None and _at_start(env) == _at_start(self.env)

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(os.path.dirname(self.path), ignore_errors=True)

    def run(
        self, args: list[str], env: dict[str, str], cwd: str, input: str | None, timeout: float
    ) -> subprocess.CompletedProcess[str]:
        """As subprocess.run([python, -m, roost, *args], capture_output, text) would."""
        call = self.start(args, env, cwd, stdin=input is not None)
        out, err = call.communicate(input, timeout)
        return subprocess.CompletedProcess(call.args, call.wait(), out, err)

    def start(
        self,
        args: list[str],
        env: dict[str, str],
        cwd: str,
        stdin: bool = False,
        capture: bool = True,
    ) -> Call:
        """As subprocess.Popen([python, -m, roost, *args], text) would, its output captured (or
        thrown away) and its input /dev/null unless `stdin`: for the tests that run calls side
        by side or kill one midway."""
        if stdin and not capture:
            raise ValueError("a call fed input is read to its end: capture its output")
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        theirs: list[int] = []  # the child's ends, closed here once sent
        ours: list[int] = []  # closed here only on a failure
        try:
            # each descriptor listed as soon as it exists, so a failure closes it
            if stdin:
                in_r, in_w = os.pipe()
                theirs.append(in_r)
                ours.append(in_w)
            else:
                in_r, in_w = os.open(os.devnull, os.O_RDONLY), -1
                theirs.append(in_r)
            if capture:
                out_r, out_w = os.pipe()
                ours.append(out_r)
                theirs.append(out_w)
                err_r, err_w = os.pipe()
                ours.append(err_r)
                theirs.append(err_w)
            else:
                out_r = err_r = -1
                out_w = os.open(os.devnull, os.O_WRONLY)
                theirs.append(out_w)
                err_w = os.open(os.devnull, os.O_WRONLY)
                theirs.append(err_w)
            conn.connect(self.path)
            body = json.dumps({"args": args, "env": env, "cwd": cwd}).encode()
            socket.send_fds(conn, [HEADER.pack(len(body)) + body], [in_r, out_w, err_w])
            data, fds, _, _ = socket.recv_fds(conn, HEADER.size, 1)
            ours += fds
            pid = HEADER.unpack(data + _exactly(conn, HEADER.size - len(data)))[0]
        except BaseException:
            conn.close()
            for fd in ours:
                os.close(fd)
            raise
        finally:
            for fd in theirs:
                os.close(fd)
        argv = [sys.executable, "-m", "roost", *args]
        return Call(argv, pid, fds[0] if fds else -1, conn, in_w, out_r, err_r)


class Call:
    """A call the zygote started: its pid is the forked child's, its exit status comes back on
    the request's connection once the zygote has reaped it; signals go through the pidfd the
    zygote sent with the pid."""

    def __init__(
        self,
        args: list[str],
        pid: int,
        pidfd: int,
        conn: socket.socket,
        in_w: int,
        out_r: int,
        err_r: int,
    ) -> None:
        self.args, self.pid = args, pid
        self.returncode: int | None = None
        self._pidfd, self._conn = pidfd, conn
        self._in_w, self._out_r, self._err_r = in_w, out_r, err_r

    def communicate(self, input: str | None = None, timeout: float = 60) -> tuple[str, str]:
        """Its whole output (its input fed first), as text, once it has ended. Past `timeout`
        it is killed (as subprocess.run does, which is what every caller wants) and
        TimeoutExpired raised."""
        from roost.tmux.run import Silent, exchange  # roost's own runner's loop

        if self._out_r < 0:
            raise ValueError("this call's output was not captured, or was read already")
        data = (input or "").encode()
        deadline = time.monotonic() + timeout
        feed, self._in_w = self._in_w, -1  # exchange's now: it closes it once all is written
        try:
            out, err = exchange(self._out_r, self._err_r, feed, data, deadline)
        except Silent:
            self._kill_and_raise(timeout)
        finally:
            self._close_output()
        try:
            self.wait(max(1.0, deadline - time.monotonic()))  # as Popen's: its status too
        except subprocess.TimeoutExpired:
            self._kill_and_raise(timeout)
        return _text(out), _text(err)

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is not None:
            return self.returncode
        self._conn.settimeout(timeout)
        try:
            code: int = CODE.unpack(_exactly(self._conn, CODE.size))[0]
        except (TimeoutError, BlockingIOError):  # BlockingIOError: a timeout of 0
            raise subprocess.TimeoutExpired(self.args, timeout or 0) from None
        self.returncode = code
        self._conn.close()
        if self._pidfd >= 0:
            os.close(self._pidfd)
            self._pidfd = -1
        return code

    def poll(self) -> int | None:
        if self.returncode is None and select.select([self._conn], [], [], 0)[0]:
            self.wait()
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is not None:
            return
        try:
            if self._pidfd >= 0:
                signal.pidfd_send_signal(self._pidfd, sig)
            else:
                os.kill(self.pid, sig)
        except ProcessLookupError:
            pass  # it ended (as Popen, which says nothing then either)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def _kill_and_raise(self, timeout: float) -> NoReturn:
        self.kill()
        self.wait()
        raise subprocess.TimeoutExpired(self.args, timeout, "", "") from None

    def _close_output(self) -> None:
        for fd in (self._out_r, self._err_r):
            if fd >= 0:
                os.close(fd)
        self._out_r = self._err_r = -1

    def __del__(self) -> None:
        # a test that failed before it read a call's output: its descriptors go with it
        self._close_output()
        for fd in (self._in_w, self._pidfd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._conn.close()


def _exactly(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        more = conn.recv(size - len(data))
        if not more:
            raise RuntimeError("the zygote closed the call's connection")
        data += more
    return data


def _text(data: bytes) -> str:
    """As subprocess's text mode: the locale's encoding, universal newlines."""
    import locale

    text = data.decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


if __name__ == "__main__":
    serve(sys.argv[1])
