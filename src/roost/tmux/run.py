"""Running one tmux client: the one runner under both the full client (tmux/client.py) and
`roost ls`'s fast path (cli/fast.py), and of any short program roost asks one answer of
(doctor's `--version`). Import-light (os, select, time): posix_spawn instead of the
subprocess module, which costs about 10 ms to import on every `roost ls`.

The client gets a process group of its own, its standard input is /dev/null or the given bytes,
and it has `limit` seconds: then it is killed with everything it started (its group) and
`Silent` is raised. A child that left the group and holds the pipes is not waited for.
"""

from __future__ import annotations

import os
import select
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


class Silent(Exception):
    """The client did not finish within its limit; it and its process group were killed."""


def call(
    argv: Sequence[str],
    env: Mapping[str, str],
    limit: float,
    input: bytes | None = None,
    most: int | None = None,
) -> tuple[int, bytes, bytes]:
    """(exit code, stdout, stderr) of argv. OSError when it cannot be started (FileNotFoundError
    for a missing binary); Silent when it outlives `limit` seconds. `most`: keep at most that
    many bytes of each stream (the rest is read and dropped), for a program that is not roost's
    own (a CLI's `--version` that writes without end must not fill roost's memory)."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    in_r, in_w = os.pipe() if input is not None else (-1, -1)
    stdin = (
        (os.POSIX_SPAWN_DUP2, in_r, 0)
        if input is not None
        else (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)
    )
    try:
        pid = os.posix_spawnp(
            argv[0],
            list(argv),
            dict(env),
            setpgroup=0,
            file_actions=[stdin, (os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2)],
        )
    except OSError:
        for fd in (out_r, out_w, err_r, err_w, in_r, in_w):
            if fd >= 0:
                os.close(fd)
        raise
    for fd in (out_w, err_w, in_r):
        if fd >= 0:
            os.close(fd)
    try:
        out, err = exchange(out_r, err_r, in_w, input or b"", time.monotonic() + limit, most)
    except Silent:
        try:
            os.killpg(pid, 9)  # the client and anything it started
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        raise
    finally:
        for fd in (out_r, err_r):
            os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out, err


def exchange(
    out_fd: int, err_fd: int, in_fd: int, data: bytes, deadline: float, most: int | None = None
) -> tuple[bytes, bytes]:
    """Feed `data` to in_fd (then close it) while reading stdout and stderr until both close,
    or Silent at the deadline; each stream kept to its first `most` bytes (None: all)."""
    chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    kept = {out_fd: 0, err_fd: 0}
    reading = [out_fd, err_fd]
    writing = [in_fd] if in_fd >= 0 else []
    if writing:
        os.set_blocking(in_fd, False)
    try:
        while reading or writing:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Silent
            readable, writable = _ready(reading, writing, left)
            if not readable and not writable:
                raise Silent
            for fd in writable:
                try:
                    data = data[os.write(fd, data[:65536]) :]
                except BrokenPipeError:
                    data = b""  # the client stopped reading: what it says is in its output
                if not data:
                    writing.remove(fd)
                    os.close(fd)
            for fd in readable:
                chunk = os.read(fd, 65536)
                if chunk:
                    if most is not None:
                        chunk = chunk[: max(0, most - kept[fd])]
                        kept[fd] += len(chunk)
                    if chunk:
                        chunks[fd].append(chunk)
                else:
                    reading.remove(fd)
    finally:
        for fd in writing:
            os.close(fd)
    return b"".join(chunks[out_fd]), b"".join(chunks[err_fd])


def _ready(reading: list[int], writing: list[int], timeout: float) -> tuple[list[int], list[int]]:
    """The descriptors ready within `timeout` seconds. poll, not select: the roost service
    holds many descriptors (roost web's, the MCP endpoint's), and select stops at 1,024."""
    poller = select.poll()
    for fd in reading:
        poller.register(fd, select.POLLIN)
    for fd in writing:
        poller.register(fd, select.POLLOUT)
    events = poller.poll(timeout * 1000)
    # a closed or failed end counts as ready: its read or write says so
    readable = [fd for fd, ev in events if fd in reading and ev & ~select.POLLOUT]
    writable = [fd for fd, ev in events if fd in writing and ev & ~select.POLLIN]
    return readable, writable
