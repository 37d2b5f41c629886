"""Why the database cannot be used, in one line the user can act on.

SQLite says what went wrong with a result code; the advice depends on it. Only a damaged file
gets the advice to restore a backup or move it aside: a read-only or full filesystem, or a busy
database, is fixed elsewhere and the file itself is fine.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from roost.core.errors import RoostError

# SQLite's primary result codes (the low byte of an extended code).
SQLITE_PERM, SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY = 3, 5, 6, 8
SQLITE_IOERR, SQLITE_CORRUPT, SQLITE_FULL, SQLITE_CANTOPEN = 10, 11, 13, 14
SQLITE_NOTADB = 26


class StoreUnusable(RoostError):
    """The database cannot be used now; `damaged` says whether the file itself is at fault."""

    damaged = False

    def __init__(self, message: str) -> None:
        super().__init__(message, code=3)


class StoreDamaged(StoreUnusable):
    damaged = True


class StoreUnwritable(StoreUnusable):
    """A read-only or full filesystem: the file is fine and can still be read."""


def damaged(path: Path, what: str) -> StoreDamaged:
    return StoreDamaged(
        f"the roost database {path} {what}; it was left untouched: restore it "
        "from a backup, or move it aside to start afresh"
    )


def explain(path: Path, exc: sqlite3.Error | OSError) -> StoreUnusable | None:
    """The one line for a failure of the database or its folder; None for anything else (a
    bug, or a constraint the caller handles), which the caller re-raises as it is."""
    if isinstance(exc, OSError):
        return _explain_os(path, exc)
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    if primary == SQLITE_NOTADB:
        return damaged(path, f"is unreadable ({exc})")
    if primary == SQLITE_CORRUPT:
        return damaged(path, f"is damaged ({exc})")
    if primary == SQLITE_FULL or (primary == SQLITE_IOERR and _no_space_left(path)):
        return disk_full(path, exc)
    if primary == SQLITE_READONLY or (
        primary in (SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_IOERR) and not writable(path)
    ):
        return read_only(path, exc)
    if primary in (SQLITE_BUSY, SQLITE_LOCKED):
        return StoreUnusable(
            f"the roost database {path} is busy: another roost command has held "
            f"it for longer than its timeout ({exc}); try again"
        )
    if primary in (SQLITE_CANTOPEN, SQLITE_IOERR):
        return StoreUnusable(
            f"cannot read or write the roost database {path} ({exc}); check the disk and its folder"
        )
    return None


def _explain_os(path: Path, exc: OSError) -> StoreUnusable | None:
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return read_only(path, exc)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return disk_full(path, exc)
    return None


def read_only(path: Path, detail: object) -> StoreUnusable:
    return StoreUnwritable(
        f"the roost database {path} is read-only here ({detail}); every roost "
        f"command writes to it and to its folder {path.parent}: check their "
        "owner and modes, and that the filesystem is mounted read-write"
    )


def disk_full(path: Path, detail: object) -> StoreUnusable:
    return StoreUnwritable(
        f"the filesystem holding the roost database {path} is full ({detail}); "
        "nothing was changed: free some space and run the command again"
    )


def writable(path: Path) -> bool:
    return os.access(path.parent, os.W_OK) and (not path.exists() or os.access(path, os.W_OK))


def _no_space_left(path: Path) -> bool:
    try:
        return os.statvfs(path.parent).f_bavail == 0
    except OSError:
        return False
