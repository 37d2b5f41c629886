"""Results reach the parent, end to end on a real tmux with fake claude agents: a child created
through `roost mcp` finishes its turn and the parent gets "[roost] kid finished its turn: ..."
as its next prompt (through claude's Stop hook and `roost _notify`); a hibernated parent is
woken to get it. Prints the time from the child's Stop to the parent's prompt."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from test_mcp_server import run_client

from roost.providers import hooks

pytestmark = pytest.mark.tmux


def prompts(world, name: str) -> list[str]:
    agent_id = world.ls()[name]["id"]
    log = Path(world.home) / "agents" / agent_id / "hooks.log"
    if not log.exists():
        return []
    found = []
    for line in log.read_text().splitlines():
        entry = hooks.parse_line(line)
        if entry is not None and entry[1] == "UserPromptSubmit":
            found.append(str(entry[2].get("prompt", "")))
    return found


def create_kid(world, lead_id: str, prompt: str) -> dict:
    async def script(session, call):
        return await call("create_agent", provider="claude", prompt=prompt, name="kid")

    return run_client(world, lead_id, script)


def stopped_at(world, name: str) -> float | None:
    agent_id = world.ls()[name]["id"]
    log = Path(world.home) / "agents" / agent_id / "hooks.log"
    stops = [line for line in log.read_text().splitlines() if "\tStop\t" in line]
    return time.monotonic() if stops else None


def test_a_finished_child_tells_its_idle_parent(world):
    world.roost("spawn", "lead", "--detached")
    lead_id = world.ls()["lead"]["id"]
    assert create_kid(world, lead_id, "work 2")["prompt_delivered"] is True
    done = world.wait_for(lambda: stopped_at(world, "kid"), timeout=20, what="the kid's Stop")
    told = world.wait_for(lambda: [p for p in prompts(world, "lead") if p.startswith("[roost]")],
                          timeout=30, what="the parent told")
    elapsed = time.monotonic() - float(done)  # type: ignore[arg-type]
    print(f"\nchild done -> parent told: {elapsed:.2f} s")
    assert told == ["[roost] kid finished its turn: done working"]
    time.sleep(2)  # the parent's own Stop runs _notify again: nothing is delivered twice
    assert len([p for p in prompts(world, "lead") if p.startswith("[roost]")]) == 1
    kinds = [e["kind"] for e in json.loads(world.roost("events", "--json").stdout)]
    assert "notice-queued" in kinds and "notified" in kinds


def test_a_hibernated_parent_is_woken_to_hear_of_its_child(world):
    world.roost("spawn", "lead", "--detached")
    lead_id = world.ls()["lead"]["id"]
    create_kid(world, lead_id, "work 6")
    world.roost("hibernate", "lead")
    assert stopped_at(world, "kid") is None  # the kid still works while its parent sleeps
    world.wait_for(lambda: stopped_at(world, "kid"), timeout=30, what="the kid's Stop")
    told = world.wait_for(lambda: [p for p in prompts(world, "lead") if p.startswith("[roost]")],
                          timeout=40, what="the hibernated parent woken and told")
    assert told == ["[roost] kid finished its turn: done working"]
    assert world.ls()["lead"]["state"] == "running"
    lead_events = json.loads(world.roost("events", "lead", "--json").stdout)
    kinds = [e["kind"] for e in lead_events]
    assert kinds.index("hibernated") < kinds.index("notified")
    assert [e["resume"] for e in lead_events if e["kind"] == "started"] == [False, True]
