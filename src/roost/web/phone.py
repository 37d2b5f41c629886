"""roost web on a phone (issue 40): the installable app (manifest, icons, service worker), pairing
a device from `roost web pair`'s link, its push subscription, what its page is looking at, and
answers from a notification's buttons (push/operations.py does the work).

A paired device proves itself with its own cookie (`roost_device`), checked against the store at
every request (a revoked one is refused at once); its CSRF token is derived from its secret.
POST /push/answer ({capability, choice} or, from a notification's reply field, {capability,
text}) is the one request without a session's CSRF token: the one-time capability it carries
is the proof (ntfy's buttons send no cookie), and its Host and any Origin are checked as
every request's are.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.background import BackgroundTask
from starlette.requests import HTTPConnection, Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from roost.core import web as rules
from roost.core.errors import RoostError
from roost.push import operations as push
from roost.push import rules as phone_rules
from roost.web import auth, pages

STATIC = Path(__file__).parent / "static"
YEAR = 365 * 24 * 3600
Call = Callable[..., Awaitable[Any]]
Guard = Callable[..., Awaitable["auth.Session | Response"]]


async def device_session(request: HTTPConnection, call: Call) -> auth.Session | None:
    """The session a paired device's cookie gives (None: no cookie, or not a live device's):
    it may watch, send and answer as the watch token may, never type into a terminal."""
    cookie = request.cookies.get(phone_rules.DEVICE_COOKIE)
    parsed = phone_rules.parse_cookie(cookie)
    if parsed is None:
        return None
    device = await call(push.device_of, cookie)
    if device is None:
        return None
    return auth.Session(phone_rules.csrf_of(parsed[1]), False, device)


def routes(config: Any, call: Call, guard: Guard) -> list[Route]:
    def host_ok(request: Request) -> bool:
        return rules.host_allowed(
            request.headers.get("host"), config.port, config.host, config.allow_remote
        )

    async def manifest(request: Request) -> Response:
        # fetched without credentials by browsers: the Host check only (it holds no secret)
        if not host_ok(request):
            return Response("unknown Host\n", status_code=403)
        return JSONResponse(phone_rules.manifest(), media_type="application/manifest+json")

    async def icon(request: Request) -> Response:
        if not host_ok(request):
            return Response("unknown Host\n", status_code=403)
        size = int(request.path_params["size"])
        if size not in phone_rules.ICON_SIZES:
            return Response(status_code=404)
        return Response(phone_rules.png_icon(size), media_type="image/png")

    async def worker(request: Request) -> Response:
        if not host_ok(request):
            return Response("unknown Host\n", status_code=403)
        return FileResponse(STATIC / "sw.js", media_type="text/javascript")

    async def pair(request: Request) -> Response:
        if not host_ok(request):
            return Response("unknown Host\n", status_code=403)
        code = request.query_params.get("code", "")
        try:
            made = await call(
                push.pair, code, request.query_params.get("name"), request.headers.get("user-agent")
            )
        except RoostError as exc:
            return HTMLResponse(pages.message("Not paired", str(exc)), status_code=403)
        response = RedirectResponse("/", status_code=303)  # the code leaves the address bar
        response.set_cookie(
            phone_rules.DEVICE_COOKIE,
            made.cookie,
            max_age=YEAR,
            httponly=True,
            samesite="strict",
            path="/",
        )
        return response

    async def key(request: Request) -> Response:
        found = await guard(request)
        if isinstance(found, Response):
            return found
        try:
            public = await call(lambda app: push.public_key(app.paths.home))
        except RoostError as exc:
            return JSONResponse({"error": str(exc)}, status_code=500)
        subscribed = found.device is not None and await call(push.subscribed, found.device)
        return JSONResponse(
            {"key": public, "device": found.device is not None, "subscribed": subscribed}
        )

    async def subscribe(request: Request) -> Response:
        found = await guard(request, post=True)
        if isinstance(found, Response):
            return found
        if found.device is None:
            return JSONResponse(
                {"error": "pair this browser first: roost web pair"}, status_code=403
            )
        try:
            await call(push.subscribe, found.device, await _body(request))
        except RoostError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        return JSONResponse({"subscribed": True})

    async def viewing(request: Request) -> Response:
        found = await guard(request, post=True)
        if isinstance(found, Response):
            return found
        if found.device is None:
            return JSONResponse({"viewing": None})
        body = await _body(request)
        name = body.get("agent") if isinstance(body, dict) else None
        name = name if isinstance(name, str) and 0 < len(name) <= 200 else None
        await call(push.viewing, found.device, name)
        return JSONResponse({"viewing": name})

    async def answer(request: Request) -> Response:
        host = request.headers.get("host")
        if not host_ok(request):
            return Response("unknown Host\n", status_code=403)
        origin = request.headers.get("origin")
        if origin is not None and not rules.same_origin(origin, host):
            return JSONResponse({"error": "cross-site request refused"}, status_code=403)
        cookie = request.cookies.get(phone_rules.DEVICE_COOKIE)
        device = await call(push.device_of, cookie) if cookie else None
        if cookie and device is None:  # a revoked or forged device's cookie: not its answer
            device = "!"  # matches no capability's device
        body = await _body(request)
        body = body if isinstance(body, dict) else {}
        done = await call(
            push.answer, body.get("capability"), body.get("choice"), device, body.get("text")
        )
        tell = BackgroundTask(call, push.receipt, done)
        if done.refused is not None:
            return JSONResponse({"applied": False, "error": done.refused}, 409, background=tell)
        said = phone_rules.receipt(done.agent, done.choice, None, done.shows)["title"]
        return JSONResponse(
            {"applied": True, "choice": done.choice, "status": done.shows, "receipt": said},
            background=tell,
        )

    return [
        Route("/manifest.webmanifest", manifest),
        Route("/icon-{size:int}.png", icon),
        Route("/sw.js", worker),
        Route("/pair", pair),
        Route("/push/key", key),
        Route("/push/subscribe", subscribe, methods=["POST"]),
        Route("/push/viewing", viewing, methods=["POST"]),
        Route("/push/answer", answer, methods=["POST"]),
    ]


async def _body(request: Request) -> object:
    try:
        return await request.json()
    except ValueError:
        return None
