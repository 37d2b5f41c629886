"""A secret roost keeps in a file of its own (the web's tokens, the VAPID key): made once, owner
only, and refused when group or others may read it."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path


def read_or_make(path: Path, make: Callable[[], bytes]) -> bytes:
    """The bytes of `path`, written from `make()` (0600, never over an existing file) when it is
    missing. PermissionError says how to fix a file group or others may read: no secret."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        mode = path.stat().st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise PermissionError(
                f"{path} is readable by others (mode {stat.S_IMODE(mode):o}): "
                "chmod 600 it, or delete it for a new one"
            ) from None
        return path.read_bytes()
    made = make()
    with os.fdopen(fd, "wb") as f:
        f.write(made)
    return made
