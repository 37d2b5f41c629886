"""The shared MCP endpoint: roost's MCP tools (mcp/server.py's, the same set, scope and limits)
for every agent of this roost home over one loopback HTTP endpoint (MCP streamable HTTP,
stateless, JSON answers), instead of one `roost mcp` process per agent.

Hosted by the roost service, or in the foreground by `roost mcp serve`. The gate in front of
the SDK refuses, before any MCP is read:
- a peer that is not loopback (the socket is bound to 127.0.0.1 only; the gate checks again),
  and a Host or Origin that is not (DNS rebinding: the SDK's transport security);
- a request without `Authorization: Bearer <launch token>` of an agent of this home's store
  (ops/mcpendpoint.py): a forged, absent or earlier launch's token gets 401;
- a body over MAX_BODY (413: system/admission cuts it before the gate reads it).
Each tool call then names its caller from that same token, read again from the store at the
call (a relaunch in between has replaced it).
"""

from __future__ import annotations

import ipaddress
import json
import logging
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import uvicorn
from mcp.server.mcpserver import Context
from mcp.server.transport_security import TransportSecuritySettings
from uvicorn.protocols.http.auto import AutoHTTPProtocol

from roost.core.errors import RoostError
from roost.core.scope import Caller
from roost.mcp import server
from roost.mcp.lazy import HOST, listen
from roost.ops import mcpendpoint
from roost.ops.context import App
from roost.providers import mcpwire
from roost.system import admission
from roost.system.admission import ASGI, Message, Receive, Scope, Send

MAX_BODY = admission.MAX_BODY  # bytes: a tool call's arguments; a prompt is far smaller


@dataclass
class Handle:
    """A running endpoint: its URL, and stop() (which also releases the home's record: the
    address stays the home's)."""

    url: str
    _server: uvicorn.Server
    _thread: threading.Thread
    _home: Path

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        mcpendpoint.release(self._home, self.url)


def bearer(headers: Any) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, or None."""
    value = headers.get("authorization") if headers is not None else None
    if not isinstance(value, str) or not value.startswith("Bearer "):
        return None
    token = value[len("Bearer ") :].strip()
    return token or None


def by_token(app: App, ctx: Context) -> tuple[App, Caller]:
    """The caller of one tool call: the agent holding the request's launch token now."""
    return mcpendpoint.acting_as(app, bearer(ctx.headers))


def is_loopback(host: str | None) -> bool:
    try:
        return host is not None and ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def gate(inner: ASGI, db: Path) -> ASGI:
    """The ASGI app in front of the SDK's: loopback peers with a current launch token only."""

    async def refuse(send: Send, status: int, why: str) -> None:
        body = why.encode() + b"\n"
        headers = [(b"content-type", b"text/plain; charset=utf-8")]
        if status == 401:
            headers.append((b"www-authenticate", b"Bearer"))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            return await inner(scope, receive, send)
        if scope["type"] != "http":
            return None  # websockets: not MCP; closed unanswered
        client = scope.get("client")
        if not is_loopback(client[0] if client else None):
            return await refuse(send, 403, "roost's MCP endpoint serves this machine only")
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        token = bearer(headers)
        holder = await anyio.to_thread.run_sync(mcpendpoint.holder, db, token) if token else None
        if holder is None or token is None:
            return await refuse(send, 401, "a current launch token of this roost home is needed")
        if scope.get("method") != "POST":
            return await inner(scope, receive, send)
        body = await read_body(receive)
        if body is None:
            return None  # the client left before its body was whole: no one to answer
        if lists_tools(body):  # the agent's CLI has roost's tools now: its prompt may go
            mcpwire.mark_listed(str(db.parent), holder, token)
        return await inner(scope, replay(body, receive), send)

    return app


async def read_body(receive: Receive) -> bytes | None:
    """The whole body (system/admission has cut one past MAX_BODY already: a 413), or None
    when the client left before it was whole (never a part taken for the whole)."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def replay(body: bytes, receive: Receive) -> Receive:
    """A receive that gives the body read already, then the client's own messages."""
    given = False

    async def again() -> Message:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return again


def lists_tools(body: bytes) -> bool:
    """The body holds a `tools/list` request (alone or in a batch)."""
    if b"tools/list" not in body:
        return False
    try:
        found = json.loads(body)
    except ValueError:
        return False
    messages = found if isinstance(found, list) else [found]
    return any(isinstance(m, dict) and m.get("method") == "tools/list" for m in messages)


def application(app: App) -> ASGI:
    """The endpoint as an ASGI app (tests drive it in process)."""
    # No `subscriptions/listen` (so, at MCP 2026-07-28, no listChanged to listen for): roost's
    # tools never change, and a CLI holding a listen stream sees each service restart as the
    # server's loss (Claude Code 2.1.332 re-listens three times, then reconnects with backoff
    # and drops roost's tools meanwhile, for good after a few seconds). Without one, a restart
    # between two calls is never seen: each call is a POST to the same address.
    tools = server.build(dict(app.environ), allow_write=False, identify=by_token, listen=False)
    sdk = tools.streamable_http_app(
        streamable_http_path=mcpendpoint.PATH,
        stateless_http=True,  # no session state per agent: one POST, one answer
        json_response=True,
        max_request_body_size=MAX_BODY,
        transport_security=TransportSecuritySettings(
            allowed_hosts=[f"{HOST}:*", "localhost:*"],
            allowed_origins=[f"http://{HOST}:*", "http://localhost:*"],
        ),
    )
    return gate(sdk, app.paths.db)


def start(app: App, timeout: float = 10.0) -> Handle:
    """Serve the endpoint in a thread of this process; record its URL for launches."""
    sock = listen(app.paths.home, lambda url: mcpendpoint.given(app, url))
    handle = serve(app, sock, timeout)
    mcpendpoint.record(app.paths.home, handle.url)
    return handle


def serve(app: App, sock: socket.socket, timeout: float = 10.0) -> Handle:
    """Serve the endpoint on a bound socket in a thread of this process."""
    port = sock.getsockname()[1]
    # The MCP library's INFO lines (a session manager started at an agent's first call) are no
    # news for the person reading the service's pane.
    logging.getLogger("mcp").setLevel(logging.WARNING)
    # Bounded as roost web is (system/admission.py); every agent's calls come from loopback,
    # so the per-peer cap is the server's.
    gate = admission.Gate(per_peer=admission.MAX_CONNECTIONS, max_body=MAX_BODY)
    config = uvicorn.Config(
        admission.asgi(application(app), gate),
        http=admission.protocol(AutoHTTPProtocol, gate),
        log_level="warning",
        lifespan="on",
        access_log=False,
        timeout_graceful_shutdown=2,
    )
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not srv.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            srv.should_exit = True
            raise RoostError(f"roost's MCP endpoint did not start on {HOST}:{port}")
        time.sleep(0.01)
    url = f"http://{HOST}:{port}{mcpendpoint.PATH}"
    return Handle(url, srv, thread, app.paths.home)


def serve_forever(app: App) -> None:
    """`roost mcp serve`: the endpoint in the foreground until interrupted."""
    handle = start(app)
    print(handle.url, flush=True)
    try:
        while handle._thread.is_alive():
            handle._thread.join(1)
    except KeyboardInterrupt:
        pass
    finally:
        handle.stop()
