"""Issue 19.1 with the real Claude Code (offline, tests/real_claude.py): long and multi-line
sends are confirmed. Claude Code 2.1.332 records a pasted block of 4+ lines or more than 800
characters in UserPromptSubmit (and its transcript) wrapped:
``\\n\\n<pasted_content id="…">\\n{text}\\n</pasted_content id="…">\\n``; a shorter paste as
typed. roost recognises both forms, and only around this very text."""

from __future__ import annotations

import pytest

from anthropic_stub import running_stub
from conftest import Env
from real_claude import real_world

pytestmark = [pytest.mark.tmux, pytest.mark.real_claude]

DIFF = "".join(
    f"--- a/f{i}.py\n+++ b/f{i}.py\n@@ -1 +1 @@\n-old {i}\n+new {i}\n" for i in range(200)
)  # ~9 KB, 1000 lines: `git diff | roost send`


def prompts(world: Env, agent_id: str) -> list[str]:
    log = world.home / "agents" / agent_id / "hooks.log"
    return [
        line
        for line in log.read_text().splitlines()
        if line.split("\t")[1:2] == ["UserPromptSubmit"]
    ]


def test_long_and_multi_line_sends_to_claude_are_confirmed_once(world: Env) -> None:
    with running_stub() as stub:
        real_world(world, stub.url)
        world.roost("spawn", "web", "--cwd", str(world.tmp / "work"))
        agent = world.wait_status("web", "idle", 60)
        for n, text in enumerate(["a\nb\nc\nd", "z" * 900, DIFF], start=1):
            sent = world.roost(
                "send", "web", "--wait", "--timeout", "60", input=text, check=False, timeout=90
            )
            assert sent.returncode == 0, sent.stderr
            assert "stub reply:" in sent.stdout  # this turn's reply, found by its wrapped text
            assert len(prompts(world, agent["id"])) == n  # delivered once: no retry needed
