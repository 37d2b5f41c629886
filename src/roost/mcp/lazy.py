"""The shared MCP endpoint as the roost service hosts it: listening at once, loaded at its first
caller. The socket is bound and its URL recorded when the service starts, so every launch is
wired to it; the MCP SDK and the HTTP server (mcp/http.py: about 1.5 s of CPU and 45 MB to
import) load only when a connection waits on the socket, and then serve that connection too
(it waited in the listen backlog). A service whose agents never call roost's tools never pays
for them. Import-light: socket, select, threading.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from roost.core import endpoint
from roost.core.errors import RoostError
from roost.ops import mcpendpoint

if TYPE_CHECKING:
    from roost.mcp.http import Handle
    from roost.ops.context import App

HOST = "127.0.0.1"
BACKLOG = 128


def bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError:
        sock.close()
        raise
    return sock


def listen(home: Path, given: Callable[[str], list[str]]) -> socket.socket:
    """This home's address (core/endpoint.py): the recorded port, which running agents were
    launched with, taken again (SO_REUSEADDR: connections of the last server that linger in
    TIME_WAIT do not hold it). Taken by another program while agents (`given(url)`: their
    names) hold it: RoostError, said loudly, no other port (those agents would be cut for good,
    silently). Held by nobody's agent, or never recorded: the home's own ports, else any."""
    url = mcpendpoint.recorded(home)
    port = endpoint.port_of(url) if url else None
    if url is not None and port is not None:
        try:
            return bind(port)
        except OSError as exc:
            cut = given(url)
            if cut:
                raise RoostError(taken(port, cut, exc)) from exc
            print(
                f"roost: {HOST}:{port} is taken ({exc.strerror}); no running agent has it: "
                "this home's MCP endpoint moves",
                flush=True,
            )
    for candidate in endpoint.home_ports(str(home)):
        if candidate == port:
            continue
        with contextlib.suppress(OSError):
            return bind(candidate)
    return bind(0)


def taken(port: int, cut: list[str], exc: OSError) -> str:
    """What the service says (its pane, `roost service status`, doctor) of a port it cannot
    take again."""
    from roost.system import procs  # psutil: only when it is taken

    holder = procs.port_holder(port)
    return (
        f"{HOST}:{port}, this home's MCP endpoint, is taken by "
        f"{holder or 'another program'} ({exc.strerror}): roost's tools are cut for "
        f"{', '.join(cut)} until it is free, then: roost service stop; roost service start"
    )


class LazyEndpoint:
    """A listening socket whose server loads when the first connection waits on it."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.sock = listen(app.paths.home, lambda url: mcpendpoint.given(app, url))
        self.sock.listen(BACKLOG)  # connections wait here while the server loads
        self.url = f"http://{HOST}:{self.sock.getsockname()[1]}{mcpendpoint.PATH}"
        self.handle: Handle | None = None
        self.failure: BaseException | None = None
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._wait, name="mcp-lazy", daemon=True)
        self._thread.start()
        mcpendpoint.record(app.paths.home, self.url)

    def _wait(self) -> None:
        poller = select.poll()  # not select: no ceiling at descriptor 1,024
        for fd in (self.sock.fileno(), self._wake_r):
            poller.register(fd, select.POLLIN)
        readable = [fd for fd, _ in poller.poll()]
        if self._wake_r in readable:
            return  # stopped before anyone called
        from roost.mcp import http

        try:
            self.handle = http.serve(self.app, self.sock)
        except Exception as exc:  # noqa: BLE001 - said in the service's pane
            # No caller may wait on a socket nobody serves: launches go back to `roost mcp`.
            self.failure = exc
            self.sock.close()
            mcpendpoint.release(self.app.paths.home, self.url)
            print(f"roost: the MCP endpoint did not load: {exc}", flush=True)

    @property
    def loaded(self) -> bool:
        return self.handle is not None

    def stop(self) -> None:
        os.write(self._wake_w, b"x")
        self._thread.join(15)
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)
        if self.handle is not None:
            self.handle.stop()  # also releases the record
        elif self.failure is None:
            self.sock.close()
            mcpendpoint.release(self.app.paths.home, self.url)


def start(app: App) -> LazyEndpoint:
    return LazyEndpoint(app)
