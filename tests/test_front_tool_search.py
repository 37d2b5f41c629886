"""Issue 19, item 14: what the real Claude Code (2.1.332) does with roost's MCP tools when its
tool search is on (its default), as docs/ORCHESTRATION.md says: the API request offers its
`ToolSearch` tool and not roost's tools; a search (here for "roost") returns references to
roost's tools, which the model can then call; the server's instructions reach the model too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from anthropic_stub import running_stub
from conftest import Env
from real_claude import real_world

pytestmark = [pytest.mark.tmux, pytest.mark.real_claude]
DOC = Path(__file__).resolve().parents[1] / "docs" / "ORCHESTRATION.md"


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [str(t.get("name")) for t in body.get("tools") or []]


def _found_by_search(body: dict[str, Any]) -> list[str]:
    """The tools a ToolSearch result in this request referenced."""
    found = []
    for message in body.get("messages") or []:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                found += [
                    str(r.get("tool_name"))
                    for r in block["content"]
                    if r.get("type") == "tool_reference"
                ]
    return found


def test_real_claude_finds_roosts_tools_through_tool_search(world: Env) -> None:
    with running_stub() as stub:
        real_world(world, stub.url)  # tool search as a user has it: on
        world.roost("spawn", "lead", "--cwd", str(world.tmp / "work"))
        world.wait_for(lambda: world.ls()["lead"]["status"] == "idle", 60, "lead idle")
        found: list[str] = []
        for _attempt in range(4):  # its MCP servers connect in the background: until then a
            stub.queue_tool_use("ToolSearch", {"query": "roost"})  # search finds none of theirs
            world.roost("send", "lead", "find roost's tools")
            world.wait_for(lambda: world.ls()["lead"]["status"] == "idle", 60, "lead idle")
            found = [f for r in stub.messages("main") for f in _found_by_search(r.body)]
            if found:
                break
        requests = [r.body for r in stub.messages("main")]
        assert all("ToolSearch" in _tool_names(b) for b in requests)
        offered = [
            t
            for b in requests
            for t in b.get("tools") or []
            if str(t.get("name")).startswith("mcp__roost__") and not t.get("defer_loading")
        ]
        assert not offered, offered  # never offered up front
        assert "mcp__roost__create_agent" in found, found
        said = json.dumps(requests[-1])
        assert "## roost" in said and "[roost]" in said  # the server's instructions, as sent
    doc = DOC.read_text()
    assert "ToolSearch" in doc and "ENABLE_TOOL_SEARCH" in doc
