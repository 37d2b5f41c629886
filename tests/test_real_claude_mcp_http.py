"""The real Claude Code wired to the shared MCP endpoint (mcp/http.py, hosted by the roost
service, which the spawn starts): its `--mcp-config` names the endpoint with `"type": "http"`
and the launch token as a bearer header (`${ROOST_LAUNCH_TOKEN}`, expanded by the CLI from its
environment). A `--prompt` that asks a new claude to use a roost tool works on its first turn:
the tools are offered in its very first request (roost types the prompt once the CLI has
listed them; on its command line, Claude Code 2.1.332 sends it before MCP servers connect)."""

from __future__ import annotations

import json

import pytest
from test_real_claude_mcp import tool_results

from anthropic_stub import running_stub
from conftest import Env
from real_claude import real_world

pytestmark = [pytest.mark.tmux, pytest.mark.real_claude, pytest.mark.service]


def test_a_new_claude_uses_roosts_tools_on_its_first_turn(world: Env) -> None:
    work = world.tmp / "work"
    with running_stub() as stub:
        real_world(world, stub.url, ENABLE_TOOL_SEARCH="false")  # tools listed, not deferred
        stub.queue_tool_use("mcp__roost__list_agents", {})
        world.roost("spawn", "lead", "--cwd", str(work), "--prompt", "list your agents")
        lead = world.ls()["lead"]
        wired = json.loads((world.home / "agents" / lead["id"] / "mcp.json").read_text())
        assert wired["mcpServers"]["roost"]["type"] == "http"
        results = world.wait_for(lambda: tool_results(stub), 120, "list_agents' result")
        first = stub.messages("main")[0].body
        assert first["messages"][0]["content"]  # the prompt's own turn
        offered = {t.get("name") for t in first.get("tools") or []}
        assert "mcp__roost__list_agents" in offered  # on the first turn
        assert '"name":"lead"' in results[0] and '"you":true' in results[0]
        assert "list your agents" in json.dumps(first["messages"])
        status = json.loads(world.roost("service", "status", "--json").stdout)
        assert status["running"] and "mcp" in status["serves"]
