"""The SDK's own answers to the requests an agent's CLI makes when it starts roost's MCP server,
for each protocol version the handshake negotiates: what mcp/front.py answers before it loads
the SDK. `python -m roost.mcp.record` writes them to mcp/handshake.json; tests/test_mcp_front.py
fails while the file and the live SDK differ (a tool changed, another SDK), saying to run it.
"""

from __future__ import annotations

import itertools
import json
import sys
from importlib.metadata import version
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from roost.mcp import front
from roost.mcp.server import build

# What Claude Code, Codex and Gemini CLI ask at start, besides initialize or server/discover
# (each list is empty but the tools', and cheap to keep: a CLI asks for what the server offers).
LISTS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")
CLIENT = {"name": "roost-record", "version": "1"}
# The server events Claude Code 2.1.332 listens for (subscriptions/listen), as it asks them.
LISTENED = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}
# Capabilities a client may declare, which must not change an answer (the front ignores them).
DECLARED: tuple[dict[str, Any], ...] = (
    {},
    {
        "roots": {"listChanged": True},
        "elicitation": {"form": {}, "url": {}},
        "extensions": {"io.modelcontextprotocol/tasks": {}},
    },
)


async def exchange(allow_write: bool, lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a server writes back to `lines`, sent one by one (each request's answer awaited,
    a listen request's acknowledgement for it)."""
    server = build({}, allow_write)
    lowlevel = server._lowlevel_server
    to_server, server_reads = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    server_writes, from_server = anyio.create_memory_object_stream[SessionMessage](16)
    said = []
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(
            lowlevel.run, server_reads, server_writes, lowlevel.create_initialization_options()
        )
        for line in lines:
            await to_server.send(SessionMessage(_parse(line)))
            if "id" in line:
                reply = (await from_server.receive()).message
                said.append(reply.model_dump(by_alias=True, exclude_unset=True, mode="json"))
        tasks.cancel_scope.cancel()
    return said


def _parse(line: dict[str, Any]) -> Any:
    return types.jsonrpc_message_adapter.validate_python(line, by_name=False)


def _handshake(allow_write: bool, protocol: str, capabilities: dict[str, Any]) -> dict[str, Any]:
    """method -> result of one handshake-era connection; each list asked twice, with and
    without a progress token (Codex sends one), which must not change it."""
    params = {"protocolVersion": protocol, "capabilities": capabilities, "clientInfo": CLIENT}
    lines: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    for n, method in enumerate(LISTS):
        lines.append({"jsonrpc": "2.0", "id": 2 * n + 1, "method": method})
        token = {"_meta": {"progressToken": n}}
        lines.append({"jsonrpc": "2.0", "id": 2 * n + 2, "method": method, "params": token})
    said = anyio.run(exchange, allow_write, lines)
    found = {"initialize": said[0]["result"]}
    for n, method in enumerate(LISTS):
        plain, with_token = said[2 * n + 1]["result"], said[2 * n + 2]["result"]
        _same(plain, with_token, f"{protocol} {method} with a progress token")
        found[method] = plain
    return found


def _modern(
    allow_write: bool, protocol: str, capabilities: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(method -> result, the listen request's acknowledgement) of one 2026-era connection."""
    meta = {
        front.PROTOCOL_KEY: protocol,
        front.CLIENT_KEY: CLIENT,
        front.CAPABILITIES_KEY: capabilities,
    }
    methods = ("server/discover", *LISTS)
    listen = {"_meta": meta, "notifications": LISTENED}
    lines: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": "listen", "method": front.LISTEN, "params": listen}
    ]
    lines += [
        {"jsonrpc": "2.0", "id": n, "method": method, "params": {"_meta": meta}}
        for n, method in enumerate(methods)
    ]
    said = anyio.run(exchange, allow_write, lines)
    ack = said[0]
    if ack.get("method") != front.ACKNOWLEDGED:
        raise SystemExit(f"{protocol}: a listen request's first answer is {ack}")
    found = {method: said[n + 1]["result"] for n, method in enumerate(methods)}
    return found, {"asked": LISTENED, "granted": ack["params"]["notifications"]}


def _same(one: object, other: object, what: str) -> None:
    if one != other:
        raise SystemExit(f"the SDK answers differently for {what}: the front cannot answer it")


def recording() -> dict[str, Any]:
    """The SDK's answers for each protocol version; the same with writes allowed or not and
    whatever capabilities the client declares (else the front could not answer for it)."""
    handshake: dict[str, Any] = {}
    modern: dict[str, Any] = {}
    listen: dict[str, Any] = {}
    for allow, capabilities in itertools.product((False, True), DECLARED):
        for protocol in HANDSHAKE_PROTOCOL_VERSIONS:
            found = _handshake(allow, protocol, capabilities)
            _same(handshake.setdefault(protocol, found), found, f"{protocol}'s clients")
        for protocol in MODERN_PROTOCOL_VERSIONS:
            found, ack = _modern(allow, protocol, capabilities)
            _same(modern.setdefault(protocol, found), found, f"{protocol}'s clients")
            _same(listen.setdefault(protocol, ack), ack, f"{protocol}'s listen requests")
    return {
        "made_with": {**{d: version(d) for d in front.SHAPERS}, "tools": front.tools_digest()},
        "answers": handshake,
        "modern": modern,
        "listen": listen,
    }


def main() -> int:
    with open(front.RECORDING, "w", encoding="utf-8") as fh:
        json.dump(recording(), fh, indent=1, sort_keys=True)
        fh.write("\n")
    print(f"wrote {front.RECORDING}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
