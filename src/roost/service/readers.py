"""The roost service's socket for readers (system/servicesock.py has the protocol and the client
side): `roost ls` answered by a warm process, and news of the event log pushed to every reader
that follows it (`roost watch`, ops/stream.py), so none of them polls the store while the service
runs. It holds nothing of its own: an `ls` is computed at the call from the store and tmux
(ops/quicklist.py, never a cache), and a follower reads the events from the store itself.

One thread accepts and watches the followers; each request is read and answered on a short
thread of its own (at most MAX_BUSY at once; more are closed, and their callers answer
themselves), so a slow tmux delays nobody's news.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import stat
import threading

from roost.core.clock import Clock
from roost.core.events import Event
from roost.ops import quicklist
from roost.ops.context import App
from roost.ops.service import Component, Serving
from roost.system import locate, servicesock

MAX_BUSY = 16  # requests answered at once
MAX_FOLLOWERS = 256
READ_TIMEOUT = 2.0  # seconds a caller has to send its whole request line
SEND_TIMEOUT = 30.0  # seconds an answer may take to send (a caller stopped with Ctrl-Z...)
BACKLOG = 64


class Readers:
    """The listening socket, its followers, and the thread that serves them. `lock` guards the
    followers, their sockets' sends and closes, and stopping: no socket is sent to or closed by
    two threads at once."""

    def __init__(self, where: str, ident: str, clock: Clock, db: str) -> None:
        self.where = where
        self.ident = ident
        self.clock = clock
        self.warm = quicklist.Warm(db)
        self.listing = threading.Lock()  # one answer at a time: they share `warm`'s connection
        self.sock = _bind(where)
        self.inode = os.stat(where).st_ino  # on stop, only this socket goes (not a successor's)
        self.followers: set[socket.socket] = set()
        self.lock = threading.Lock()
        self.busy = threading.BoundedSemaphore(MAX_BUSY)
        self._wake_r, self._wake_w = os.pipe()
        self._stopping = False
        self._thread = threading.Thread(target=self._loop, name="readers", daemon=True)
        self._thread.start()

    # ---- the accepting thread -----------------------------------------------------------------
    def _loop(self) -> None:
        while not self._stopping:
            with self.lock:
                watched = {s.fileno(): s for s in (self.sock, *self.followers) if s.fileno() >= 0}
            # poll, not select: a busy service's descriptors pass 1,024 (select's ceiling)
            poller = select.poll()
            for fd in (*watched, self._wake_r):
                poller.register(fd, select.POLLIN)
            try:
                readable = [fd for fd, _ in poller.poll()]
            except OSError:  # interrupted: look again
                continue
            if self._stopping:
                return
            if self._wake_r in readable:
                os.read(self._wake_r, 4096)  # a follower was added: watched from the next turn
            for fd in readable:
                if fd == self.sock.fileno():
                    self._accept()
                elif fd in watched:
                    self._drop(watched[fd])  # a follower only sends its request: EOF or junk

    def _accept(self) -> None:
        try:
            conn, _ = self.sock.accept()
        except OSError:
            return
        if not _same_user(conn) or not self.busy.acquire(blocking=False):
            conn.close()
            return
        threading.Thread(target=self._serve, args=(conn,), name="reader", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        kept = False
        try:
            words = _request(conn, self.clock, self.clock.monotonic() + READ_TIMEOUT)
            conn.settimeout(SEND_TIMEOUT)
            if words and words[0] == "ls" and len(words) == 3 and words[1] in ("0", "1"):
                conn.sendall(self._ls(words[1] == "1", words[2]))
            elif words and words[0] == "follow" and len(words) == 2:
                kept = self._follow(conn, words[1])
        except OSError:
            pass
        finally:
            self.busy.release()
            if not kept:
                conn.close()

    def _ls(self, as_json: bool, ident: str) -> bytes:
        if ident != self.ident:
            return b"no\n"
        with self.listing:
            if self._stopping:
                return b"no\n"
            found = quicklist.answer(as_json, os.environ, self.clock.now().timestamp(), self.warm)
        if found is None or found[0] != 0:
            return b"no\n"  # the caller's own path says what is wrong, or records a change
        body = found[1].encode()
        return b"ok %d\n" % len(body) + body  # its length: a cut answer is never printed

    def _follow(self, conn: socket.socket, ident: str) -> bool:
        with self.lock:
            if self._stopping or ident != self.ident or len(self.followers) >= MAX_FOLLOWERS:
                conn.sendall(b"no\n")
                return False
            conn.sendall(b"ok\n")
            conn.setblocking(False)  # news never waits for a reader
            self.followers.add(conn)
            os.write(self._wake_w, b"x")  # the loop watches it from now on
        return True

    def _drop(self, conn: socket.socket) -> None:
        with self.lock:
            self.followers.discard(conn)
            conn.close()

    # ---- the service's event thread -------------------------------------------------------------
    def news(self, seq: int) -> None:
        """Tell every follower the log now ends at `seq`; one that cannot take it at once is
        dropped (it reads the store when it sees the connection go)."""
        line = f"{seq}\n".encode()
        with self.lock:
            for conn in list(self.followers):
                try:
                    if conn.send(line) != len(line):
                        raise BlockingIOError
                except OSError:
                    self.followers.discard(conn)
                    conn.close()

    def stop(self) -> None:
        with self.lock:
            self._stopping = True
            os.write(self._wake_w, b"x")
        self._thread.join(5)
        with self.lock:
            for conn in self.followers:
                conn.close()
            self.followers.clear()
        self.sock.close()
        with contextlib.suppress(OSError):
            if os.lstat(self.where).st_ino == self.inode:  # a link to it is not it
                os.unlink(self.where)
        with self.listing:
            self.warm.close()
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)


def _bind(where: str) -> socket.socket:
    """Listen at `where`, owner-only (its folder, run/, is already). A socket left by a dead
    service is replaced; one a live service answers on (another tmux server's, sharing this
    home), or anything that is not a socket, is refused (OSError)."""
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISSOCK(os.lstat(where).st_mode):
            raise OSError(f"{where} exists and is not a socket; not serving readers")
        with socket.socket(socket.AF_UNIX) as probe:
            probe.settimeout(1.0)
            try:
                probe.connect(where)
            except OSError:
                os.unlink(where)  # nobody listens: a dead service's
            else:
                raise OSError(f"another roost service answers on {where}; not serving readers")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(where)
        os.chmod(where, 0o600)
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


def _same_user(conn: socket.socket) -> bool:
    """The peer runs as this user (Linux: SO_PEERCRED). Elsewhere the owner-only folder and
    socket are the check."""
    try:
        found = servicesock.peer(conn)
    except OSError:
        return False
    return found is None or found[1] == os.getuid()


def _request(
    conn: socket.socket, clock: Clock, deadline: float, limit: int = 4096
) -> list[str] | None:
    """The caller's request line, split into words, if it came whole before `deadline`
    (monotonic); None for anything else."""
    data = b""
    while b"\n" not in data:
        left = deadline - clock.monotonic()
        if left <= 0:
            return None
        conn.settimeout(left)
        chunk = conn.recv(limit)
        if not chunk:
            return None
        data += chunk
        if len(data) > limit:
            return None
    line, _, _ = data.partition(b"\n")
    return line.decode("utf-8", "surrogateescape").split(servicesock.SEP)


# ---- the service's component ------------------------------------------------------------------
_serving: list[Readers] = []


def _start(app: App) -> Serving:
    home, clock = str(app.paths.home), app.clock
    app.close()
    where = servicesock.path(home)
    name = locate.socket_name()
    if where is None or name is None:  # a failure: status says it, not "readers" served
        raise OSError(
            f"no socket for readers: {os.path.join(home, 'run', servicesock.NAME)} is too long"
        )
    db = os.path.join(home, "roost.db")
    readers = Readers(where, servicesock.ident(name, os.environ), clock, db)
    _serving.append(readers)

    def stop() -> None:
        _serving.remove(readers)
        readers.stop()

    return Serving(stop, where)  # status checks the socket there is still this one


def _on_events(app: App, events: list[Event]) -> None:
    for readers in list(_serving):
        readers.news(events[-1].seq)


COMPONENT = Component(name="readers", start=_start, on_events=_on_events)
