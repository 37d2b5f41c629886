"""What the local model-API stand-ins share: one request handler, one :class:`Request` record
and one :class:`Exchange` to answer through. Every stand-in (tests/anthropic_stub.py,
tests/openai_responses_stub.py, tests/gemini_stub.py, tests/chat_completions_stub.py) is a
:class:`LoopbackStub` that answers its API's paths in :meth:`LoopbackStub.route`;
tests/gemini_stub.py and tests/chat_completions_stub.py build on :class:`StubServer`, which adds
scripted answers and API errors (:meth:`StubServer.fail_with`).

Stdlib only: an ``http.server`` in a daemon thread on 127.0.0.1, port 0. This base records
every request and holds replies while a test watches the busy state (:meth:`set_delay`,
:meth:`release`).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

REPLY_PREFIX = "stub reply: "


@dataclass
class Request:
    """One request a stand-in received."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    time: float = field(default_factory=time.time)
    kind: str = ""  # the stand-in's name for it: "turn", "router", "unknown", ...
    reply: str | None = None  # the text answered, for a model call
    usage: dict[str, Any] | None = None  # the usage answered with it (anthropic_stub.py)
    status: int = 200


@dataclass(frozen=True)
class Failure:
    """An API error to answer model calls with: the HTTP status and the API's error body."""

    status: int
    body: dict[str, Any]


def sample_of(schema: Any, name: str = "value") -> Any:
    """A small instance of a JSON schema: what a call that asks for structured output gets."""
    if not isinstance(schema, dict):
        return f"stub {name}"
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return sample_of(schema[key][0], name)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if str(k).lower() != "null"), "null")
    kind = str(kind).lower() if kind else kind
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        required = schema.get("required") or list(props)
        return {key: sample_of(props.get(key), key) for key in required}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return f"stub {name}"


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (the CLI exiting, an interrupted turn) is not an error."""
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class Exchange:
    """One request being answered: what the stand-ins' routes write through."""

    def __init__(self, stub: LoopbackStub, handler: BaseHTTPRequestHandler, req: Request) -> None:
        self.stub = stub
        self.handler = handler
        self.req = req
        self._recorded = False

    @property
    def target(self) -> str:
        """The request's path as sent (with its query), for error messages."""
        return self.handler.path

    def record(self) -> None:
        """Add the request to ``stub.requests`` now (once). Done before the first byte of an
        answer, so a client that has its answer finds its request recorded; a route whose
        answer may be held calls it earlier, so a test sees the request while it waits."""
        if not self._recorded:
            self._recorded = True
            self.stub._record(self.req)

    def json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.req.status = status
        self.record()
        h = self.handler
        h.send_response(status)
        for key, value in (headers or {}).items():
            h.send_header(key, value)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        self._own_headers()
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(data)

    def start_stream(self) -> None:
        self.record()
        h = self.handler
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Connection", "close")
        self._own_headers()
        h.end_headers()
        h.close_connection = True

    def _own_headers(self) -> None:
        for key, value in self.stub.response_headers().items():
            self.handler.send_header(key, value)

    def event(self, data: Any, name: str | None = None) -> None:
        """One server-sent event (``data: <json>``, a string as it is)."""
        text = data if isinstance(data, str) else json.dumps(data)
        head = f"event: {name}\n" if name else ""
        self.handler.wfile.write(f"{head}data: {text}\n\n".encode())
        self.handler.wfile.flush()


class LoopbackStub:
    """What every stand-in shares: a threaded HTTP server on 127.0.0.1 (started and stopped
    with ``with``), one request handler, the requests it saw, and a delay that holds replies
    until released. Subclasses answer their API in :meth:`route`."""

    name = "stub"
    # The HTTP methods the stand-in answers; any other gets http.server's own 501.
    methods: tuple[str, ...] = ("GET", "HEAD", "POST")

    def __init__(self, port: int = 0) -> None:
        self.requests: list[Any] = []
        self.unknown: list[Any] = []
        self._lock = threading.Lock()
        self._delay = 0.0
        self._release = threading.Event()
        self._stopping = threading.Event()
        self._server = QuietServer(("127.0.0.1", port), self._handler_class())
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            daemon=True,
            name=self.name,
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def set_delay(self, seconds: float) -> None:
        """Hold every later turn's reply ``seconds`` before its text (0 turns it off)."""
        with self._lock:
            self._delay = float(seconds)
            self._release.clear()

    def release(self) -> None:
        """End the current (and any later) delay now; ``set_delay`` arms it again."""
        self._release.set()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait_delay(self) -> bool:
        """Hold a turn while a delay is armed; False when the stand-in is stopping."""
        with self._lock:
            delay = self._delay
        if delay > 0:
            self._release.wait(delay)
        return not self._stopping.is_set()

    # -- for subclasses -------------------------------------------------------------------------

    def route(self, ex: Exchange) -> None:
        """Answer ``ex.req`` (set ``ex.req.kind``); the default knows no path."""
        self.not_found(ex)

    def not_found(self, ex: Exchange) -> None:
        ex.req.kind = "unknown"
        ex.json(404, {"error": {"code": 404, "message": f"Not found: {ex.req.path}"}})

    def response_headers(self) -> dict[str, str]:
        """Headers the API sends with every answer (beyond the content's own)."""
        return {}

    # -- internals ------------------------------------------------------------------------------

    def _record(self, req: Any) -> None:
        with self._lock:
            self.requests.append(req)
            if req.kind == "unknown":
                self.unknown.append(req)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            server_version = f"{stub.name}/1"

            def log_message(self, format: str, *args: Any) -> None:
                pass  # everything is in stub.requests

            def _read_body(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if not raw:
                    return None
                if (self.headers.get("Content-Encoding") or "").lower() == "zstd":
                    return raw  # codex compresses only over its websocket transport: kept raw
                try:
                    return json.loads(raw)
                except ValueError:
                    return raw.decode("utf-8", "replace")

            def _handle(self, method: str) -> None:
                if method not in stub.methods:  # as http.server answers a method it lacks
                    self.send_error(HTTPStatus.NOT_IMPLEMENTED, f"Unsupported method ({method!r})")
                    return
                split = urlsplit(self.path)
                req = Request(
                    method=method,
                    path=split.path.rstrip("/") or "/",
                    query=parse_qs(split.query),
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=self._read_body(),
                )
                ex = Exchange(stub, self, req)
                try:
                    stub.route(ex)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (an interrupted turn): nothing to answer
                finally:
                    ex.record()

            def do_GET(self) -> None:
                self._handle("GET")

            def do_HEAD(self) -> None:
                self._handle("HEAD")

            def do_POST(self) -> None:
                self._handle("POST")

            def do_PUT(self) -> None:
                self._handle("PUT")

            def do_DELETE(self) -> None:
                self._handle("DELETE")

            def do_PATCH(self) -> None:
                self._handle("PATCH")

        return Handler


class StubServer(LoopbackStub):
    """A running stand-in; subclasses answer their API in :meth:`route`."""

    def __init__(self) -> None:
        super().__init__()
        self._failure: Failure | None = None
        self._failing: tuple[str, ...] = ()  # the request kinds the failure applies to
        self._failing_after: str | None = None  # ... and only the turn that ends with this text
        self._script: list[Any] = []  # the next turns' answers: texts, or the stand-in's own
        self.reply_for: Callable[[str], str] = lambda text: REPLY_PREFIX + text

    # -- public ---------------------------------------------------------------------------------

    def queue_reply(self, answer: Any) -> None:
        """Answer the next turn (after any queued before) with ``answer``: a text, or what the
        stand-in makes of it (a tool call, for one)."""
        with self._lock:
            self._script.append(answer)

    def fail_with(
        self, failure: Failure | None, kinds: tuple[str, ...] = (), after: str | None = None
    ) -> None:
        """Answer every later model call (of these kinds only, when given: "turn" for the
        conversation's model alone; only those whose last user text is `after`, when given: a
        call the CLI makes on its own meanwhile is answered) with this API error; None answers
        normally again."""
        with self._lock:
            self._failure, self._failing, self._failing_after = failure, kinds, after

    def of_kind(self, *kinds: str) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.kind in kinds]

    # -- for subclasses -------------------------------------------------------------------------

    def failure(self, kind: str, user_text: str | None = None) -> Failure | None:
        """The API error a model call of this kind (and last user text) gets, if any."""
        with self._lock:
            if self._failing and kind not in self._failing:
                return None
            if self._failing_after is not None and user_text != self._failing_after:
                return None
            return self._failure

    def next_answer(self, user_text: str) -> Any:
        """A turn's answer: the next scripted one, else :attr:`reply_for` of the user's text."""
        with self._lock:
            scripted = self._script.pop(0) if self._script else None
        return scripted if scripted is not None else self.reply_for(user_text)
