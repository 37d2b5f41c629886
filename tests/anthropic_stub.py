"""A small stand-in for the Anthropic Messages API, good enough for the real Claude Code CLI.

Stdlib only: an ``http.server`` in a daemon thread on 127.0.0.1, port 0. Point Claude Code at it
with ``ANTHROPIC_BASE_URL=<stub.url>`` and any dummy ``ANTHROPIC_API_KEY``.

What it answers:

* ``POST /v1/messages`` (``?beta=true`` too; Claude Code 2.1.332 always sends it):
  ``stub reply: <last user text>`` (Claude Code's ``<system-reminder>`` blocks skipped),
  streamed as SSE when ``"stream": true`` (message_start, content_block_start, ping, two
  text_delta content_block_deltas, content_block_stop, message_delta with stop_reason end_turn
  and usage, message_stop), else one JSON message.
  - a turn that returns a tool's output gets ``stub reply: tool result: <output>``;
  - a request asking for structured output (``output_config.format`` json_schema: session
    titles) gets a JSON instance of the schema, e.g. ``{"title": "stub title"}``;
  - a request forcing a tool (``tool_choice`` type ``tool``) gets a ``tool_use`` of it;
  - ``queue_reply(text)`` / ``queue_tool_use(name, input)`` script the next main turns.
* ``POST /v1/messages/count_tokens``: ``{"input_tokens": <rough count>}``.
* ``GET /v1/models``: one model list page. ``GET|HEAD /api/hello`` (the CLI's connectivity
  check, sent only when nonessential traffic is allowed): 200.
* anything else: logged in ``stub.unknown`` and answered 404 with an API-style error body, as the
  real API does for paths it does not know.

Every request is recorded (method, path, query, headers, body json, kind, reply) in
``stub.requests``. A *main* request is a conversation turn (it carries the agent's tools); a
*side* one is anything else on /v1/messages (title generation with the small model, ...).
``stub.set_delay(seconds)`` holds each later main reply that long before anything is sent, so a
test can watch the busy state; ``stub.release()`` ends the delay early.
``stub.fail_with(status, error_type, message)`` answers every later ``/v1/messages`` request
with that HTTP error and the API's error body (401 ``authentication_error``, 429
``rate_limit_error``, 500 ``api_error``, ...) until ``stub.fail_with(None)``; ``stub.failures``
counts the requests it failed.

    with running_stub() as stub:
        env["ANTHROPIC_BASE_URL"] = stub.url
        ...
        stub.set_delay(30)          # the next turn stays busy ...
        ...
        stub.release()              # ... until the test has seen it
        assert stub.user_texts()[-1] == "hello"
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from llm_stub_server import REPLY_PREFIX, Exchange, LoopbackStub, Request, sample_of


def _text_of(content: Any) -> list[str]:
    """The text blocks of a message's content (a string or a list of blocks)."""
    if isinstance(content, str):
        return [content]
    texts: list[str] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                texts.append(str(block.get("text", "")))
    return texts


def last_user_text(body: dict[str, Any]) -> str:
    """The last thing the user typed in a Messages request, without Claude Code's
    ``<system-reminder>`` blocks and other injected wrappers."""
    for message in reversed(body.get("messages") or []):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        texts = [
            t
            for t in _text_of(message.get("content"))
            if t.strip() and not t.lstrip().startswith("<")
        ]
        if texts:
            return texts[-1].strip()
    return ""


def last_tool_result(body: dict[str, Any]) -> str | None:
    """The text of a ``tool_result`` block in the last message, when the last message is the
    client returning a tool's output (None otherwise)."""
    messages = body.get("messages") or []
    if not messages or not isinstance(messages[-1], dict) or messages[-1].get("role") != "user":
        return None
    content = messages[-1].get("content")
    if not isinstance(content, list):
        return None
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            inner = block.get("content")
            texts = _text_of(inner) if not isinstance(inner, str) else [inner]
            return " ".join(texts).strip()
    return None


def structured_format(body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request asks its answer to follow, if any."""
    for holder in (body.get("output_config"), body):
        fmt = holder.get("format") if isinstance(holder, dict) else None
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            return fmt.get("schema") or {}
    return None


def is_main_request(body: dict[str, Any]) -> bool:
    """A conversation turn (carries the agent's tools) rather than a side call (title, topic,
    quota check, ...)."""
    return bool(body.get("tools"))


def _usage(input_tokens: int, output_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _rough_tokens(body: Any) -> int:
    return max(1, len(json.dumps(body)) // 4)


class AnthropicStub(LoopbackStub):
    """The running stand-in. Use :func:`running_stub` to get one."""

    name = "anthropic-stub"
    methods = ("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH")

    def __init__(self) -> None:
        super().__init__()
        self._script: list[dict[str, Any]] = []
        self._failure: tuple[int, str, str] | None = None
        self._failure_headers: dict[str, str] = {}
        self.failures = 0
        self.reply_for = self.default_reply

    # -- public ---------------------------------------------------------------------------------

    def fail_with(
        self,
        status: int | None,
        error_type: str = "api_error",
        message: str = "Internal server error",
        headers: dict[str, str] | None = None,
    ) -> None:
        """Answer every later ``/v1/messages`` request (main and side) with HTTP ``status`` and
        the API's error body, as the real API does (``None`` answers normally again), with
        ``headers`` too (a subscription's limit: ``anthropic-ratelimit-unified-*``)."""
        with self._lock:
            self._failure = None if status is None else (int(status), error_type, message)
            self._failure_headers = dict(headers or {})

    def _failing(self) -> tuple[int, str, str] | None:
        with self._lock:
            if self._failure is not None:
                self.failures += 1
            return self._failure

    def queue_reply(self, text: str) -> None:
        """Answer the next main request (after any queued before) with ``text``."""
        with self._lock:
            self._script.append({"type": "text", "text": text})

    def queue_tool_use(
        self, name: str, tool_input: dict[str, Any], when: str | None = None, again: bool = False
    ) -> None:
        """Answer the next main request (after any queued before) by calling tool ``name``,
        e.g. ``queue_tool_use("Bash", {"command": "echo hi", "description": "Say hi"})`` to make
        Claude Code ask for permission. The turn that returns the tool's result gets the default
        reply, ``stub reply: tool result: <output>``. ``when``: only a request whose last user
        text holds it (a main request Claude Code makes by itself meanwhile never takes it).
        ``again``: every such request gets the call until one brings a tool's result, as a
        model would answer the same question again: Claude Code asks twice now and then on a
        loaded machine (a non-streaming fallback after a stream it found short)."""
        with self._lock:
            block: dict[str, Any] = {"type": "tool_use", "name": name, "input": tool_input}
            block |= {"_when": when} if when is not None else {}
            self._script.append(block | ({"_again": True} if again else {}))

    @staticmethod
    def default_reply(body: dict[str, Any]) -> str:
        result = last_tool_result(body)
        if result is not None:
            return f"{REPLY_PREFIX}tool result: {result[:200]}"
        return REPLY_PREFIX + last_user_text(body)

    def _next_block(self, req: Request, body: dict[str, Any]) -> dict[str, Any]:
        """The content block to answer ``body`` with."""
        choice = body.get("tool_choice") or {}
        if isinstance(choice, dict) and choice.get("type") == "tool" and choice.get("name"):
            schema = next(
                (
                    t.get("input_schema")
                    for t in body.get("tools") or []
                    if isinstance(t, dict) and t.get("name") == choice["name"]
                ),
                None,
            )
            tool_input = sample_of(schema) if schema else {}
            return {
                "type": "tool_use",
                "name": choice["name"],
                "input": tool_input if isinstance(tool_input, dict) else {},
            }
        schema = structured_format(body)
        if schema is not None:
            return {"type": "text", "text": json.dumps(sample_of(schema))}
        if req.kind == "main":
            said, answered = last_user_text(body), last_tool_result(body) is not None
            with self._lock:
                if answered:  # the call was made: asking again is over
                    self._script = [s for s in self._script if not s.get("_again")]
                index = next(
                    (i for i, s in enumerate(self._script) if s.get("_when", said) in said), None
                )
                scripted = None if index is None else self._script[index]
                if index is not None and not self._script[index].get("_again"):
                    self._script.pop(index)
            if scripted is not None:
                return {k: v for k, v in scripted.items() if not k.startswith("_")}
        return {"type": "text", "text": self.reply_for(body)}

    def messages(self, kind: str | None = None) -> list[Request]:
        """The ``/v1/messages`` requests seen so far (``kind``: "main" or "side")."""
        with self._lock:
            return [
                r
                for r in self.requests
                if r.kind in ("main", "side") and (kind is None or r.kind == kind)
            ]

    def user_texts(self) -> list[str]:
        """The last user text of every main request, in order."""
        return [last_user_text(r.body) for r in self.messages("main")]

    # -- the API ------------------------------------------------------------------------------

    def response_headers(self) -> dict[str, str]:
        return {"request-id": f"req_stub_{uuid.uuid4().hex[:16]}"}

    def not_found(self, ex: Exchange) -> None:
        ex.req.kind = "unknown"
        ex.record()
        ex.json(
            404,
            {
                "type": "error",
                "error": {"type": "not_found_error", "message": f"Not found: {ex.target}"},
            },
        )

    def route(self, ex: Exchange) -> None:
        req, body = ex.req, ex.req.body
        # The body only counts where the API reads one.
        if req.method not in ("POST", "PUT", "PATCH"):
            req.body = body = None
        if req.method == "POST" and req.path == "/v1/messages" and isinstance(body, dict):
            req.kind = "main" if is_main_request(body) else "side"
            ex.record()  # seen at once, while its answer may be held
            failure = self._failing()
            if failure is not None:
                status, error_type, message = failure
                ex.json(
                    status,
                    {"type": "error", "error": {"type": error_type, "message": message}},
                    self._failure_headers,
                )
            else:
                self._messages(ex, body)
        elif req.method == "POST" and req.path == "/v1/messages/count_tokens":
            req.kind = "count_tokens"
            ex.record()
            ex.json(200, {"input_tokens": _rough_tokens(body)})
        elif req.method == "GET" and req.path == "/v1/models":
            req.kind = "models"
            ex.record()
            ex.json(
                200,
                {
                    "data": [
                        {
                            "type": "model",
                            "id": "claude-sonnet-4-5",
                            "display_name": "Claude Sonnet 4.5",
                            "created_at": "2025-09-29T00:00:00Z",
                        }
                    ],
                    "has_more": False,
                    "first_id": "claude-sonnet-4-5",
                    "last_id": "claude-sonnet-4-5",
                },
            )
        elif req.method in ("GET", "HEAD") and req.path == "/api/hello":
            # Claude Code's connectivity check (sent unless nonessential traffic is disabled).
            req.kind = "hello"
            ex.record()
            ex.json(200, {"message": "hello"})
        else:
            self.not_found(ex)

    def _messages(self, ex: Exchange, body: dict[str, Any]) -> None:
        req = ex.req
        model = str(body.get("model") or "claude-sonnet-4-5")
        msg_id = f"msg_stub_{uuid.uuid4().hex[:20]}"
        in_tokens = _rough_tokens(body.get("messages"))
        block = self._next_block(req, body)
        if block["type"] == "tool_use":
            block["id"] = f"toolu_stub_{uuid.uuid4().hex[:20]}"
            text = ""
            stop_reason = "tool_use"
        else:
            text = block["text"]
            stop_reason = "end_turn"
        req.reply = text
        out_tokens = max(1, len(text) // 4)
        req.usage = {"id": msg_id, "model": model, **_usage(in_tokens, out_tokens)}
        if req.kind == "main":
            self.wait_delay()
        if self._stopping.is_set():
            return
        if not body.get("stream"):
            ex.json(
                200,
                {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [block],
                    "stop_reason": stop_reason,
                    "stop_sequence": None,
                    "usage": _usage(in_tokens, out_tokens),
                },
            )
            return
        ex.start_stream()

        def event(name: str, data: dict[str, Any]) -> None:
            ex.event(data, name)

        event(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": _usage(in_tokens, 1),
                },
            },
        )
        if block["type"] == "text":
            event(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            event("ping", {"type": "ping"})
            # Two deltas, to exercise the client's accumulation.
            half = len(text) // 2
            for piece in (text[:half], text[half:]):
                if piece:
                    event(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": 0,
                            "delta": {"type": "text_delta", "text": piece},
                        },
                    )
        else:
            event(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {
                        "type": "tool_use",
                        "id": block["id"],
                        "name": block["name"],
                        "input": {},
                    },
                },
            )
            event(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {
                        "type": "input_json_delta",
                        "partial_json": json.dumps(block["input"]),
                    },
                },
            )
        event("content_block_stop", {"type": "content_block_stop", "index": 0})
        event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": out_tokens},
            },
        )
        event("message_stop", {"type": "message_stop"})


@contextmanager
def running_stub() -> Iterator[AnthropicStub]:
    """Start the stand-in on 127.0.0.1 (a free port) for the duration of the block."""
    stub = AnthropicStub()
    stub.start()
    try:
        yield stub
    finally:
        stub.stop()


if __name__ == "__main__":  # a manual run: python tests/anthropic_stub.py
    with running_stub() as s:
        print(s.url, flush=True)
        try:
            while True:
                time.sleep(1)
                for r in s.unknown:
                    print("unknown:", r.method, r.path, flush=True)
                s.unknown.clear()
        except KeyboardInterrupt:
            pass
