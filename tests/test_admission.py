"""system/admission.py on a real uvicorn server (issue 35: servers that face a browser are
bounded): connections per server and per peer, a deadline for a request's headers, a body cap.
The service's flood is test_web_flood.py."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import uvicorn
from uvicorn.protocols.http.auto import AutoHTTPProtocol

from roost.system import admission


async def _app(scope: Any, receive: Any, send: Any) -> None:
    """`/` answers at once; `/stream` sends a line a tenth of a second, as an event stream."""
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200, "headers": []})
    if scope["path"] == "/stream":
        for _ in range(30):
            await send({"type": "http.response.body", "body": b"tick\n", "more_body": True})
            await asyncio.sleep(0.1)
    await send({"type": "http.response.body", "body": b"ok\n"})


@contextmanager
def serving(gate: admission.Gate) -> Iterator[int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    server = uvicorn.Server(
        uvicorn.Config(
            admission.asgi(_app, gate),
            http=admission.protocol(AutoHTTPProtocol, gate),
            log_level="warning",
            lifespan="off",
        )
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.01)
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(10)


def connect(port: int) -> socket.socket:
    conn = socket.create_connection(("127.0.0.1", port), timeout=10)
    return conn


def closed_by_server(conn: socket.socket, within: float) -> bytes | None:
    """What the server sent before it closed the connection, or None if it was still open
    after `within` seconds."""
    conn.settimeout(within)
    got = b""
    try:
        while chunk := conn.recv(65536):
            got += chunk
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return got


def whole_answer(conn: socket.socket) -> bytes:
    """One whole answer (the app's are chunked: they end with an empty chunk)."""
    conn.settimeout(10)
    got = b""
    while not got.endswith(b"0\r\n\r\n"):
        chunk = conn.recv(65536)
        if not chunk:
            break
        got += chunk
    return got


def request(path: str = "/", extra: bytes = b"") -> bytes:
    return f"GET {path} HTTP/1.1\r\nhost: x\r\n".encode() + extra + b"\r\n"


def test_a_connection_that_sends_nothing_is_closed_at_the_header_deadline() -> None:
    with serving(admission.Gate(header_timeout=0.5)) as port:
        idle = connect(port)
        started = time.monotonic()
        assert closed_by_server(idle, 10) == b""
        assert time.monotonic() - started < 5


def test_a_keep_alive_connection_that_trickles_is_closed_too() -> None:
    with serving(admission.Gate(header_timeout=0.5)) as port:
        conn = connect(port)
        conn.sendall(request())
        assert whole_answer(conn).startswith(b"HTTP/1.1 200")
        # then a byte at a time, each well within uvicorn's own keep-alive time
        started = time.monotonic()
        try:
            for byte in b"GET / HTTP/1.1\r\n":
                conn.sendall(bytes([byte]))
                time.sleep(0.2)
        except OSError:
            pass  # closed while it trickled: what the gate is for
        assert closed_by_server(conn, 10) == b""
        assert time.monotonic() - started < 5


def test_a_request_being_served_has_no_deadline() -> None:
    with serving(admission.Gate(header_timeout=0.5)) as port:
        conn = connect(port)
        conn.sendall(request("/stream"))
        got = closed_by_server(conn, 10)  # 3 s of ticks, six header deadlines long
        assert got is None or got.count(b"tick") == 30
        if got is None:  # still open: it was answered on a keep-alive connection
            conn.close()


def test_connections_past_the_peers_cap_are_answered_503_and_closed() -> None:
    gate = admission.Gate(limit=50, per_peer=5, header_timeout=30)
    with serving(gate) as port:
        held = [connect(port) for _ in range(5)]
        for conn in held:  # each answered: the server has them all
            conn.sendall(request())
            assert conn.recv(65536).startswith(b"HTTP/1.1 200")
        extra = connect(port)
        answer = closed_by_server(extra, 10)
        assert answer is not None and answer.startswith(b"HTTP/1.1 503")
        assert gate.refused == 1
        held.pop().close()
        # its place is free once the server saw it go
        deadline = time.monotonic() + 10
        while True:
            again = connect(port)
            again.sendall(request())
            if again.recv(65536).startswith(b"HTTP/1.1 200"):
                break
            assert time.monotonic() < deadline, "the closed connection's place stayed taken"
            again.close()
            time.sleep(0.05)


def test_connections_past_the_servers_cap_are_refused() -> None:
    gate = admission.Gate(limit=3, per_peer=10, header_timeout=30)
    with serving(gate) as port:
        held = [connect(port) for _ in range(3)]
        for conn in held:
            conn.sendall(request())
            assert conn.recv(65536).startswith(b"HTTP/1.1 200")
        answer = closed_by_server(connect(port), 10)
        assert answer is not None and answer.startswith(b"HTTP/1.1 503")


def test_a_body_past_the_cap_is_refused() -> None:
    with serving(admission.Gate(max_body=1000)) as port:
        conn = connect(port)
        conn.sendall(request("/", b"content-length: 3000\r\n") + b"x" * 3000)
        assert whole_answer(conn).startswith(b"HTTP/1.1 413")
        conn.sendall(request())  # read and dropped: the connection goes on
        assert whole_answer(conn).startswith(b"HTTP/1.1 200")
        far = connect(port)
        far.sendall(request("/", b"content-length: 5000000\r\n"))
        got = closed_by_server(far, 10)  # answered at once, and closed
        assert got is not None and got.startswith(b"HTTP/1.1 413")
        chunked = connect(port)
        chunked.sendall(request("/", b"transfer-encoding: chunked\r\n"))
        for _ in range(3):
            chunked.sendall(b"200\r\n" + b"y" * 0x200 + b"\r\n")
        got = closed_by_server(chunked, 10)
        assert got is not None and b"200 OK" not in got
        small = connect(port)
        small.sendall(request("/", b"content-length: 10\r\n") + b"z" * 10)
        assert small.recv(65536).startswith(b"HTTP/1.1 200")


def test_a_body_that_trickles_is_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(admission, "BODY_TIMEOUT", 1.0)
    with serving(admission.Gate()) as port:
        conn = connect(port)
        conn.sendall(request("/", b"content-length: 100\r\n") + b"x")
        started = time.monotonic()
        got = closed_by_server(conn, 10)
        assert got is not None and b"200 OK" not in got
        assert time.monotonic() - started < 5
        stream = connect(port)  # a body done: an answer that lasts is not cut
        stream.sendall(request("/stream", b"content-length: 1\r\n") + b"x")
        got = closed_by_server(stream, 10)
        assert got is None or got.count(b"tick") == 30
