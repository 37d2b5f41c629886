"""Who may hold a connection to one of roost's HTTP servers (roost web, the shared MCP
endpoint), and for how long: a browser's or a local program's connections are untrusted input.

- At most `limit` connections at once, and `per_peer` from one address; one more is answered
  503 and closed at once (its descriptor is back before the next accept).
- A connection has `header_timeout` seconds to send a whole request's headers, from its start
  and again after each answer (a keep-alive connection that trickles a byte now and then is
  closed as one that sends nothing is). While a request is served (an event stream, a
  terminal's websocket) there is no deadline.
- A request body is at most `max_body` bytes (413 when its length says more; closed when a
  chunked body grows past it).

Servers here are uvicorn's: `protocol(base)` wraps its HTTP protocol class (admission and the
first deadline, from the transport) and `asgi(app)` wraps the application (a request's start
and end, by its client address, which is one connection's). Both run on the server's one event
loop thread, so the gate needs no lock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

MAX_CONNECTIONS = 256
MAX_PER_PEER = 64
HEADER_TIMEOUT = 10.0  # seconds
MAX_BODY = 1 << 20  # bytes: a message typed in the web view or a tool call's arguments
BODY_TIMEOUT = 30.0  # seconds for a request's whole body
DRAIN_FACTOR = 4  # a body declared up to this many caps is read (and dropped) before its 413
BUSY_ANSWER = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n"
    b"content-length: 22\r\nconnection: close\r\n\r\ntoo many connections.\n"
)

Key = tuple[str, int]
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGI = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass
class _Held:
    transport: asyncio.BaseTransport
    deadline: asyncio.TimerHandle | None = None


@dataclass
class Gate:
    limit: int = MAX_CONNECTIONS
    per_peer: int = MAX_PER_PEER
    header_timeout: float = HEADER_TIMEOUT
    max_body: int = MAX_BODY
    held: dict[Key, _Held] = field(default_factory=dict)
    refused: int = 0  # connections answered 503 since the start

    def admit(self, transport: asyncio.BaseTransport) -> bool:
        """Hold this new connection, or say no (the caller answers and closes it)."""
        key = peer_of(transport)
        if key is None:
            return True  # not an IP connection (a test's pipe): nothing to count it by
        self._prune()
        same_peer = sum(1 for held in self.held if held[0] == key[0])
        if len(self.held) >= self.limit or same_peer >= self.per_peer:
            self.refused += 1
            return False
        self.held[key] = _Held(transport)
        self.waiting(key)
        return True

    def waiting(self, key: Key | None) -> None:
        """The connection waits for a request's headers: it has header_timeout seconds."""
        held = self.held.get(key) if key is not None else None
        if held is None:
            return
        if held.deadline is not None:
            held.deadline.cancel()
        held.deadline = asyncio.get_running_loop().call_later(
            self.header_timeout, _close, held.transport
        )

    def serving(self, key: Key | None) -> None:
        """A request's headers came whole: no deadline while it is answered."""
        held = self.held.get(key) if key is not None else None
        if held is not None and held.deadline is not None:
            held.deadline.cancel()
            held.deadline = None

    def close(self, key: Key | None) -> None:
        held = self.held.get(key) if key is not None else None
        if held is not None:
            _close(held.transport)

    def gone(self, transport: asyncio.BaseTransport) -> None:
        key = peer_of(transport)
        held = self.held.get(key) if key is not None else None
        if held is not None and held.transport is transport:
            self.serving(key)
            del self.held[key]  # type: ignore[arg-type]

    def _prune(self) -> None:
        """Forget connections closed without telling (a websocket's protocol is not ours)."""
        for key in [k for k, held in self.held.items() if held.transport.is_closing()]:
            self.serving(key)
            del self.held[key]


def peer_of(transport: asyncio.BaseTransport) -> Key | None:
    """The connection's (address, port), as uvicorn puts it in a request's scope["client"]."""
    info = transport.get_extra_info("peername")
    if isinstance(info, (list, tuple)) and len(info) >= 2:
        return (str(info[0]), int(info[1]))
    return None


def _close(transport: asyncio.BaseTransport) -> None:
    if not transport.is_closing():
        transport.close()


def protocol(base: type[asyncio.Protocol], gate: Gate) -> type[asyncio.Protocol]:
    """`base` (uvicorn's HTTP protocol class) with the gate at each connection's start and end."""

    class Admitted(base):  # type: ignore[valid-type,misc]
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)
            if not gate.admit(transport):
                if isinstance(transport, asyncio.WriteTransport):
                    transport.write(BUSY_ANSWER)
                transport.close()

        def connection_lost(self, exc: Exception | None) -> None:
            gate.gone(self.transport)
            super().connection_lost(exc)

    return Admitted


def asgi(app: ASGI, gate: Gate) -> ASGI:
    """`app` with each request's start and end told to the gate, and its body bounded: in
    size, and in time (BODY_TIMEOUT for the whole body, so one that trickles is cut too)."""

    async def bounded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await app(scope, receive, send)
        client = scope.get("client")
        key: Key | None = (str(client[0]), int(client[1])) if client else None
        gate.serving(key)
        if scope["type"] == "websocket":
            return await app(scope, receive, send)
        loop = asyncio.get_running_loop()
        ends = loop.time() + BODY_TIMEOUT
        size, whole = 0, False

        async def timed() -> Message:
            """The next part of the body, or a disconnect when BODY_TIMEOUT is over."""
            nonlocal size, whole
            if whole:  # after the body: what the app waits for is the client's leaving
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), max(0.001, ends - loop.time()))
            except TimeoutError:
                gate.close(key)
                return {"type": "http.disconnect"}
            size += len(message.get("body", b""))
            whole = message["type"] != "http.request" or not message.get("more_body")
            return message

        async def counted() -> Message:
            message = await timed()
            if size > gate.max_body:  # a chunked body past the cap: the connection goes
                gate.close(key)
                return {"type": "http.disconnect"}
            return message

        async def told(message: Message) -> None:
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                gate.waiting(key)

        declared = _declared_length(scope)
        if declared > gate.max_body:
            await _too_large(declared <= DRAIN_FACTOR * gate.max_body, timed, told)
            return None
        return await app(scope, counted, told)

    return bounded


async def _too_large(drain: bool, receive: Receive, send: Send) -> None:
    """413 for a body its length says is too large. One not far past the cap is read and
    dropped first: a client still sending when the server closes gets a reset, not the 413."""
    while drain:
        message = await receive()
        if message["type"] != "http.request" or not message.get("more_body"):
            break
    headers = [] if drain else [(b"connection", b"close")]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": b"request body too large\n"})


def _declared_length(scope: Scope) -> int:
    for name, value in scope.get("headers", ()):
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return 0  # the HTTP parser refuses it before the app is called
    return 0
