"""OpenSSH, the I/O half of remote hosts (hosts/rules.py builds every argv): each call a
child in its own process group under a hard time limit (killed with everything it started),
one multiplexed master per host, probed before use and replaced when stale.

Why the probe: `ConnectTimeout` bounds the TCP connect, not the connect to a master's socket;
a master that died and left its socket, or hangs, would hang every later call (agent-deck's
remote mode did). roost asks the socket itself under a short limit (`mux_answers`, what
`ssh -O check` asks, without starting a process); a stale socket is removed and a new master
started, once.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import selectors
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from roost.core import settings
from roost.core.errors import RoostError
from roost.hosts import rules as sshargs


class Unreachable(RoostError):
    """A host that cannot be reached (no answer in time, refused, a host key that changed):
    exit code 8, roost's own for it (README), where ssh says 255. A script still tells a
    connection that failed from a command that did (the host's roost exits 1 to 7)."""

    def __init__(self, host: str, reason: str) -> None:
        super().__init__(f"host {host} unreachable: {reason}", code=UNREACHABLE)
        self.reason = reason


UNREACHABLE = 8  # the exit code of a command that could not reach its host
SSH_FAILED = 255  # ssh's own exit code when ssh itself failed (the remote roost never exits so)


@dataclass(frozen=True, slots=True)
class Result:
    code: int | None  # None: killed at the time limit (or over its size)
    out: str
    err: str
    too_large: bool = False  # killed: it wrote more than MAX_OUTPUT bytes


# Bytes a captured call may write (each of stdout and stderr): a host's whole `ls --json` of a
# thousand agents is ~2 MB; a host that floods is cut there, never read into memory whole.
MAX_OUTPUT = 32 << 20
MAX_LINE = 1 << 20  # characters of one line of a stream (`lines`): a host's words are bounded


def run(
    argv: list[str],
    limit: float | None,
    *,
    stdin: int | IO[str] | None = subprocess.DEVNULL,
    stdout: int | IO[str] | None = subprocess.PIPE,
    env: dict[str, str] | None = None,
    relay: IO[str] | None = None,
) -> Result:
    """Run `argv` for at most `limit` seconds (None: no limit, for a watch that streams);
    then kill its process group. A killed call returns code None. `relay`: its stdout is
    written there as it comes (a terminal's guard: a host's bytes are shown, not sent)."""
    proc = subprocess.Popen(
        argv,
        stdin=stdin,
        stdout=subprocess.PIPE if relay is not None else stdout,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,  # its own group: a kill takes ssh and any helper it started
    )
    try:
        if relay is not None or (limit is not None and proc.stdout is not None):
            return _bounded(proc, limit, MAX_OUTPUT, relay)
        out, err = proc.communicate(timeout=limit)
        return Result(proc.returncode, out or "", err or "")
    except subprocess.TimeoutExpired:
        _kill(proc)
        out, err = _drain(proc)
        return Result(None, out, err)
    except BaseException:  # Ctrl-C: nothing left behind
        _kill(proc)
        raise


_STREAMS: set[subprocess.Popen[str]] = set()


def lines(argv: list[str], name: str = "local", *, own_stderr: bool = False) -> Iterator[str]:
    """`argv`'s stdout, line by line, until it ends; Unreachable when ssh itself failed (255:
    a dropped connection). No time limit: it streams until stopped (stop_streams), and ssh's
    keepalives end it when the peer is gone. `own_stderr`: its stderr is ours (a local watch's
    bells), not kept for the reason."""
    import tempfile

    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=None if own_stderr else err,
            text=True,
            start_new_session=True,
        )
        _STREAMS.add(proc)
        try:
            assert proc.stdout is not None
            # bounded: a longer line comes in pieces (no JSON: each reader drops them)
            yield from iter(lambda: proc.stdout.readline(MAX_LINE) if proc.stdout else "", "")
            code = proc.wait()
        finally:
            _kill(proc)
            proc.wait()
            _STREAMS.discard(proc)
        if code == SSH_FAILED:
            err.seek(0)
            raise Unreachable(name, sshargs.ssh_reason(err.read()))


def stop_streams() -> None:
    for proc in list(_STREAMS):
        _kill(proc)


def _bounded(
    proc: subprocess.Popen[str], limit: float | None, cap: int, relay: IO[str] | None = None
) -> Result:
    """The call's output within `limit` seconds and `cap` bytes a stream, read as it comes
    (a host that trickles is cut at its limit, one that floods at its cap); then its exit.
    `relay`: stdout goes there as it comes instead (no cap: a watch streams for hours)."""
    import codecs

    assert proc.stdout is not None and proc.stderr is not None
    deadline = time.monotonic() + limit if limit is not None else float("inf")
    said = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
    relayed = proc.stdout.fileno() if relay is not None else -1
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    with selectors.DefaultSelector() as sel:
        for fd in said:
            sel.register(fd, selectors.EVENT_READ)
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                _kill(proc)
                proc.wait()
                return Result(None, _text(said, proc.stdout), _text(said, proc.stderr))
            for key, _ in sel.select(None if left == float("inf") else left):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fd)
                    continue
                if key.fd == relayed and relay is not None:
                    relay.write(decoder.decode(chunk))
                    relay.flush()
                    continue
                said[key.fd] += chunk
                if len(said[key.fd]) > cap:
                    _kill(proc)
                    proc.wait()
                    return Result(None, "", "", too_large=True)
    if relay is not None:
        relay.write(decoder.decode(b"", final=True))
    out, err = _text(said, proc.stdout), _text(said, proc.stderr)
    proc.stdout.close()
    proc.stderr.close()
    wait = None if limit is None else max(0.1, deadline - time.monotonic())
    try:
        return Result(proc.wait(wait), out, err)
    except subprocess.TimeoutExpired:
        _kill(proc)
        proc.wait()
        return Result(None, out, err)


def _text(said: dict[int, bytearray], pipe: IO[str]) -> str:
    return said[pipe.fileno()].decode("utf-8", "replace") if not pipe.closed else ""


def _kill(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # its group's id is its pid (a new session)


def _drain(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """What a killed call had written; bounded, in case something outside its group still holds
    a pipe open."""
    try:
        out, err = proc.communicate(timeout=1)
        return out or "", err or ""
    except subprocess.TimeoutExpired:
        proc.kill()
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        proc.wait()
        return "", ""


MUX_HELLO = 1  # OpenSSH mux.c: MUX_MSG_HELLO, the master's first packet to every client


def mux_answers(path: str, limit: float) -> bool:
    """Whether an ssh master listens on `path` and greets within `limit` seconds: a packet
    (uint32 length, uint32 type) of type MUX_HELLO."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(limit)
        try:
            s.connect(path)
            head = b""
            while len(head) < 8:
                chunk = s.recv(8 - len(head))
                if not chunk:
                    return False
                head += chunk
        except OSError:  # no socket, refused, or silent until the limit (TimeoutError)
            return False
    return int.from_bytes(head[4:8], "big") == MUX_HELLO


def _listens(path: str) -> bool:
    """Whether something accepts connections on socket `path` (a master's forward: accepting
    opens a channel to the host, which ends unused when this closes)."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(sshargs.CHECK_TIMEOUT)
        try:
            s.connect(path)
        except OSError:
            return False
    return True


def control_folder() -> str:
    """/tmp/roost-ssh-UID, private (0700, ours): masters' sockets are credentials."""
    folder = f"/tmp/roost-ssh-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise RoostError(f"{folder} must be a folder of yours that nobody else may open", code=2)
    return folder


@dataclass(frozen=True, slots=True)
class Link:
    """How to reach one host: the ssh program (with its own options), DEST, the master's socket,
    and the time limits."""

    name: str
    ssh: tuple[str, ...]
    dest: str
    control: str
    connect_limit: float = settings.CONNECT_TIMEOUT

    def opts(self, *, batch: bool = True, master: str = "auto") -> list[str]:
        found = sshargs.options(self.control, batch=batch, connect_timeout=self.connect_limit)
        return ["-o", f"ControlMaster={master}", *found] if master != "auto" else found

    def alive(self) -> bool:
        """Whether a master answers on the socket: in this process, no ssh started (a warm call
        costs one process, not two). A master greets each client that connects with its hello
        (OpenSSH's mux protocol); a dead one refuses, a hung one says nothing until
        CHECK_TIMEOUT."""
        return mux_answers(self.control, sshargs.CHECK_TIMEOUT)

    def drop_stale(self) -> None:
        """Remove the socket of a master that does not answer (an interactive call then
        connects by itself, prompting if it must)."""
        if not self.alive():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.control)

    def ensure(self) -> None:
        """A working master, or Unreachable within the connect limit (plus the probe's). One
        process at a time starts a host's master (a lock beside its socket): two at once would
        leave the loser's connection running unmultiplexed in the background."""
        if self.alive():
            return
        from roost.system import locks  # only when a master must be started

        with locks.hold(Path(self.control).parent, Path(self.control).name, self.connect_limit + 5):
            if self.alive():
                return  # another process started it meanwhile
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.control)  # stale: its master is dead or hangs
            argv = sshargs.argv(self.ssh, [*self.opts(master="yes"), "-f", "-N"], self.dest)
            found = run(argv, self.connect_limit + 1)
        if found.code is None:
            raise Unreachable(self.name, f"no answer within {self.connect_limit:g} s")
        if found.code != 0:
            raise Unreachable(self.name, sshargs.ssh_reason(found.err))

    def call(self, line: str, limit: float | None, *, stream: bool = False) -> Result:
        """Run `line` on the host through the master. `stream`: its stdout goes straight to
        ours as it comes (a watch, a table); else it is captured."""
        from roost.system import terminal

        self.ensure()
        argv = sshargs.argv(self.ssh, self.opts(), self.dest, line)
        piped = not sys.stdin.isatty()  # `roost --host h import < file`: the file goes along
        guarded = stream and isinstance(sys.stdout, terminal.Shown)  # the host's bytes shown
        return run(
            argv,
            limit,
            stdin=sys.stdin if piped and stream else subprocess.DEVNULL,
            stdout=None if stream else subprocess.PIPE,
            relay=sys.stdout if guarded else None,
        )

    def attach_argv(self, line: str) -> list[str]:
        """An interactive call (`ssh -tt`): a person at the terminal may answer a prompt, so no
        BatchMode; host keys are still checked."""
        return sshargs.argv(self.ssh, self.opts(batch=False), self.dest, line, tty=True)

    def lines(self, line: str) -> Iterator[str]:
        """Run `line` on the host and yield its output's lines as they come (a watch)."""
        self.ensure()
        yield from lines(sshargs.argv(self.ssh, self.opts(), self.dest, line), self.name)

    @property
    def reader_file(self) -> str:
        """What the host said its service's socket is (hosts/operations.py keeps it here: a cache
        beside the master's, gone with it at a reboot or `host rm`)."""
        return f"{self.control}.reader"

    def forwarded(self, remote: str) -> str:
        """Where the master listens for the host's socket `remote` (forward): beside its own,
        named for that path (a master takes a second request for a path it forwards as done,
        so a host whose socket moved needs a name of its own)."""
        return f"{self.control}.{hashlib.sha256(remote.encode()).hexdigest()[:8]}.svc"

    def forward(self, remote: str) -> bool:
        """Have the master carry connections to `forwarded(remote)` on to socket `remote` on the
        host (`ssh -O forward -L`: no process on either side per connection); whether it now
        listens. A listener left by a master that died is replaced; one process at a time (a
        lock), so none removes the socket another's master just made."""
        local = self.forwarded(remote)
        spec = sshargs.forward_spec(local, remote)
        if spec is None:
            return False
        self.ensure()
        from roost.system import locks

        with locks.hold(Path(local).parent, Path(local).name, sshargs.CHECK_TIMEOUT):
            if _listens(local):
                return True
            with contextlib.suppress(FileNotFoundError):
                os.unlink(local)  # its master is gone: nothing listens on it
            argv = sshargs.argv(self.ssh, [*self.opts(), "-L", spec], self.dest, control="forward")
            found = run(argv, sshargs.CHECK_TIMEOUT)
        return found.code == 0

    def close(self) -> None:
        """End the master if one answers (`-O exit`, bounded): nothing roost started outlives
        its service (issue 36 point 7). The next call starts a new one."""
        if self.alive():
            run(
                sshargs.argv(self.ssh, self.opts(), self.dest, control="exit"),
                sshargs.CHECK_TIMEOUT,
            )

    def forget(self) -> None:
        """Stop the master (host rm), and remove what roost kept beside its socket."""
        self.close()
        import glob

        forwards = glob.glob(f"{glob.escape(self.control)}.*.svc*")  # and their locks
        for path in (self.control, f"{self.control}.lock", self.reader_file, *forwards):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
