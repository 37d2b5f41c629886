"""The real Codex CLI 0.169.0, started by roost, gets `roost mcp` through per-process `-c`
overrides: the stand-in sees roost's tools in codex's request (a namespace `mcp__roost`), and
codex calls one itself (the stand-in answers with a function call), runs it without asking and
sends its result back; the user's config.toml gets no server."""

from __future__ import annotations

import functools
import json
import os
import signal
from typing import Any

import pytest

from conftest import Env
from openai_responses_stub import last_tool_output, running_stub
from real_codex import codex_env, install_codex, prepare_codex_home

pytestmark = [pytest.mark.tmux, pytest.mark.real_codex]


def roost_tools(body: dict[str, Any]) -> list[str]:
    """The functions of the `mcp__roost` namespace a request offers the model."""
    return [
        str(f.get("name"))
        for tool in body.get("tools") or []
        if isinstance(tool, dict) and tool.get("name") == "mcp__roost"
        for f in tool.get("tools") or []
        if isinstance(f, dict)
    ]


def test_real_codex_gets_roost_mcp_and_calls_it(world: Env) -> None:
    codex = install_codex()
    work = world.tmp / "work"
    codex_home = world.tmp / "codex-home"
    with running_stub() as stub:
        config = prepare_codex_home(codex_home, stub.url, [work])
        world.env = codex_env(world.env, world.user_home, codex_home)
        world.env["ROOST_CODEX_BIN"] = str(codex)
        world.roost("spawn", "lead", "--provider", "codex", "--cwd", str(work))
        world.wait_for(lambda: world.ls()["lead"]["status"] == "idle", 90, "lead idle")
        # Codex does not wait for an MCP server before a turn (unless it is `required`, and then
        # one that fails stops codex): a first turn on a busy machine may come without roost's
        # tools. So the call comes in the second turn.
        world.roost("send", "lead", "hello")
        world.wait_for(lambda: stub.responses("main"), 60, "the first turn")
        world.wait_for(lambda: world.ls()["lead"]["status"] == "idle", 60, "lead idle again")
        stub.queue_tool_call("list_agents", {}, namespace="mcp__roost")
        world.roost("send", "lead", "who is here")
        output = world.wait_for(
            lambda: next(
                (o for r in stub.responses("main") if (o := last_tool_output(r.body)) is not None),
                None,
            ),
            90,
            "list_agents' result",
        )
        turn = stub.responses("main")[1]
        assert {"create_agent", "list_agents", "wait_for_agents", "send_message"} <= set(
            roost_tools(turn.body)
        )
        assert '"lead"' in str(output) and "codex" in str(output)
        world.wait_for(lambda: world.ls()["lead"]["status"] == "idle", 60, "lead idle again")
        assert "mcp_servers" not in config.read_text()  # (codex keeps its TUI state there)


def wired_url(world: Env, name: str) -> str | None:
    """The shared endpoint's URL the agent's launch was given (None: its own `roost mcp`)."""
    agent_id = world.ls()[name]["id"]
    config = json.loads((world.home / "agents" / agent_id / "mcp.json").read_text())
    return config["mcpServers"]["roost"].get("url")


# What the real-CLI restart tests do before each call of a roost tool, and whether it works.
RESTARTS = (
    (None, True),  # the first call
    ("stop", False),  # `roost service stop`: a call while nobody serves fails, that call only
    ("start", True),  # `roost service start` (a long outage: the call before is in it)
    ("kill", True),  # kill -9 of the service (its pane's hook starts it again)
)


def restart_service(world: Env, how: str | None) -> None:
    """`stop`: roost service stop; `start`: roost service start; `kill`: kill -9."""
    if how == "stop":
        world.roost("service", "stop")
    elif how == "start":
        world.start_service()
    elif how == "kill":
        gone = json.loads(world.roost("service", "status", "--json").stdout)["pid"]
        os.kill(gone, signal.SIGKILL)
        world.wait_for(
            lambda: (
                (s := json.loads(world.roost("service", "status", "--json").stdout))["running"]
                and s["pid"] != gone
                and "mcp" in s["serves"]
            ),
            60,
            "the service back after its kill -9",
        )


@pytest.mark.service
def test_real_codex_keeps_roosts_tools_across_service_restarts(world: Env) -> None:
    """issue 36 point 2: a codex on the shared endpoint calls a roost tool after `roost service
    stop; roost service start` (a call made while it was stopped failed meanwhile) and after a
    kill -9 of the service, with no relaunch."""
    codex = install_codex()
    work = world.tmp / "work"
    with running_stub() as stub:
        prepare_codex_home(world.tmp / "codex-home", stub.url, [work])
        world.env = codex_env(world.env, world.user_home, world.tmp / "codex-home")
        world.env["ROOST_CODEX_BIN"] = str(codex)
        world.start_service()  # so the launch is wired to the endpoint, not a `roost mcp`
        world.roost("spawn", "lead", "--provider", "codex", "--cwd", str(work))
        world.wait_for(lambda: world.ls()["lead"]["status"] == "idle", 90, "lead idle")
        url, pid = wired_url(world, "lead"), world.ls()["lead"]["pid"]
        assert url is not None and url.startswith("http://127.0.0.1:")
        world.roost("send", "lead", "hello")  # a first turn may come before its MCP servers
        world.wait_for(lambda: stub.responses("main"), 60, "the first turn")
        world.wait_for(lambda: world.ls()["lead"]["status"] == "idle", 60, "lead idle again")

        def outputs(at_least: int) -> list[str] | None:
            found = [
                o for r in stub.responses("main") if (o := last_tool_output(r.body)) is not None
            ]
            return found if len(found) >= at_least else None

        for count, (restart, works) in enumerate(RESTARTS, start=1):
            restart_service(world, restart)
            stub.queue_tool_call("list_agents", {}, namespace="mcp__roost")
            world.roost("send", "lead", f"who is here ({restart or 'first'})")
            found = world.wait_for(functools.partial(outputs, count), 90, f"result {count}")
            assert ('"lead"' in found[count - 1]) is works, (restart, found[count - 1])
            world.wait_for(lambda: world.ls()["lead"]["status"] == "idle", 60, "lead idle again")
        assert world.ls()["lead"]["pid"] == pid  # the same process all along
        assert json.loads(world.roost("service", "status", "--json").stdout)["endpoint"] == url
