"""A small stand-in for OpenAI's Chat Completions API, good enough for Aider.

Point aider at it with ``openai-api-base: <stub.url>/v1`` and any ``OPENAI_API_KEY``
(tests/real_aider.py does). What it answers, as aider 0.86.2 (through litellm and the openai
client) asks:

* ``POST /v1/chat/completions``: a turn, answered ``stub reply: <last user text>``; streamed as
  server-sent ``chat.completion.chunk`` events (a role chunk, two text chunks, a finish chunk
  with usage, ``[DONE]``) when ``"stream": true``, else one ``chat.completion``;
* ``GET /v1/models``: one model;
* anything else: recorded in ``stub.unknown`` and answered 404.

``fail_with(failure)`` (:data:`UNAUTHENTICATED`, :data:`QUOTA`, :data:`INTERNAL`) answers
every later turn with that API error, as OpenAI words it.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from llm_stub_server import REPLY_PREFIX, Exchange, Failure, Request, StubServer

__all__ = ["INTERNAL", "QUOTA", "REPLY_PREFIX", "UNAUTHENTICATED", "ChatCompletionsStub"]

MODEL = "gpt-4o"


def _error(status: int, kind: str, code: str | None, message: str) -> Failure:
    return Failure(
        status, {"error": {"message": message, "type": kind, "param": None, "code": code}}
    )


UNAUTHENTICATED = _error(
    401,
    "invalid_request_error",
    "invalid_api_key",
    "Incorrect API key provided: sk-roost*****test. You can find your API "
    "key at https://platform.openai.com/account/api-keys.",
)
QUOTA = _error(
    429,
    "insufficient_quota",
    "insufficient_quota",
    "You exceeded your current quota, please check your plan and billing details.",
)
INTERNAL = _error(
    500,
    "server_error",
    None,
    "The server had an error while processing your request. Sorry about that!",
)


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(c.get("text", ""))
            for c in content
            if isinstance(c, dict) and c.get("type") == "text"
        )
    return ""


def said_by(body: Any, role: str) -> list[str]:
    """The texts of one role's messages in a request, in order."""
    messages = body.get("messages") if isinstance(body, dict) else None
    return [
        text_of(m.get("content")).strip()
        for m in messages or []
        if isinstance(m, dict) and m.get("role") == role
    ]


def _chunk(
    cid: str,
    model: str,
    delta: dict[str, Any],
    finish: str | None = None,
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage is not None:
        out["usage"] = usage
    return out


class ChatCompletionsStub(StubServer):
    name = "chat-completions-stub"

    def turns(self) -> list[Request]:
        return self.of_kind("turn")

    def route(self, ex: Exchange) -> None:
        req = ex.req
        if req.method == "GET" and req.path == "/v1/models":
            req.kind = "models"
            ex.json(
                200,
                {
                    "object": "list",
                    "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": "stub"}],
                },
            )
            return
        if (
            req.method != "POST"
            or req.path != "/v1/chat/completions"
            or not isinstance(req.body, dict)
        ):
            self.not_found(ex)
            return
        req.kind = "turn"
        failure = self.failure(req.kind)
        if failure is not None:
            ex.json(failure.status, failure.body)
            return
        users = said_by(req.body, "user")
        text = str(self.next_answer(users[-1] if users else ""))
        req.reply = text
        if not self.wait_delay():
            return
        model = str(req.body.get("model") or MODEL)
        cid = f"chatcmpl-stub{uuid.uuid4().hex[:20]}"
        prompt = max(1, len(json.dumps(req.body)) // 4)
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": max(1, len(text) // 4),
            "total_tokens": prompt + max(1, len(text) // 4),
        }
        if not req.body.get("stream"):
            ex.json(
                200,
                {
                    "id": cid,
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": model,
                    "usage": usage,
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": text},
                        }
                    ],
                },
            )
            return
        ex.start_stream()
        ex.event(_chunk(cid, model, {"role": "assistant", "content": ""}))
        half = len(text) // 2
        for piece in (text[:half], text[half:]):
            if piece:
                ex.event(_chunk(cid, model, {"content": piece}))
        ex.event(_chunk(cid, model, {}, "stop", usage))
        ex.event("[DONE]")
