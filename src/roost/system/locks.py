"""File locks across processes: one wake/spawn/kill of a name at a time, and one creation or
destruction of a home at a time.

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
