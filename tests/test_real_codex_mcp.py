"""The real Codex CLI 0.169.0, started by roost, gets `roost mcp` through per-process `-c`
overrides: the stand-in sees roost's tools in codex's request (a namespace `mcp__roost`), and
codex calls one itself (the stand-in answers with a function call), runs it without asking and
sends its result back; the user's config.toml gets no server."""

from __future__ import annotations

import pytest

from conftest import Env
from openai_responses_stub import last_tool_output, running_stub
from real_codex import codex_env, install_codex, prepare_codex_home

pytestmark = [pytest.mark.tmux, pytest.mark.real_codex]


def roost_tools(body: dict) -> list[str]:
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
