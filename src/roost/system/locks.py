"""File locks across processes: one wake/spawn/kill of a name at a time, one creation or
destruction of a home at a time, and one roost service per ROOST_HOME for its whole life
(`claim`).

fcntl.flock is released by the kernel when its holder dies, even by SIGKILL, so a crashed roost
never leaves a name locked.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from roost.core.errors import RoostError
from roost.core.present import command


def home_key(home: str) -> str:
    """The lock key of a home. A name never holds a '.', so no agent's key is ever the same
    (an agent named "home-x" and the home "x" must not share a lock: one operation takes both)."""
    return f"home.{home}"


@contextmanager
def hold(lock_dir: Path, key: str, timeout: float = 120.0) -> Iterator[None]:
    lock_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = _open(lock_dir / f"{key}.lock")
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise RoostError(f"{key} is busy: another roost command holds it") from None
                time.sleep(0.02)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def claim(path: Path) -> int | None:
    """Take the lock at `path` without waiting, for as long as this process lives: the
    descriptor to keep open (never passed to a child: Python's are not inheritable). None when
    another process holds it. The holder's pid is written in the file (what a refusal names)."""
    fd = _open(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def claimant(path: Path) -> int | None:
    """The pid the holder of `claim(path)` wrote; None when unreadable or not written yet."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)  # a FIFO never blocks
    except OSError:
        return None
    try:
        text = os.read(fd, 32).decode("ascii", "replace").strip()
    finally:
        os.close(fd)
    return int(text) if text.isdigit() else None


def _open(path: Path) -> int:
    """The lock file, created owner-only; never through a symlink (one planted there would make
    roost create or lock a file elsewhere)."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RoostError(
                f"refusing the lock {path}: it is a symlink (remove it: {command('rm', str(path))})"
            ) from None
        raise RoostError(f"cannot open the lock {path}: {exc.strerror}") from None
