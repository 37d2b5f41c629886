"""The real Gemini CLI 0.61.0, started by roost, gets `roost mcp` from a system settings file
of roost's own (GEMINI_CLI_SYSTEM_SETTINGS_PATH, for that process only): the stand-in sees
roost's tools next to the user's own MCP server's, and gemini calls one itself (the stand-in
answers with a functionCall), runs it without asking and sends its result back; no file of the
user's changes."""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from roost.providers import hooks

from conftest import Env
from gemini_stub import GeminiStub
from real_gemini import gemini_env, install_gemini, prepare_home

pytestmark = [pytest.mark.tmux, pytest.mark.real_gemini]

START = 180  # seconds: the CLI loads ~100 MB of JavaScript, slowly on a busy machine
USER_SERVER = """\
from mcp.server.mcpserver import MCPServer

server = MCPServer("mine")


@server.tool()
def users_own_tool() -> str:
    \"\"\"A tool of the user's own server.\"\"\"
    return "mine"


server.run()
"""


def declared(body: dict[str, Any]) -> list[str]:
    return [
        str(f.get("name"))
        for tool in body.get("tools") or []
        if isinstance(tool, dict)
        for f in tool.get("functionDeclarations") or []
        if isinstance(f, dict)
    ]


def function_responses(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        part["functionResponse"]
        for content in body.get("contents") or []
        for part in content.get("parts") or []
        if isinstance(part, dict) and "functionResponse" in part
    ]


def test_real_gemini_gets_roost_mcp_and_calls_it(world: Env, private_home: Path) -> None:
    gemini = install_gemini()
    work = world.tmp / "work"
    with GeminiStub() as stub:
        settings = prepare_home(world.user_home)
        script = world.tmp / "users_server.py"
        script.write_text(USER_SERVER)
        user_settings = json.loads(settings.read_text())
        user_settings["mcpServers"] = {
            "mine": {"command": sys.executable, "args": [str(script)], "trust": True}
        }
        settings.write_text(json.dumps(user_settings))
        world.env = gemini_env(world.env, world.user_home, stub.url)
        world.env["ROOST_GEMINI_BIN"] = str(gemini)
        world.roost("spawn", "lead", "--provider", "gemini", "--cwd", str(work))
        world.wait_for(lambda: world.ls()["lead"]["status"] == "idle", START, "lead idle")
        stub.queue_tool_call("mcp_roost_list_agents", {})
        world.roost("send", "lead", "who is here")
        answered = world.wait_for(
            lambda: next((r for r in stub.turns() if function_responses(r.body)), None),
            90,
            f"list_agents' result: {world.roost('capture', 'lead').stdout}",
        )
        names = declared(stub.turns()[0].body)
        assert {
            "mcp_roost_list_agents",
            "mcp_roost_create_agent",
            "mcp_roost_wait_for_agents",
            "mcp_mine_users_own_tool",
        } <= set(names)  # roost's, and the user's own
        result = json.dumps(function_responses(answered.body))
        assert '\\"lead\\"' in result or '"lead"' in result, result
        world.wait_for(lambda: world.ls()["lead"]["status"] == "idle", 60, "lead idle again")
        assert json.loads(settings.read_text()) == user_settings
        # roost's hooks in its system settings file ran (roost/cli_hook.sh: the service's cue)
        log = Path(hooks.cli_log_path(world.env["ROOST_HOME"], world.ls()["lead"]["id"]))
        world.wait_for(lambda: log.exists() and "\tAfterAgent\t" in log.read_text(), 30, "hook")
        entry = hooks.parse_entry(log.read_text().splitlines()[-1])
        assert entry is not None and entry[1] == "AfterAgent" and "prompt_response" in entry[2]


@pytest.mark.service
def test_real_gemini_keeps_roosts_tools_across_service_restarts(
    world: Env, private_home: Path
) -> None:
    """issue 36 point 2: a gemini on the shared endpoint calls a roost tool after `roost service
    stop; roost service start` (a call made while it was stopped failed meanwhile) and after a
    kill -9 of the service, with no relaunch."""
    from test_real_codex_mcp import RESTARTS, restart_service, wired_url

    gemini = install_gemini()
    work = world.tmp / "work"
    with GeminiStub() as stub:
        prepare_home(world.user_home)
        world.env = gemini_env(world.env, world.user_home, stub.url)
        world.env["ROOST_GEMINI_BIN"] = str(gemini)
        world.start_service()  # so the launch is wired to the endpoint, not a `roost mcp`
        world.roost("spawn", "lead", "--provider", "gemini", "--cwd", str(work))
        world.wait_for(lambda: world.ls()["lead"]["status"] == "idle", START, "lead idle")
        url, pid = wired_url(world, "lead"), world.ls()["lead"]["pid"]
        assert url is not None and url.startswith("http://127.0.0.1:")

        def responses(at_least: int) -> list[dict[str, Any]] | None:
            turns = stub.turns()
            found = function_responses(turns[-1].body) if turns else []
            return found if len(found) >= at_least else None

        for count, (restart, works) in enumerate(RESTARTS, start=1):
            restart_service(world, restart)
            stub.queue_tool_call("mcp_roost_list_agents", {})
            world.roost("send", "lead", f"who is here ({restart or 'first'})")
            found = world.wait_for(functools.partial(responses, count), 90, f"result {count}")
            said = json.dumps(found[count - 1])
            assert ('\\"lead\\"' in said or '"lead"' in said) is works, (restart, said)
            world.wait_for(lambda: world.ls()["lead"]["status"] == "idle", 60, "lead idle again")
        assert world.ls()["lead"]["pid"] == pid  # the same process all along
        assert json.loads(world.roost("service", "status", "--json").stdout)["endpoint"] == url
