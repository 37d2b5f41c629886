"""roost web: the ASGI app (Starlette) and its server (uvicorn). See docs/WEB.md.

Every request passes `_guard` first: a Host this server answers to, a session cookie from
/login, and for a POST the same Origin and the session's CSRF header. Names in URLs are looked
up in the store by the ops/ functions (never passed to a shell or a tmux format: tmux gets pane
and session ids). Handlers that call ops/ run in Starlette's thread pool, each thread with its
own App (a SQLite connection belongs to its thread).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket
from uvicorn.protocols.http.auto import AutoHTTPProtocol

from roost.core import web as rules
from roost.core.errors import RoostError
from roost.ops.context import App
from roost.ops.root import open_app
from roost.system import admission
from roost.tmux.protocol import TmuxError
from roost.web import actions, auth, changes, feed, pages, phone, term
from roost.web.hosts import HostCache
from roost.web.hosts import views as host_views

STATIC = Path(__file__).parent / "static"
T = TypeVar("T")
# No page of roost web runs another site's script, sits in another site's frame (a dialog's
# buttons must not be clicked through a disguise) or tells another site its address.
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'self'; script-src 'self'; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'self'",
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


@dataclass(frozen=True)
class Config:
    host: str
    port: int
    allow_remote: bool
    sessions: auth.Sessions
    xterm: Path | None  # the folder holding xterm.js and xterm.css, when installed
    in_service: bool = False  # run by the roost service (its event stream needs no start)


@dataclass(frozen=True)
class Setup:
    config: Config
    sock: socket.socket
    url: str  # the login URL, with the token (the typing one when typing is allowed)


def _tokens(home: Path, allow_typing: bool) -> tuple[str, str | None]:
    """The watch token and, when typing is allowed, the typing token (made when missing)."""
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        watch = auth.secret(home, auth.WATCH_FILE)
        return watch, auth.secret(home, auth.TYPE_FILE) if allow_typing else None
    except PermissionError as exc:
        raise RoostError(str(exc)) from None


def print_url(home: Path, bind: str, allow_remote: bool, allow_typing: bool) -> str:
    """`roost web --print-url`: the login URL for that address (nothing is bound)."""
    host, port = rules.parse_bind(bind)
    rules.check_bind(host, allow_remote)
    watch, typing = _tokens(home, allow_typing)
    return login_url(host, port, typing or watch)


def prepare(
    home: Path, bind: str, allow_remote: bool, allow_typing: bool, in_service: bool = False
) -> Setup:
    """Check the address, read (or make) the tokens and bind the socket: everything that can
    refuse, before anything is served. RoostError says what is wrong, in one line."""
    host, port = rules.parse_bind(bind)
    rules.check_bind(host, allow_remote)
    watch, typing = _tokens(home, allow_typing)
    sock = listen(host, port)
    real = sock.getsockname()[1]
    sessions = auth.Sessions(watch, typing)
    config = Config(host, real, allow_remote, sessions, xterm_folder(), in_service)
    return Setup(config, sock, login_url(host, real, typing or watch))


def login_url(host: str, port: int, token: str) -> str:
    return f"http://{rules.url_host(host, port)}/login?token={token}"


def xterm_folder() -> Path | None:
    """xterm.js as install.sh put it (npm, pinned): $ROOST_WEB_ASSETS, else beside this venv."""
    base = os.environ.get("ROOST_WEB_ASSETS") or os.path.join(sys.prefix, "share", "roost-web")
    folder = Path(base) / "node_modules" / "@xterm" / "xterm"
    return folder if (folder / "lib" / "xterm.js").is_file() else None


class Apps(threading.local):
    """One App per worker thread, opened at its first use."""

    app: App | None = None

    def get(self) -> App:
        if self.app is None:
            self.app = open_app()
        return self.app


def build(config: Config) -> Starlette:
    apps, hub = Apps(), feed.Hub()

    async def call(fn: Callable[..., T], *args: Any) -> T:
        return await run_in_threadpool(lambda: fn(apps.get(), *args))

    remote = HostCache(lambda: call(host_views))  # ssh in a worker thread, never on the loop

    def _guard(
        request: Request, post: bool = False, device: auth.Session | None = None
    ) -> auth.Session | Response:
        host = request.headers.get("host")
        if not rules.host_allowed(host, config.port, config.host, config.allow_remote):
            return Response("unknown Host\n", status_code=403)
        found = config.sessions.get(request.cookies.get(auth.COOKIE)) or device
        if found is None:
            return HTMLResponse(
                pages.message("Log in", "Open the URL that roost web --print-url gives."),
                status_code=401,
            )
        if post and not (
            rules.same_origin(request.headers.get("origin"), host)
            and config.sessions.csrf_ok(found, request.headers.get(auth.CSRF_HEADER))
        ):
            return JSONResponse({"error": "cross-site request refused"}, status_code=403)
        return found

    async def guard(request: Request, post: bool = False) -> auth.Session | Response:
        """_guard, with a paired phone's device cookie (push/) as good as a session: looked up
        in the store at each request, so a revoked device is refused at once."""
        device = None
        if config.sessions.get(request.cookies.get(auth.COOKIE)) is None and rules.host_allowed(
            request.headers.get("host"), config.port, config.host, config.allow_remote
        ):
            device = await phone.device_session(request, call)
        return _guard(request, post, device)

    async def login(request: Request) -> Response:
        if not rules.host_allowed(
            request.headers.get("host"), config.port, config.host, config.allow_remote
        ):
            return Response("unknown Host\n", status_code=403)
        made = config.sessions.login(request.query_params.get("token", ""))
        if made is None:
            return Response("wrong or missing token\n", status_code=403)
        response = RedirectResponse("/", status_code=303)  # the token leaves the address bar
        response.set_cookie(auth.COOKIE, made[0], httponly=True, samesite="strict", path="/")
        return response

    async def fleet(request: Request) -> Response:
        found = await guard(request)
        if isinstance(found, Response):
            return found
        rows, views = await call(actions.rows), await remote.get()
        if request.query_params.get("part") == "section":
            return HTMLResponse(pages.fleet_section(rows, views))
        return HTMLResponse(pages.fleet(rows, found.csrf, views))

    async def events(request: Request) -> Response:
        found = await guard(request)
        if isinstance(found, Response):
            return found
        return StreamingResponse(feed.events(request, hub), media_type="text/event-stream")

    async def agent_page(request: Request) -> Response:
        found = await guard(request)
        if isinstance(found, Response):
            return found
        try:
            row, screen = await call(actions.agent, request.path_params["name"])
        except (RoostError, TmuxError) as exc:
            return HTMLResponse(pages.message("Not found", str(exc)), status_code=404)
        html_screen = rules.screen_html(screen)
        asked = actions.question(row, screen)
        tabs = await call(actions.tab_names)
        return HTMLResponse(pages.agent(row, html_screen, asked, tabs, found.csrf))

    async def changes_page(request: Request) -> Response:
        found = _guard(request)
        if isinstance(found, Response):
            return found
        file = request.query_params.get("file") or None
        try:
            d, comments = await call(actions.changes, request.path_params["name"], file)
        except RoostError as exc:  # no such agent, no git checkout, a file outside it
            return HTMLResponse(pages.message("No changes to show", str(exc)), status_code=404)
        return HTMLResponse(changes.page_of(d, comments, found.csrf, file is not None))

    async def search_page(request: Request) -> Response:
        found = _guard(request)
        if isinstance(found, Response):
            return found
        query = request.query_params.get("q", "")[:1000]
        if not query.strip():
            return HTMLResponse(pages.search("", [], found.csrf))
        try:
            hits = await call(actions.search, query)
        except RoostError as exc:  # a query FTS5 cannot read: said, not a traceback
            return HTMLResponse(pages.search(query, [], found.csrf, str(exc)), status_code=400)
        return HTMLResponse(pages.search(query, hits, found.csrf))

    async def agent_live(request: Request) -> Response:
        found = await guard(request)
        if isinstance(found, Response):
            return found
        name = request.path_params["name"]
        return StreamingResponse(feed.live(request, name, call), media_type="text/event-stream")

    async def act(request: Request) -> Response:
        found = await guard(request, post=True)
        if isinstance(found, Response):
            return found
        name, action = request.path_params["name"], request.path_params["action"]
        try:
            body = await request.json()
        except ValueError:
            body = {}
        try:
            return JSONResponse(
                await call(actions.act, name, action, body if isinstance(body, dict) else {})
            )
        except (RoostError, TmuxError) as exc:  # TmuxError: e.g. its window closed meanwhile
            return JSONResponse({"error": str(exc)}, status_code=400)

    async def terminal_page(request: Request) -> Response:
        found = await guard(request)
        if isinstance(found, Response):
            return found
        name = request.path_params["name"]
        try:
            await call(actions.agent, name)
        except RoostError as exc:
            return HTMLResponse(pages.message("Not found", str(exc)), status_code=404)
        return HTMLResponse(
            pages.terminal(name, found.csrf, found.typing, config.xterm is not None)
        )

    async def terminal_ws(ws: WebSocket) -> None:
        host = ws.headers.get("host")
        found = config.sessions.get(ws.cookies.get(auth.COOKIE))
        if found is None and rules.host_allowed(
            host, config.port, config.host, config.allow_remote
        ):
            found = await phone.device_session(ws, call)  # a paired phone watches, never types
        if (
            found is None
            or not rules.host_allowed(host, config.port, config.host, config.allow_remote)
            or not rules.same_origin(ws.headers.get("origin"), host)
        ):
            await ws.close(code=1008)  # before accept: the handshake gets 403
            return
        try:
            argv, env = await call(term.attach_argv, ws.path_params["name"], found.typing)
        except RoostError:
            await ws.close(code=1008)
            return
        await ws.accept()
        await term.bridge(ws, argv, env, typing=found.typing)

    async def static(request: Request) -> Response:
        name = request.path_params["file"]
        if name not in ("app.js", "style.css"):
            return Response(status_code=404)
        return FileResponse(STATIC / name)

    async def xterm(request: Request) -> Response:
        name = request.path_params["file"]
        if config.xterm is None or name not in ("xterm.js", "xterm.css"):
            return Response(status_code=404)
        return FileResponse(config.xterm / ("lib" if name.endswith(".js") else "css") / name)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        hub.start(asyncio.get_running_loop(), config.in_service)
        # the hosts' changes reach open pages as an event does (they fetch their fleet again)
        following = asyncio.create_task(
            remote.follow(lambda: bool(hub.queues), lambda: hub.fan_out({"kind": "hosts"}))
        )
        yield
        following.cancel()

    routes = [
        Route("/", fleet),
        Route("/login", login),
        Route("/events", events),
        Route("/a/{name}", agent_page),
        Route("/a/{name}/live", agent_live),
        Route("/a/{name}/changes", changes_page),
        Route("/search", search_page),
        Route("/a/{name}/term", terminal_page),
        Route("/a/{name}/{action}", act, methods=["POST"]),
        WebSocketRoute("/a/{name}/ws", terminal_ws),
        Route("/static/{file}", static),
        Route("/xterm/{file}", xterm),
        *phone.routes(config, call, guard),  # a phone: the app, pairing, push (issue 40)
    ]
    return Starlette(routes=routes, lifespan=lifespan, middleware=[Middleware(SecurityHeaders)])


class SecurityHeaders:
    """SECURITY_HEADERS on every HTTP response (plain ASGI: streamed responses stay streamed)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                extra = [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, with_headers)


# ---- serving ------------------------------------------------------------------------------------
def listen(host: str, port: int) -> socket.socket:
    """The listening socket (port 0: one the system picks), bound before the URL is printed."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise RoostError(f"cannot listen on {rules.url_host(host, port)}: {exc.strerror}") from None
    sock.listen(64)
    return sock


def server_of(config: Config) -> uvicorn.Server:
    """uvicorn with roost's bounds (system/admission.py): connections per server and per peer,
    a deadline for a request's headers, a request body's size."""
    gate = admission.Gate()
    return uvicorn.Server(
        uvicorn.Config(
            admission.asgi(build(config), gate),
            http=admission.protocol(AutoHTTPProtocol, gate),
            log_level="warning",
            ws="websockets-sansio",
            lifespan="on",
            access_log=False,
            timeout_graceful_shutdown=2,
        )
    )


def serve(setup: Setup) -> None:
    """`roost web`: in the foreground until interrupted."""
    print(f"roost web: {setup.url}", flush=True)
    server_of(setup.config).run(sockets=[setup.sock])


def start(setup: Setup, timeout: float = 10.0) -> Callable[[], None]:
    """In a thread of this process (the roost service's component); returns its stop."""
    srv = server_of(setup.config)
    thread = threading.Thread(
        target=srv.run, kwargs={"sockets": [setup.sock]}, name="roost-web", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + timeout
    while not srv.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            srv.should_exit = True
            raise RoostError("roost web did not start")
        time.sleep(0.01)

    def stop() -> None:
        srv.should_exit = True
        thread.join(10)

    return stop
