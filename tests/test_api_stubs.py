"""The model-API stand-ins (tests/*_stub.py) share one handler shape: one request handler, one
request record and one way to answer (llm_stub_server), each stand-in answering its own API's
paths in ``route``. What each one answers is tested where it is used (test_real_*.py)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

import llm_stub_server
from anthropic_stub import AnthropicStub
from chat_completions_stub import ChatCompletionsStub
from gemini_stub import GeminiStub
from openai_responses_stub import ResponsesStub

# Each stand-in, with one model call of its API that the delay holds.
TURNS: dict[type[Any], tuple[str, dict[str, Any]]] = {
    AnthropicStub: (
        "/v1/messages",
        {
            "model": "m",
            "tools": [{"name": "Bash"}],
            "messages": [{"role": "user", "content": "hi"}],
        },
    ),
    ResponsesStub: (
        "/v1/responses",
        {"model": "m", "stream": True, "tools": [{}], "input": [{"role": "user", "content": "hi"}]},
    ),
    GeminiStub: (
        "/v1beta/models/g:streamGenerateContent",
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
    ),
    ChatCompletionsStub: (
        "/v1/chat/completions",
        {"messages": [{"role": "user", "content": "hi"}]},
    ),
}


def post(url: str, body: dict[str, Any]) -> str:
    req = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        return str(resp.read().decode())


@pytest.mark.parametrize("stand_in", list(TURNS), ids=lambda c: c.__name__)
def test_every_stand_in_answers_through_the_shared_handler(stand_in: type[Any]) -> None:
    assert issubclass(stand_in, llm_stub_server.LoopbackStub)
    assert stand_in._handler_class is llm_stub_server.LoopbackStub._handler_class
    path, body = TURNS[stand_in]
    with stand_in() as stub:
        assert "stub re" in post(stub.url + path, body)  # (streamed answers come in pieces)
        [seen] = stub.requests
    assert type(seen) is llm_stub_server.Request
    assert (seen.method, seen.path, seen.status, seen.reply) == (
        "POST",
        path,
        200,
        "stub reply: hi",
    )


@pytest.mark.parametrize("stand_in", list(TURNS), ids=lambda c: c.__name__)
def test_a_request_is_recorded_before_its_answer_is_sent(stand_in: type[Any]) -> None:
    """A client that has its answer finds its request in ``stub.requests`` (and an unknown
    path in ``stub.unknown``): a test may assert on them at once, without waiting."""
    path, body = TURNS[stand_in]
    with stand_in() as stub:
        for _ in range(5):
            post(stub.url + path, body)
            assert stub.requests[-1].reply == "stub reply: hi"
            with pytest.raises(urllib.error.HTTPError) as missing:
                urllib.request.urlopen(stub.url + "/nowhere", timeout=10)
            assert missing.value.code == 404
            assert stub.unknown[-1].path == "/nowhere"
        assert len(stub.requests) == 10 and len(stub.unknown) == 5


def test_a_tool_call_asked_for_again_is_answered_again_until_its_result_comes() -> None:
    """``queue_tool_use(..., again=True)``: the same question asked twice (Claude Code's
    non-streaming fallback) gets the call twice; once a result comes back, plain answers."""
    question = {"role": "user", "content": "read the notes"}
    body = {"model": "m", "tools": [{"name": "Read"}], "messages": [question]}
    result = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t", "content": "roost"}],
    }
    with AnthropicStub() as stub:
        stub.queue_tool_use("Read", {"file_path": "/n"}, when="read the notes", again=True)
        for _ in range(2):
            said = json.loads(post(stub.url + "/v1/messages", body))
            assert said["content"][0]["type"] == "tool_use" and said["stop_reason"] == "tool_use"
        done = {**body, "messages": [question, {"role": "assistant", "content": "x"}, result]}
        assert json.loads(post(stub.url + "/v1/messages", done))["content"][0]["text"] == (
            "stub reply: tool result: roost"
        )
        said = json.loads(post(stub.url + "/v1/messages", body))
        assert said["content"][0] == {"type": "text", "text": "stub reply: read the notes"}
