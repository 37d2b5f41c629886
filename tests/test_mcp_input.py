"""`roost mcp` answers every request (issue 18, item 12), spoken to as raw JSON-RPC lines: the
SDK's own client never sends what a hostile or broken one can. Before: a lone surrogate escape or
100,000-deep nesting got no reply at all (the caller waited for ever), and a first prompt of
200 KB or 10 MB, or one holding a NUL, failed the child's start and left a `failed` record."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux


class RawClient:
    """`roost mcp --allow-write` on pipes; replies collected by id on a reader thread."""

    def __init__(self, world: Env) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "roost", "mcp", "--allow-write"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=world.env,
            cwd=world.tmp,
        )
        self.replies: dict[Any, dict[str, Any]] = {}
        self.every: list[dict[str, Any]] = []  # each line it wrote, in order
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            reply = json.loads(line)
            self.every.append(reply)
            self.replies[reply.get("id")] = reply

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, rid: int, method: str, params: dict[str, Any]) -> None:
        self.send(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}))

    def reply(self, rid: Any, timeout: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while rid not in self.replies:
            assert self.proc.poll() is None, "roost mcp exited"
            assert time.monotonic() < deadline, f"no reply to request {rid}: {self.replies}"
            time.sleep(0.05)
        return self.replies[rid]

    def start(self) -> None:
        self.request(
            0,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        )
        self.reply(0)
        self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def client(world: Env) -> Any:
    raw = RawClient(world)
    raw.start()
    yield raw
    raw.close()


def call(rid: int, tool: str, arguments: str) -> str:
    """A tools/call line with `arguments` as raw JSON text (it may be anything a caller sends)."""
    return (
        f'{{"jsonrpc": "2.0", "id": {rid}, "method": "tools/call", '
        f'"params": {{"name": "{tool}", "arguments": {arguments}}}}}'
    )


def test_every_request_gets_an_answer_even_one_that_cannot_be_read(client: RawClient) -> None:
    client.send(call(2, "create_agent", '{"provider": "claude", "prompt": "\\ud800"}'))
    client.send(call(3, "list_agents", '{"x": ' + "[" * 100_000 + "]" * 100_000 + "}"))
    client.send('{"jsonrpc": "2.0", "id": "four", "method": 7}')  # JSON, but no request
    client.send('{"jsonrpc": "2.0", "method": "tools/call", "params": [')  # no id to answer
    client.request(5, "ping", {})
    for rid in (2, 3, "four"):
        error = client.reply(rid)["error"]
        assert error["code"] in (-32700, -32600) and error["message"], error
    assert client.reply(None)["error"]["code"] == -32700  # JSON-RPC: id null when unknown
    assert client.reply(5)["result"] == {}  # and the server goes on


def test_a_first_prompt_no_cli_can_take_is_refused_and_nothing_is_recorded(
    world: Env, client: RawClient
) -> None:
    prompts = {"200KB": "x" * 200_000, "10MB": "y" * 10_000_000, "NUL": "before\0after"}
    for rid, (what, prompt) in enumerate(prompts.items(), start=2):
        client.send(
            call(
                rid,
                "create_agent",
                json.dumps({"provider": "claude", "name": what, "prompt": prompt}),
            )
        )
        reply = client.reply(rid)["result"]
        assert reply["isError"] is True, what
        assert "invalid prompt" in reply["content"][0]["text"], what
    assert world.ls() == {}


@pytest.mark.parametrize(
    ("line", "rid"),
    [
        ('{"jsonrpc": "2.0", "id": 7, "params": {"x": "\\ud800"}}', 7),
        ('{"params": {"id": 1, "a": [{"id": 2}]}, "id": "outer"}', "outer"),
        ('{"method": "a\\"id\\": 3", "id" : -4 }', -4),
        ('{"id": "\\ud800"}', None),  # an id that is no text cannot be sent back
        ('{"id": null}', None),
        ('{"jsonrpc": "2.0", "params": [[[', None),
    ],
)
def test_the_id_of_a_line_that_cannot_be_parsed(line: str, rid: Any) -> None:
    from roost.mcp.server import request_id

    assert request_id(line) == rid


def test_cli_arguments_or_a_mode_from_a_caller_are_refused_not_ignored(
    world: Env, client: RawClient
) -> None:
    client.send(
        call(
            2,
            "create_agent",
            json.dumps(
                {"provider": "claude", "name": "kid", "args": ["--dangerously-skip-permissions"]}
            ),
        )
    )
    client.send(
        call(
            3, "create_agent", json.dumps({"provider": "claude", "name": "kid", "dangerous": True})
        )
    )
    for rid, extra in ((2, "args"), (3, "dangerous")):
        reply = client.reply(rid)["result"]
        assert reply["isError"] is True and extra in reply["content"][0]["text"], reply
    assert world.ls() == {}
    client.request(4, "tools/list", {})
    [create] = [t for t in client.reply(4)["result"]["tools"] if t["name"] == "create_agent"]
    assert create["inputSchema"]["additionalProperties"] is False
