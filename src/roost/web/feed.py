"""roost web's pushed streams: the event log to every open page (Hub), and one agent's screen,
status and dialog choices while its page is open (server-sent events; pages never poll)."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.requests import Request

from roost.alerts.rules import edge_of
from roost.core import web as rules
from roost.core.errors import RoostError
from roost.core.events import Event
from roost.core.questions import Question
from roost.ops import stream
from roost.ops.root import open_app
from roost.tmux.protocol import TmuxError
from roost.web import actions

SCREEN_EVERY = 0.25  # seconds between two looks at an open agent page's pane (only while open)


class Hub:
    """The event log's stream (ops/stream.py, in a thread of its own) fanned out to every open
    page's queue: pushed, so a page never polls."""

    def __init__(self) -> None:
        self.queues: set[asyncio.Queue[dict[str, object]]] = set()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.after = 0  # the last event handed on: where a resumed stream starts

    def start(self, loop: asyncio.AbstractEventLoop, in_service: bool) -> None:
        self.loop = loop
        follow = threading.Thread(
            target=self._follow, args=(in_service,), name="roost-web-events", daemon=True
        )
        follow.start()

    def _follow(self, in_service: bool) -> None:
        app = open_app()
        self.after = app.store.last_event_id()
        # Foreground: start the service (pushed events); inside it, it runs already.
        start = not in_service
        while True:
            try:
                stream.follow(app, self.after, 1.0, self._publish, start_service=start)
            except Exception as exc:  # noqa: BLE001 - a stream that stopped would freeze every open page
                print(f"roost web: the event stream stopped ({exc}); resuming", file=sys.stderr)
                time.sleep(1.0)

    def _publish(self, event: Event) -> None:
        self.after = event.seq
        edge = edge_of(event, False)
        message = {**event.streamed(), "alert": edge or None}
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self.fan_out, message)

    def fan_out(self, message: dict[str, object]) -> None:
        """`message` to every open page (on the event loop)."""
        for q in self.queues:
            q.put_nowait(message)


def _sse_line(data: object) -> bytes:
    return f"data: {json.dumps(data)}\n\n".encode()


async def events(request: Request, hub: Hub) -> AsyncIterator[bytes]:
    q: asyncio.Queue[dict[str, object]] = asyncio.Queue()
    hub.queues.add(q)
    try:
        yield b": roost\n\n"  # the page knows the stream is open
        while not await request.is_disconnected():
            try:
                yield _sse_line(await asyncio.wait_for(q.get(), 15))
            except TimeoutError:
                yield b": keep-alive\n\n"
    finally:
        hub.queues.discard(q)


async def live(request: Request, name: str, call: Callable[..., Any]) -> AsyncIterator[bytes]:
    """The agent's screen, status and dialog choices, each time one changes."""
    last: dict[str, object] | None = None
    while not await request.is_disconnected():
        try:
            row, screen = await call(actions.agent, name)
        except RoostError as exc:
            yield _sse_line({"error": str(exc)})
            return
        except TmuxError:  # its pane went between the listing and the capture: look again
            await asyncio.sleep(SCREEN_EVERY)
            continue
        now = {
            "screen": rules.screen_html(screen),
            "status": row.get("status"),
            "question": question_json(actions.question(row, screen)),
        }
        if now != last:
            yield _sse_line(now)
            last = now
        await asyncio.sleep(SCREEN_EVERY)


def question_json(q: Question | None) -> dict[str, object] | None:
    """A waiting agent's question for its page: its words, its id (the page answers only
    that question), its choices as [key, label] pairs."""
    if q is None:
        return None
    return {"text": q.text, "id": q.fingerprint, "choices": [[c.key, c.label] for c in q.choices]}
