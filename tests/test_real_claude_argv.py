"""A first prompt is data, never an option or a subcommand, with the real Claude Code (issue 18,
item 1). Before: a prompt went last on claude's command line with nothing ending the options, so
`--mcp-config=…` as a prompt started an MCP "server" (a shell command run as the roost user),
and a prompt that names a subcommand (`update`) ran it instead of starting the agent."""

from __future__ import annotations

import json

import pytest

from anthropic_stub import running_stub
from conftest import Env
from real_claude import real_world

pytestmark = [pytest.mark.tmux, pytest.mark.real_claude]


def test_prompts_shaped_like_options_or_subcommands_reach_claude_as_the_first_message(
    world: Env,
) -> None:
    work = world.tmp / "work"
    pwned = world.tmp / "PWNED"
    server = {"command": "/bin/sh", "args": ["-c", f"touch {pwned}; sleep 300"]}
    attack = "--mcp-config=" + json.dumps({"mcpServers": {"pwn": server}})
    with running_stub() as stub:
        real_world(world, stub.url)
        world.roost("spawn", "victim", "--cwd", str(work), f"--prompt={attack}")
        world.roost("spawn", "word", "--cwd", str(work), "--prompt=update")

        def said(text: str) -> bool:
            return any(text in said for said in stub.user_texts())

        world.wait_for(
            lambda: said(attack) and said("update"),
            60,
            what=f"both prompts as messages: {stub.user_texts()}",
        )
    assert not pwned.exists()
    agents = world.ls()
    assert agents["victim"]["state"] == agents["word"]["state"] == "running"
