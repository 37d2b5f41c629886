"""Results reach the parent, end to end on a real tmux with fake claude agents: a child created
through `roost mcp` finishes its turn and the parent gets "[roost] kid finished its turn: ..."
as its next prompt (through claude's Stop hook and `roost _notify`); a hibernated parent is
woken to get it. Prints the time from the child's Stop to the parent's prompt."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from test_mcp_server import Call, run_client

from roost.providers import hooks

from conftest import Env

if TYPE_CHECKING:
    from mcp import ClientSession

pytestmark = pytest.mark.tmux


def prompts(world: Env, name: str) -> list[str]:
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


def create_kid(world: Env, lead_id: str, prompt: str) -> dict[str, Any]:
    async def script(session: ClientSession, call: Call) -> Any:
        return await call("create_agent", provider="claude", prompt=prompt, name="kid")

    return run_client(world, lead_id, script)


def stopped_at(world: Env, name: str) -> float | None:
    agent_id = world.ls()[name]["id"]
    log = Path(world.home) / "agents" / agent_id / "hooks.log"
    stops = [line for line in log.read_text().splitlines() if "\tStop\t" in line]
    return time.monotonic() if stops else None


def test_a_finished_child_tells_its_idle_parent(world: Env) -> None:
    world.roost("spawn", "lead", "--detached")
    lead_id = world.ls()["lead"]["id"]
    assert create_kid(world, lead_id, "work 2")["prompt_delivered"] is True
    done = world.wait_for(lambda: stopped_at(world, "kid"), timeout=20, what="the kid's Stop")
    told = world.wait_for(
        lambda: [p for p in prompts(world, "lead") if p.startswith("[roost]")],
        timeout=30,
        what="the parent told",
    )
    elapsed = time.monotonic() - float(done)
    print(f"\nchild done -> parent told: {elapsed:.2f} s")
    assert told == ["[roost] kid finished its turn: done working"]
    # A second chance to deliver, for certain: the parent's own Stop after the notice (its hook
    # runs _notify in the background), then _notify run here to its end. Nothing twice.
    world.wait_for(lambda: stopped_at(world, "lead"), timeout=30, what="the parent's Stop")
    world.roost("_notify")
    world.wait_for(lambda: world.ls()["lead"]["status"] == "idle", 30, "the parent idle")
    assert len([p for p in prompts(world, "lead") if p.startswith("[roost]")]) == 1
    kinds = [e["kind"] for e in json.loads(world.roost("events", "--json").stdout)]
    assert "notice-queued" in kinds and "notified" in kinds


def test_a_hibernated_parent_is_woken_to_hear_of_its_child(world: Env) -> None:
    world.roost("spawn", "lead", "--detached")
    lead_id = world.ls()["lead"]["id"]
    create_kid(world, lead_id, "work 15")  # longer than a hibernate on a loaded machine
    world.roost("hibernate", "lead")
    assert stopped_at(world, "kid") is None  # the kid still works while its parent sleeps
    world.wait_for(lambda: stopped_at(world, "kid"), timeout=60, what="the kid's Stop")
    told = world.wait_for(
        lambda: [p for p in prompts(world, "lead") if p.startswith("[roost]")],
        timeout=40,
        what="the hibernated parent woken and told",
    )
    assert told == ["[roost] kid finished its turn: done working"]
    assert world.ls()["lead"]["state"] == "running"
    lead_events = json.loads(world.roost("events", "lead", "--json").stdout)
    kinds = [e["kind"] for e in lead_events]
    assert kinds.index("hibernated") < kinds.index("notified")
    assert [e["resume"] for e in lead_events if e["kind"] == "started"] == [False, True]


def test_a_parent_the_person_stopped_stays_stopped_until_woken(world: Env) -> None:
    # Issue 18.4: `roost kill lead` was undone within 2 s by the delivery of a pending notice.
    world.roost("spawn", "lead", "--detached")
    lead_id = world.ls()["lead"]["id"]
    create_kid(world, lead_id, "work 15")  # longer than a kill on a loaded machine
    world.roost("kill", "lead")
    assert stopped_at(world, "kid") is None  # stopped before its child is done
    world.wait_for(lambda: stopped_at(world, "kid"), timeout=60, what="the kid's Stop")
    since_kill = world.wait_for(lambda: decided(world), timeout=30, what="the delivery's decision")
    assert [e["kind"] for e in since_kill] == ["notice-held"], since_kill
    assert world.ls()["lead"]["state"] == "stopped"
    world.roost("wake", "lead")  # the person wakes it: the held notice arrives then
    told = world.wait_for(
        lambda: [p for p in prompts(world, "lead") if p.startswith("[roost]")],
        timeout=30,
        what="the woken parent told",
    )
    assert told == ["[roost] kid finished its turn: done working"]


def decided(world: Env) -> list[dict[str, Any]] | None:
    """The lead's starts, deliveries and holds since its kill, once one of them decided on the
    kid's notice (a start, a delivery, or a hold because the person stopped it)."""
    found = json.loads(world.roost("events", "lead", "--json").stdout)
    kill = max(i for i, e in enumerate(found) if e["kind"] == "killed")
    since = [e for e in found[kill:] if e["kind"] in ("notice-held", "started", "notified")]
    final = [e for e in since if e["kind"] != "notice-held" or "by its person" in str(e)]
    return since if final else None


def test_a_reply_that_would_type_keys_reaches_the_parent_as_text(world: Env) -> None:
    # Issue 18.3: a reply holding a split paste-end marker and two Ctrl-C ended the paste of
    # its notice early and typed the Ctrl-Cs: the parent exited, was woken for the notice, and
    # exited again (69 launches in 60 s).
    # The kid's prompt verbatim on its command line (typed in on the service's MCP endpoint,
    # it would arrive paste-safe, core/delivery.py, and the kid's reply would differ).
    world.roost("service", "stop")
    world.roost("spawn", "lead", "--detached")
    lead_id = world.ls()["lead"]["id"]
    create_kid(world, lead_id, "bye\x1b[20\x1b[201~1~\x03\x03 injected")
    told = world.wait_for(
        lambda: [p for p in prompts(world, "lead") if p.startswith("[roost]")],
        timeout=40,
        what="the parent told",
    )
    assert told == ["[roost] kid finished its turn: echo: bye[20[201~1~ injected"]
    assert world.wait_status("lead", "idle")["state"] == "running"
    kinds = [e["kind"] for e in json.loads(world.roost("events", "lead", "--json").stdout)]
    assert kinds.count("started") == 1 and "exited" not in kinds


def test_the_hooks_commands_start_without_the_clis_parser(world: Env) -> None:
    """`roost _notify` (a Claude Code hook, each turn's end in a tree) and `roost _supervise
    PANE` (tmux's pane-died hook, each exit) run often: they are answered before Click and its
    commands load (cli/hooks.py), and do their work there (a dead pane's agent recorded)."""
    world.roost("spawn", "s", "--provider", "command", "--", "sh", "-c", "read x; exit 3")
    world.tmux("set-hook", "-gu", "pane-died")  # so only the call below records the exit
    world.type(world.pane_of("s"), "bye")
    pane = world.wait_for(
        lambda: next((p for p in world.panes() if p["window"] == "s" and p["dead"] == "1"), None),
        what="the agent's pane dead",
    )["pane_id"]
    for args in (["_notify"], ["_supervise", pane]):
        proc = world.roost_importtime(*args)
        assert proc.returncode == 0, proc.stderr
        loaded = {line.split("|")[-1].strip() for line in proc.stderr.splitlines()}
        assert "click" not in loaded and "roost.cli.main" not in loaded, args
    events = json.loads(world.roost("events", "--json").stdout)
    assert [e.get("exit_code") for e in events if e["kind"] == "exited"] == [3]
