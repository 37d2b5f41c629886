"""The real Claude Code, started by roost with roost's MCP config, calls roost's tools itself
(the Messages API stand-in answers with tool_use blocks): it creates a child (a second real
claude), the child answers, and the child's reply comes back into the parent's conversation as
roost's notice; then the parent waits for the child through wait_for_agents."""

from __future__ import annotations

import json

import pytest

from anthropic_stub import AnthropicStub, last_user_text, running_stub
from conftest import Env
from real_claude import real_world

pytestmark = [pytest.mark.tmux, pytest.mark.real_claude]


def tool_results(stub: AnthropicStub) -> list[str]:
    """The text of each tool_result block Claude Code sent back (it follows a tool_use), once
    (a request repeats the earlier ones), in order; an error is one too."""
    found: dict[str, str] = {}
    for request in stub.messages("main"):
        for message in request.body.get("messages") or []:
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    inner = block.get("content")
                    text = inner if isinstance(inner, str) else json.dumps(inner)
                    found.setdefault(str(block.get("tool_use_id")), text)
    return list(found.values())


def offers_roosts_tools(stub: AnthropicStub) -> bool:
    """Claude Code's last turn offered roost's tools: `roost mcp` had connected (on a loaded
    machine it takes seconds, and a turn before that has no roost tools)."""
    turns = stub.messages("main")
    return bool(turns) and any(
        t.get("name") == "mcp__roost__create_agent" for t in turns[-1].body.get("tools") or []
    )


def until_roosts_tools_are_offered(world: Env, stub: AnthropicStub, name: str) -> None:
    """Turns of small talk until one offers roost's tools (the positive sign that `roost mcp`
    is connected), at most a few."""
    for attempt in range(6):
        world.roost("send", name, f"are your tools ready? ({attempt})")
        world.wait_for(lambda: world.ls()[name]["status"] == "idle", 60, f"{name} idle")
        if offers_roosts_tools(stub):
            return
    raise AssertionError("Claude Code never offered roost's tools: roost mcp did not connect")


def test_real_claude_creates_a_child_and_hears_its_result(world: Env) -> None:
    work = world.tmp / "work"
    with running_stub() as stub:
        # MCP tools listed directly, not deferred
        real_world(world, stub.url, ENABLE_TOOL_SEARCH="false")

        world.roost("spawn", "lead", "--cwd", str(work))
        world.wait_for(lambda: world.ls()["lead"]["status"] == "idle", 60, "lead idle")
        until_roosts_tools_are_offered(world, stub, "lead")
        stub.queue_tool_use(
            "mcp__roost__create_agent", {"provider": "claude", "name": "kid", "prompt": "hello kid"}
        )
        world.roost("send", "lead", "make a child")
        kid = world.wait_for(lambda: world.ls().get("kid"), 60, "the kid created")
        assert kid["orchestration_parent"] == "lead"
        assert kid["orchestration_root"] == "lead"
        assert kid["placement"] == "detached"
        created = world.wait_for(
            lambda: [t for t in tool_results(stub) if "prompt_delivered" in t],
            180,
            "create_agent's result",
        )
        assert "kid" in created[0] and "lead" in created[0]
        notice = "[roost] kid finished its turn: stub reply: hello kid"
        world.wait_for(lambda: notice in stub.user_texts(), 90, "the parent told")
        told_at = next(r.time for r in stub.messages("main") if last_user_text(r.body) == notice)
        kid_log = world.home / "agents" / world.ls()["kid"]["id"] / "hooks.log"
        kid_done = max(
            float(line.split("\t")[0])
            for line in kid_log.read_text().splitlines()
            if "\tStop\t" in line
        )  # whole seconds (hook.sh's date +%s)
        print(
            f"\nreal claude: kid's Stop -> lead's request with the notice: "
            f"{told_at - kid_done:.1f} s (±1 s)"
        )
        world.wait_for(lambda: world.ls()["lead"]["status"] == "idle", 60, "lead idle again")

        stub.queue_tool_use(
            "mcp__roost__wait_for_agents", {"names": ["kid"], "timeout_seconds": 30}
        )
        world.roost("send", "lead", "wait for the kid")
        waited = world.wait_for(
            lambda: [t for t in tool_results(stub) if "last_reply" in t],
            120,
            "wait_for_agents' result",
        )
        assert "stub reply: hello kid" in waited[0] and "idle" in waited[0]
        kinds = [e["kind"] for e in json.loads(world.roost("events", "--json").stdout)]
        assert "child-created" in kinds and "notified" in kinds

        world.tmux("kill-server")  # the tree survives a restart of tmux
        world.roost("restore")
        after = world.ls()
        assert after["kid"]["orchestration_parent"] == "lead"
        assert after["lead"]["state"] == "running"  # a tile; the parked kid hibernates
