"""The real Claude Code wired to the shared MCP endpoint (mcp/http.py, hosted by the roost
service, which the spawn starts): its `--mcp-config` names the endpoint with `"type": "http"`
and the launch token as a bearer header (`${ROOST_LAUNCH_TOKEN}`, expanded by the CLI from its
environment). A `--prompt` that asks a new claude to use a roost tool works on its first turn:
the tools are offered in its very first request (roost types the prompt once the CLI has
listed them; on its command line, Claude Code 2.1.332 sends it before MCP servers connect)."""

from __future__ import annotations

import json

import pytest
from test_mcp_http import token_of
from test_real_claude_mcp import tool_results
from test_real_codex_mcp import RESTARTS, restart_service

from roost.providers import mcpwire

from anthropic_stub import AnthropicStub, running_stub
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


def call_list_agents(world: Env, stub: AnthropicStub, said: str, count: int) -> str:
    """Ask the agent (typed `said`) for a turn that calls roost's list_agents; its result."""
    stub.queue_tool_use("mcp__roost__list_agents", {}, when=said)
    world.roost("send", "lead", said)
    results = world.wait_for(
        lambda: len(found := tool_results(stub)) >= count and found, 120, f"result {count}"
    )
    world.wait_for(lambda: world.ls()["lead"]["status"] == "idle", 60, "lead idle again")
    return results[count - 1]


def test_a_running_claude_keeps_roosts_tools_across_service_restarts(world: Env) -> None:
    """issue 36 point 2: the address an agent was given stays this home's. After `roost service
    stop; roost service start` (a call made while it was stopped failed meanwhile: Claude Code
    2.1.332 once gave up on a server whose listen stream it lost for a few seconds), after a
    kill -9 of the service, and after tmux's server died and `roost restore` brought the agent
    back, its next call of a roost tool works: no relaunch."""
    work = world.tmp / "work"
    with running_stub() as stub:
        real_world(world, stub.url, ENABLE_TOOL_SEARCH="false")
        stub.queue_tool_use("mcp__roost__list_agents", {})
        world.roost("spawn", "lead", "--cwd", str(work), "--prompt", "list your agents")
        world.wait_for(lambda: tool_results(stub), 120, "list_agents' first result")
        world.wait_for(lambda: world.ls()["lead"]["status"] == "idle", 60, "lead idle")
        lead = world.ls()["lead"]
        wired = world.home / "agents" / lead["id"] / "mcp.json"
        url = json.loads(wired.read_text())["mcpServers"]["roost"]["url"]
        pid = lead["pid"]

        for count, (restart, works) in enumerate(RESTARTS[1:], start=2):
            restart_service(world, restart)
            said = call_list_agents(world, stub, f"who is here ({restart})", count)
            assert ('"name":"lead"' in said) is works, (restart, said)
        assert world.ls()["lead"]["pid"] == pid  # the same process all along: no relaunch

        world.tmux("kill-server", check=False)
        world.roost("restore", check=False, timeout=120)
        world.wait_for(lambda: world.ls()["lead"]["status"] == "idle", 120, "lead restored")
        # a new process (restored): its CLI connects anew, which a message must not overtake
        world.wait_for(
            lambda: mcpwire.listed(world.env["ROOST_HOME"], lead["id"]) == token_of(world, "lead"),
            60,
            "the restored claude listing roost's tools",
        )
        assert '"name":"lead"' in call_list_agents(world, stub, "after tmux came back", 5)
        assert json.loads(wired.read_text())["mcpServers"]["roost"]["url"] == url
        status = json.loads(world.roost("service", "status", "--json").stdout)
        assert status["endpoint"] == url
