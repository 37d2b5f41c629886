"""Files other programs wrote (a CLI's transcript, rollout, chat file or history, a hook log an
agent can write to), read as network input is read: one opener for all of them (issue 35).

- Only a regular file, checked on the open descriptor (no race between a look and the open):
  a FIFO, a device (a symlink to /dev/zero), a socket or a folder is refused. The open never
  blocks (O_NONBLOCK: a FIFO with no writer would hold the reader for good).
- Never through a symlink that leads out of the folders the CLI owns, when the caller names
  them (`within`).
- Bounded: a read takes at most `limit` bytes; `lines` skips, and counts, a line longer than
  LINE_LIMIT (a whole file of one line never reaches a JSON parser).

Refusals are OSErrors (`NotARegularFile`, `OutsideFolder`), so a reader's existing "the file
is not there yet" path takes them: one agent's bad file is that agent's nothing, never another
agent's failure.
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import BinaryIO

READ_LIMIT = 64 << 20  # bytes one read of a record takes at most (the rest: the next read)
LINE_LIMIT = 8 << 20  # bytes of one line; a longer one is skipped (no record line is this long)


class NotARegularFile(OSError):
    """A FIFO, a device, a socket or a folder where a CLI's file should be."""


class OutsideFolder(OSError):
    """A path whose real place is outside the folders its CLI owns (a planted symlink)."""


def open_file(path: str | os.PathLike[str], within: Iterable[str] = ()) -> BinaryIO:
    """`path` opened for reading, if it is a regular file (inside one of the folders `within`,
    when given, after every symlink is followed)."""
    name = os.fspath(path)
    roots = [os.path.realpath(r) for r in within]
    if roots:
        real = os.path.realpath(name)
        if not any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in roots):
            raise OutsideFolder(f"{name}: outside its CLI's folder ({real})")
    fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFile(f"{name}: not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read(
    path: str | os.PathLike[str], limit: int = READ_LIMIT, within: Iterable[str] = ()
) -> bytes:
    """At most `limit` bytes from the start of a regular file."""
    with open_file(path, within) as fh:
        return fh.read(limit)


def tail(
    path: str | os.PathLike[str], limit: int = READ_LIMIT, within: Iterable[str] = ()
) -> bytes:
    """At most the last `limit` bytes of a regular file, from a line's start."""
    with open_file(path, within) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            fh.seek(size - limit)
            data = fh.read(limit)
            return data[data.find(b"\n") + 1 :]
        return fh.read(limit)


def lines(data: bytes) -> Iterator[str]:
    """The complete lines of `data` as text (bad UTF-8 replaced), each at most LINE_LIMIT
    bytes: a longer one is left out."""
    for raw in data.splitlines():
        if len(raw) <= LINE_LIMIT:
            yield raw.decode("utf-8", "replace")


def entries(data: bytes) -> Iterator[dict[str, object]]:
    """Each of `lines(data)` that is a JSON object (every CLI's record line is one), parsed;
    any other line is left out: no JSON (one being written), another value, or nested deeper
    than Python's stack."""
    import json  # here: roost ls's fast path imports this module, never this function

    for line in lines(data):
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(entry, dict):
            yield entry


def too_long(data: bytes) -> int:
    """How many lines of `data` `lines` leaves out."""
    return sum(1 for raw in data.splitlines() if len(raw) > LINE_LIMIT)
