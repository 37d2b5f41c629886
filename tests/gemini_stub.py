"""A small stand-in for the Gemini API (generativelanguage v1beta), good enough for Gemini CLI.

Point the CLI at it with ``GOOGLE_GEMINI_BASE_URL=<stub.url>`` and any ``GEMINI_API_KEY``
(tests/real_gemini.py does). What it answers, as Gemini CLI 0.61.0 asks:

* ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse``: a conversation turn, answered
  ``stub reply: <last user text>`` in server-sent events (two text chunks, the second with
  ``finishReason: STOP`` and usage);
* ``POST /v1beta/models/<model>:generateContent``: JSON calls (the CLI's model router, and any
  call asking for structured output) get a JSON instance of the schema they ask for;
* ``POST ...:countTokens``: a rough count;
* a side call (``generateContent`` without a schema: at start-up the CLI summarises the
  project's last session into that session's file) gets ``stub summary``;
* ``queue_tool_call(name, args)`` answers the next turn with a ``functionCall``;
* anything else: recorded in ``stub.unknown`` and answered 404.

``fail_with(failure)`` (:data:`UNAUTHENTICATED`, :data:`QUOTA`, :data:`INTERNAL`) answers
every later model call with that API error, as the real API words it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from llm_stub_server import REPLY_PREFIX, Exchange, Failure, Request, StubServer, sample_of

__all__ = ["INTERNAL", "QUOTA", "REPLY_PREFIX", "UNAUTHENTICATED", "GeminiStub"]


def _error(code: int, status: str, message: str) -> Failure:
    return Failure(code, {"error": {"code": code, "message": message, "status": status}})


UNAUTHENTICATED = _error(401, "UNAUTHENTICATED", "API key not valid. Please pass a valid API key.")
# The free tier's daily limit, as the API words it: the CLI gives up at once (a per-minute
# limit it retries, quietly, for minutes).
QUOTA = Failure(
    429,
    {
        "error": {
            "code": 429,
            "status": "RESOURCE_EXHAUSTED",
            "message": "You exceeded your current quota, please check your plan and "
            "billing details. "
            "* Quota exceeded for metric: generativelanguage.googleapis.com/"
            "generate_content_free_tier_requests, limit: 50, model: gemini-2.5-pro",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [
                        {
                            "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",  # noqa: E501
                            "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                            "quotaValue": "50",
                        }
                    ],
                }
            ],
        }
    },
)
INTERNAL = _error(500, "INTERNAL", "An internal error has occurred. Please retry.")
SIDE_REPLY = "stub summary"


@dataclass(frozen=True)
class ToolCall:
    """A scripted answer that calls one of the CLI's tools."""

    name: str
    args: dict[str, Any]

    def part(self) -> dict[str, Any]:
        return {"functionCall": {"name": self.name, "args": self.args}}

    def __str__(self) -> str:
        return f"tool call: {self.name} {json.dumps(self.args)}"


def texts_of(content: Any) -> list[str]:
    parts = content.get("parts") if isinstance(content, dict) else None
    return [str(p["text"]) for p in parts or [] if isinstance(p, dict) and "text" in p]


def user_texts(body: Any) -> list[str]:
    """The user's texts in a request's ``contents``, in order (the CLI's own context parts,
    which start with ``<``, left out)."""
    out = []
    for content in (body.get("contents") or []) if isinstance(body, dict) else []:
        if isinstance(content, dict) and content.get("role") == "user":
            out += [
                t.strip() for t in texts_of(content) if t.strip() and not t.lstrip().startswith("<")
            ]
    return out


def model_texts(body: Any) -> list[str]:
    """The model's earlier answers a request carries (the conversation so far)."""
    out = []
    for content in (body.get("contents") or []) if isinstance(body, dict) else []:
        if isinstance(content, dict) and content.get("role") == "model":
            out += texts_of(content)
    return out


def asked_schema(body: Any) -> Any:
    config = body.get("generationConfig") if isinstance(body, dict) else None
    if not isinstance(config, dict):
        return None
    return config.get("responseJsonSchema") or config.get("responseSchema")


def _usage(body: Any, text: str) -> dict[str, int]:
    prompt = max(1, len(json.dumps(body)) // 4)
    out = max(1, len(text) // 4)
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": out,
        "totalTokenCount": prompt + out,
    }


def _response(
    parts: list[dict[str, Any]], model: str, finished: bool, usage: dict[str, int] | None
) -> Any:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finished:
        candidate["finishReason"] = "STOP"
    out: dict[str, Any] = {"candidates": [candidate], "modelVersion": model}
    if usage:
        out["usageMetadata"] = usage
    return out


class GeminiStub(StubServer):
    name = "gemini-stub"

    def turns(self) -> list[Request]:
        """The conversation turns (streamed calls) seen so far."""
        return self.of_kind("turn")

    def queue_tool_call(self, name: str, args: dict[str, Any]) -> None:
        """Answer the next turn by calling the CLI's tool ``name`` (``run_shell_command`` with
        ``{"command": "echo hi"}`` makes Gemini CLI ask the user first)."""
        self.queue_reply(ToolCall(name, args))

    def route(self, ex: Exchange) -> None:
        req = ex.req
        path, _, method = req.path.rpartition(":")
        model = path.rsplit("/", 1)[-1]
        if req.method != "POST" or "/models/" not in path or not isinstance(req.body, dict):
            self.not_found(ex)
            return
        if method == "countTokens":
            req.kind = "count"
            ex.json(200, {"totalTokens": max(1, len(json.dumps(req.body)) // 4)})
            return
        if method not in ("generateContent", "streamGenerateContent"):
            self.not_found(ex)
            return
        streamed = method == "streamGenerateContent"
        schema = asked_schema(req.body)
        # A turn is streamed; JSON calls (the router) ask for a schema; the rest (a summary of
        # an earlier session, written into its file at start-up) are side calls.
        req.kind = "json" if schema is not None else "turn" if streamed else "side"
        said = user_texts(req.body)
        failure = self.failure(req.kind, said[-1] if said else None)
        if failure is not None:
            ex.json(failure.status, failure.body)
            return
        answer: Any
        if schema is not None:
            answer = json.dumps(sample_of(schema))
        elif req.kind == "side":
            answer = SIDE_REPLY
        else:
            answer = self.next_answer(said[-1] if said else "")
        part = answer.part() if isinstance(answer, ToolCall) else {"text": str(answer)}
        req.reply = str(answer)
        if req.kind == "turn" and not self.wait_delay():
            return
        usage = _usage(req.body, req.reply)
        if not streamed:
            ex.json(200, _response([part], model, True, usage))
            return
        ex.start_stream()
        if "text" in part:  # two chunks, to exercise the client's accumulation
            half = len(part["text"]) // 2
            ex.event(_response([{"text": part["text"][:half]}], model, False, None))
            part = {"text": part["text"][half:]}
        ex.event(_response([part], model, True, usage))
