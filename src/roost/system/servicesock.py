"""The roost service's socket for readers (service/readers.py serves it): where it is, and the two
questions a reader asks it. Import-light (os and `_socket`, the C module under `socket`, whose
Python half imports enum and selectors): `roost ls` asks here before importing anything else.

The socket is `run/service.sock` in ROOST_HOME, a folder only its user may write to (checked
by the caller: locate.private_tree), made owner-only, and the service also checks each peer's
uid. Every request is one line of tab-separated words:

- `ls <0|1> <ident>`: `roost ls` (1: `--json`); the answer is `ok LENGTH` and a newline, then
  the output's LENGTH bytes (an answer cut short is never printed: the caller answers itself);
  or `no` and a newline when the caller must answer itself (the service's
  quick answer would have handed over to the full CLI, or it serves another tmux server or
  another roost build).
- `follow <ident>`: the answer is a line `ok`, then a line with a sequence number each time the
  event log grew (the number of its last row), for as long as both stay connected. The reader
  reads the log itself (store/events.py): the socket only says when, the store says what.

`ident` names what the answer depends on besides the store: the tmux socket name, TMUX_TMPDIR,
TZ (a usage limit's reset written without a zone is read in the local one), the roost
package's folder and version. A reader whose ident differs gets `no`. Words are UTF-8 with
undecodable bytes of the environment kept as they are (surrogateescape), on both sides.
"""

from __future__ import annotations

import _socket
import os
import stat
import sys
import time

from roost import __version__

TYPE_CHECKING = False  # not typing's: the typing module is not imported at run time
if TYPE_CHECKING:
    from collections.abc import Mapping

NAME = "service.sock"
MAX_PATH = 100  # sun_path holds 108 bytes; a longer home has no socket (readers poll)
ASK_TIMEOUT = 3.0  # seconds for the whole answer: a service that hangs costs at most this
HEAD_LIMIT = 32  # bytes of an answer's head line (`ok LENGTH`)
MAX_ANSWER = 32 << 20  # bytes of `ls`'s output: 1,000 agents' JSON is about 1 MB
SEP = "\t"


def path(home: str) -> str | None:
    """The socket's path in ROOST_HOME; None when it would not fit in a socket address."""
    found = os.path.join(home, "run", NAME)
    return found if len(os.fsencode(found)) <= MAX_PATH else None


def ident(socket_name: str, environ: Mapping[str, str]) -> str:
    """What an answer depends on besides the store (see the module's doc), as one word."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tmpdir, zone = environ.get("TMUX_TMPDIR", ""), environ.get("TZ", "")
    parts = (socket_name, tmpdir, zone, package, __version__)
    return "\x1f".join(parts)


def request(*words: str) -> bytes | None:
    """One request line; None when a word holds a tab or a line break (never sent)."""
    if any(SEP in w or "\n" in w or "\r" in w for w in words):
        return None
    return (SEP.join(words) + "\n").encode("utf-8", "surrogateescape")


def connect(home: str, timeout: float = ASK_TIMEOUT) -> _socket.socket | None:
    """A connection to the service's socket; None when nothing listens there."""
    where = path(home)
    return None if where is None else connect_to(where, timeout)


def connect_to(where: str, timeout: float = ASK_TIMEOUT) -> _socket.socket | None:
    """A connection to a service socket at `where` (a host's is reached through a socket its
    ssh master forwards: hosts/operations.py); None when nothing listens there."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(where)
    except OSError:
        sock.close()
        return None
    return sock


def peer(sock: _socket.socket) -> tuple[int, int] | None:
    """(pid, uid) of the process at the other end of a unix socket (Linux: SO_PEERCRED); None
    where the system does not tell. OSError when the socket cannot say."""
    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:
        return None
    raw = sock.getsockopt(_socket.SOL_SOCKET, option, 12)  # pid, uid, gid: three ints
    pid, uid = (int.from_bytes(raw[i : i + 4], sys.byteorder, signed=True) for i in (0, 4))
    return pid, uid


def served_by(where: str, pid: int) -> bool:
    """Whether `where` itself (never a link to one) is this user's socket, listened on by process
    `pid` (`roost service status`: the readers' socket is the service's own). Linux tells the
    listener's pid (SO_PEERCRED); elsewhere, that something of this user's answers there."""
    try:
        info = os.lstat(where)
    except OSError:
        return False
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
        return False
    sock = connect_to(where, 1.0)
    if sock is None:
        return False
    try:
        found = peer(sock)
        return found is None or found[0] == pid
    except OSError:
        return False
    finally:
        sock.close()


def ask_ls(home: str, as_json: bool, ident_word: str) -> bytes | None:
    """`roost ls`'s output as the service computed it just now; None when the caller must
    answer itself (no service, another build or server, a hand-over, a fault or a timeout)."""
    sock = connect(home)
    return None if sock is None else ls_on(sock, as_json, ident_word)


def ls_on(
    sock: _socket.socket, as_json: bool, ident_word: str, timeout: float = ASK_TIMEOUT
) -> bytes | None:
    """ask_ls on a connection already made (closed here): the whole answer within `timeout`
    seconds and MAX_ANSWER bytes, or None (a service that trickles or floods costs no more)."""
    line = request("ls", "1" if as_json else "0", ident_word)
    deadline = time.monotonic() + timeout
    data = bytearray()
    size = None  # what the whole answer takes (its head line and body), once the head is in
    try:
        if line is None:
            return None
        sock.sendall(line)
        while size is None or len(data) < size:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            sock.settimeout(left)
            chunk = sock.recv(65536)
            if not chunk:
                return None  # `no`, or cut short
            data += chunk
            if size is None:
                head, newline, _ = data.partition(b"\n")
                if newline:
                    size = _whole_size(bytes(head))
                    if size is None:
                        return None
                elif len(data) > HEAD_LIMIT:
                    return None
    except OSError:  # a timeout too
        return None
    finally:
        sock.close()
    return bytes(data[data.index(b"\n") + 1 :]) if len(data) == size else None


def _whole_size(head: bytes) -> int | None:
    """`ok LENGTH`'s whole answer size (the line, its newline and LENGTH bytes); None for
    anything else (`no`, junk, more than MAX_ANSWER)."""
    said = head.split(b" ")
    if len(said) != 2 or said[0] != b"ok" or not said[1].isdigit():
        return None
    length = int(said[1])
    return len(head) + 1 + length if length <= MAX_ANSWER else None


def follow(home: str, ident_word: str) -> _socket.socket | None:
    """A connection on which the service says when the event log grows (`wait_news`); None when
    no service answers for this ident."""
    line = request("follow", ident_word)
    sock = connect(home) if line is not None else None
    if sock is None or line is None:
        return None
    try:
        sock.sendall(line)
        if _read_line(sock) == b"ok":
            return sock
    except OSError:
        pass
    sock.close()
    return None


def wait_news(sock: _socket.socket, timeout: float) -> bool | None:
    """Whether the log grew within `timeout` seconds (the news read and dropped: the reader
    reads the log); None when the service went away (the caller closes and polls again)."""
    sock.settimeout(timeout)
    try:
        data = sock.recv(4096)
    except TimeoutError:
        return False
    except OSError:
        return None
    return True if data else None


def _read_line(sock: _socket.socket, limit: int = 64) -> bytes:
    found = b""
    while not found.endswith(b"\n") and len(found) < limit:
        chunk = sock.recv(1)
        if not chunk:
            break
        found += chunk
    return found.rstrip(b"\n")
