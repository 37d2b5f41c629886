"""The real Claude Code, started by roost with roost's MCP config, calls roost's tools itself
(the Messages API stand-in answers with tool_use blocks): it creates a child (a second real
claude), the child answers, and the child's reply comes back into the parent's conversation as
roost's notice; then the parent waits for the child through wait_for_agents."""

from __future__ import annotations

import json
import time

import pytest

from anthropic_stub import running_stub
from conftest import Env
from real_claude import claude_env, install_claude, prepare_home

pytestmark = [pytest.mark.tmux, pytest.mark.real_claude]


def test_real_claude_creates_a_child_and_hears_its_result(world: Env) -> None:
    claude = install_claude()
    work = world.tmp / "work"
    with running_stub() as stub:
        prepare_home(world.user_home, [work])
        world.env = claude_env(world.env, world.user_home, stub.url)
        world.env["ROOST_CLAUDE_BIN"] = str(claude)
        world.env["ENABLE_TOOL_SEARCH"] = "false"  # MCP tools listed directly, not deferred

        world.roost("spawn", "lead", "--cwd", str(work))
        world.wait_for(lambda: world.ls()["lead"]["status"] == "idle", 60, "lead idle")
        stub.queue_tool_use("mcp__roost__create_agent",
                            {"provider": "claude", "name": "kid", "prompt": "hello kid"})
        world.roost("send", "lead", "make a child")
        kid = world.wait_for(lambda: world.ls().get("kid"), 60, "the kid created")
        assert kid["orchestration_parent"] == "lead"  # type: ignore[index]
        assert kid["orchestration_root"] == "lead"  # type: ignore[index]
        assert kid["placement"] == "detached"  # type: ignore[index]
        world.wait_for(lambda: [r for r in stub.messages("main") if r.reply and
                                "tool result" in r.reply], 180, "the tool's result")
        started = time.monotonic()  # from the tool's result (the kid is running by then)
        notice = "[roost] kid finished its turn: stub reply: hello kid"
        world.wait_for(lambda: notice in stub.user_texts(), 90, "the parent told")
        print(f"\nreal claude: kid done -> lead told within {time.monotonic() - started:.1f} s")
        world.wait_for(lambda: world.ls()["lead"]["status"] == "idle", 60, "lead idle again")

        stub.queue_tool_use("mcp__roost__wait_for_agents",
                            {"names": ["kid"], "timeout_seconds": 30})
        world.roost("send", "lead", "wait for the kid")
        world.wait_for(lambda: any(r.reply and "echo" not in r.reply and "hello kid" in r.reply
                                   and "tool result" in r.reply for r in stub.messages("main")),
                       60, "wait_for_agents' result")
        result = next(r.reply for r in reversed(stub.messages("main"))
                      if r.reply and "tool result" in r.reply)
        assert '"status"' in result and "idle" in result, result
        kinds = [e["kind"] for e in json.loads(world.roost("events", "--json").stdout)]
        assert "child-created" in kinds and "notified" in kinds

        world.tmux("kill-server")  # the tree survives a restart of tmux
        world.roost("restore")
        after = world.ls()
        assert after["kid"]["orchestration_parent"] == "lead"
        assert after["lead"]["state"] == "running"  # a tile; the parked kid hibernates
