"""A small stand-in for the OpenAI Responses API, good enough for the real Codex CLI.

Stdlib only: an ``http.server`` in a daemon thread on 127.0.0.1, port 0. Codex reaches it through
a custom model provider in ``$CODEX_HOME/config.toml`` (tests/real_codex.py writes it):
``base_url = "<stub.url>/v1"``, ``wire_api = "responses"``, ``env_key``,
``supports_websockets = false``.

What it answers:

* ``POST /v1/responses`` with ``"stream": true``: an SSE stream of ``response.created``,
  ``response.output_item.added`` (an assistant message), ``response.output_text.delta`` (the text
  in two pieces), ``response.output_item.done`` and ``response.completed`` (with usage). Codex
  sends two per first turn: the turn itself (``kind`` "main", answered
  ``stub reply: <last user text>``) and a thread title (``kind`` "title": no tools, its answer
  follows a JSON schema with a ``title``; answered ``{"title": "Stub title"}``).
* ``GET /v1/models``: an empty model list. Anything else: recorded in ``stub.unknown``, 404.

Every request is recorded (method, path, headers, body, kind, reply) in ``stub.requests``.
``stub.set_delay(seconds)`` holds each later main reply that long before its first event, so a
test can watch the busy state; ``stub.release()`` ends the delay early. ``stub.fail_next(status,
message)`` answers the next main request with an HTTP error (an API error on codex's screen).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from llm_stub_server import REPLY_PREFIX, Exchange, LoopbackStub, Request

TITLE = "Stub title"


def input_texts(body: Any, role: str = "user") -> list[str]:
    """The texts of the ``role`` messages in a request's ``input``, in order."""
    texts: list[str] = []
    items = body.get("input") if isinstance(body, dict) else None
    if isinstance(items, str):
        return [items] if role == "user" else []
    for item in items or []:
        if not isinstance(item, dict) or item.get("role") != role:
            continue
        content = item.get("content")
        if isinstance(content, str):
            texts.append(content)
            continue
        for part in content or []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                texts.append(part["text"])
    return texts


def typed_user_texts(body: Any) -> list[str]:
    """The user's own messages in a request: codex also sends its environment and instructions
    as user messages (``<environment_context>``, ``# AGENTS.md`` ...), which are left out."""
    return [t for t in input_texts(body) if not t.lstrip().startswith(("<", "#"))]


def last_tool_output(body: Any) -> str | None:
    """The output of the last tool call in a request's ``input``, when the request carries one
    after the last user message (codex sends it back after running the tool)."""
    items = body.get("input") if isinstance(body, dict) else None
    for item in reversed(items if isinstance(items, list) else []):
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call_output":
            output = item.get("output")
            if isinstance(output, dict):
                output = output.get("content") or json.dumps(output)
            return str(output)
        if item.get("role") == "user":
            return None
    return None


def is_title_request(body: Any) -> bool:
    """Codex's side request that names the thread: no tools, and its answer must follow a JSON
    schema with a ``title``."""
    if not isinstance(body, dict) or body.get("tools"):
        return False
    fmt = (body.get("text") or {}).get("format") if isinstance(body.get("text"), dict) else None
    schema = fmt.get("schema") if isinstance(fmt, dict) else None
    return isinstance(schema, dict) and "title" in (schema.get("properties") or {})


class ResponsesStub(LoopbackStub):
    """The running stand-in. Use :func:`running_stub` to get one."""

    name = "responses-stub"
    methods = ("GET", "POST")

    def __init__(self, port: int = 0) -> None:
        super().__init__(port)
        self._failures: list[tuple[int, dict[str, Any]]] = []
        self._tool_calls: list[tuple[str, dict[str, Any], str | None]] = []

    # -- public ---------------------------------------------------------------------------------

    def fail_next(
        self, status: int, message: str, error_type: str = "invalid_request_error", **fields: Any
    ) -> None:
        """Answer the next main request with HTTP ``status`` and an API error body
        ``{"error": {"message", "type", ...fields}}`` (``error_type`` "usage_limit_reached"
        with a 429 is a usage limit)."""
        with self._lock:
            self._failures.append(
                (
                    status,
                    {"message": message, "type": error_type, "code": None, "param": None, **fields},
                )
            )

    def queue_tool_call(
        self, name: str, arguments: dict[str, Any], namespace: str | None = None
    ) -> None:
        """Answer the next main request by calling codex's tool ``name`` (a ``function_call``
        item), e.g. ``queue_tool_call("exec_command", {"cmd": "touch x", "sandbox_permissions":
        "require_escalated", "justification": "why"})`` to make codex ask for approval. The
        request that carries the tool's output gets the default reply."""
        with self._lock:
            self._tool_calls.append((name, arguments, namespace))

    def _tool_call(self) -> tuple[str, dict[str, Any], str | None] | None:
        with self._lock:
            return self._tool_calls.pop(0) if self._tool_calls else None

    def responses(self, kind: str | None = None) -> list[Request]:
        """The ``/v1/responses`` requests so far (``kind``: "main" or "title")."""
        with self._lock:
            return [
                r
                for r in self.requests
                if r.kind in ("main", "title") and (kind is None or r.kind == kind)
            ]

    def user_texts(self) -> list[str]:
        """The last typed user text of every main request, in order."""
        return [(typed_user_texts(r.body) or [""])[-1] for r in self.responses("main")]

    # -- internals --------------------------------------------------------------------------------

    def _failure(self) -> tuple[int, dict[str, Any]] | None:
        with self._lock:
            return self._failures.pop(0) if self._failures else None

    # -- the API ------------------------------------------------------------------------------

    def not_found(self, ex: Exchange) -> None:
        ex.req.kind = "unknown"
        ex.record()
        ex.json(
            404,
            {
                "error": {
                    "message": f"Not found: {ex.target}",
                    "type": "invalid_request_error",
                    "code": "not_found",
                }
            },
        )

    def route(self, ex: Exchange) -> None:
        req = ex.req
        if req.method != "POST":
            req.body = None  # the body only counts where the API reads one
        if req.method == "POST" and req.path == "/v1/responses" and isinstance(req.body, dict):
            req.kind = "title" if is_title_request(req.body) else "main"
            ex.record()  # seen at once, while its answer may be held
            self._responses(ex, req.body)
        elif req.method == "GET" and req.path == "/v1/models":
            req.kind = "models"
            ex.record()
            ex.json(200, {"object": "list", "data": [], "models": []})
        else:
            self.not_found(ex)

    def _responses(self, ex: Exchange, body: dict[str, Any]) -> None:
        req = ex.req
        if req.kind == "main":
            failure = self._failure()
            if failure is not None:
                req.reply = None
                ex.json(failure[0], {"error": failure[1]})
                return
            call = self._tool_call()
            if call is not None:
                self._function_call(ex, body, *call)
                return
            output = last_tool_output(body)
            texts = typed_user_texts(body)
            text = REPLY_PREFIX + (
                f"tool output: {output[:200]}" if output is not None else texts[-1] if texts else ""
            )
        else:
            text = json.dumps({"title": TITLE})
        req.reply = text
        item_id = f"msg_stub_{uuid.uuid4().hex[:20]}"
        self._stream(
            ex,
            body,
            [
                {
                    "type": "message",
                    "id": item_id,
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }
            ],
            wait=req.kind == "main",
        )

    def _stream(
        self, ex: Exchange, body: dict[str, Any], items: list[dict[str, Any]], wait: bool = True
    ) -> None:
        """The SSE answer: each output item added, its text in two deltas (a message), done;
        then the response completed with its usage."""
        if wait:
            self.wait_delay()
        if self._stopping.is_set():
            return
        ex.start_stream()

        def event(name: str, data: dict[str, Any]) -> None:
            ex.event(data, name)

        response = {
            "id": f"resp_stub_{uuid.uuid4().hex[:20]}",
            "object": "response",
            "created_at": int(time.time()),
            "status": "in_progress",
            "model": str(body.get("model") or "stub-model"),
            "output": [],
        }
        event("response.created", {"type": "response.created", "response": response})
        out_chars = 0
        for index, item in enumerate(items):
            if item["type"] == "message":
                event(
                    "response.output_item.added",
                    {
                        "type": "response.output_item.added",
                        "output_index": index,
                        "item": {**item, "status": "in_progress", "content": []},
                    },
                )
                text = item["content"][0]["text"]
                out_chars += len(text)
                half = len(text) // 2
                for piece in (text[:half], text[half:]):
                    if piece:
                        event(
                            "response.output_text.delta",
                            {
                                "type": "response.output_text.delta",
                                "item_id": item["id"],
                                "output_index": index,
                                "content_index": 0,
                                "delta": piece,
                            },
                        )
            else:
                event(
                    "response.output_item.added",
                    {"type": "response.output_item.added", "output_index": index, "item": item},
                )
                out_chars += len(json.dumps(item))
            event(
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": index, "item": item},
            )
        in_tokens = max(1, len(json.dumps(body.get("input"))) // 4)
        out_tokens = max(1, out_chars // 4)
        ex.req.usage = {"input_tokens": in_tokens, "output_tokens": out_tokens}  # as answered
        event(
            "response.completed",
            {
                "type": "response.completed",
                "response": {
                    **response,
                    "status": "completed",
                    "output": items,
                    "usage": {
                        "input_tokens": in_tokens,
                        "input_tokens_details": {"cached_tokens": 0},
                        "output_tokens": out_tokens,
                        "output_tokens_details": {"reasoning_tokens": 0},
                        "total_tokens": in_tokens + out_tokens,
                    },
                },
            },
        )

    def _function_call(
        self,
        ex: Exchange,
        body: dict[str, Any],
        name: str,
        arguments: dict[str, Any],
        namespace: str | None,
    ) -> None:
        ex.req.reply = f"call {name}"
        call_id = f"call_stub_{uuid.uuid4().hex[:20]}"
        item = {
            "type": "function_call",
            "id": f"fc_stub_{uuid.uuid4().hex[:20]}",
            "status": "completed",
            "call_id": call_id,
            "name": name,
            "arguments": json.dumps(arguments),
            **({"namespace": namespace} if namespace else {}),
        }
        self._stream(ex, body, [item], wait=False)


@contextmanager
def running_stub(port: int = 0) -> Iterator[ResponsesStub]:
    """Start the stand-in on 127.0.0.1 (a free port, unless given) for the duration of the
    block."""
    stub = ResponsesStub(port)
    stub.start()
    try:
        yield stub
    finally:
        stub.stop()


if __name__ == "__main__":  # a manual run: python tests/openai_responses_stub.py [PORT]
    import sys

    with running_stub(int(sys.argv[1]) if len(sys.argv) > 1 else 0) as s:
        print(s.url, flush=True)
        try:
            while True:
                time.sleep(1)
                with s._lock:
                    fresh, s.requests = s.requests, []
                for r in fresh:
                    print(r.method, r.path, r.kind, json.dumps(r.body), flush=True)
        except KeyboardInterrupt:
            pass
