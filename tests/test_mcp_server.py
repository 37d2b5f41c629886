"""`roost mcp` spoken to over stdio with the SDK's own client, as a parent agent would: create,
send, wait, read, list, stop, remove; refusals outside the subtree. Real tmux, fake agent CLIs."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeAlias

import anyio
import pytest

from conftest import Env

if TYPE_CHECKING:
    from mcp import ClientSession

pytestmark = pytest.mark.tmux

# `call(tool, **args)`: a tool's answer (result_of); a script gets the session and its `call`.
Call: TypeAlias = Callable[..., Awaitable[Any]]
Script: TypeAlias = "Callable[[ClientSession, Call], Awaitable[Any]]"


def result_of(reply: Any) -> Any:
    """A tool's answer: its structured content (a dict or a wrapped list), or its error text."""
    if reply.is_error:
        return {"error": " ".join(c.text for c in reply.content)}
    data = reply.structured_content
    if isinstance(data, dict) and set(data) == {"result"}:
        return data["result"]
    return data if data is not None else json.loads(reply.content[0].text)


def run_client(world: Env, agent_id: str | None, script: Script, *flags: str) -> Any:
    # the SDK loaded here, not at collection: a CPU-second in each xdist worker, most of which
    # run no MCP test (docs/TESTING.md "The workers' start")
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {**world.env}
    if agent_id:
        env["ROOST_AGENT_ID"] = agent_id
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "roost", "mcp", *flags], env=env, cwd=str(world.tmp)
    )

    async def main() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()

            async def call(tool: str, **args: Any) -> Any:
                return result_of(await session.call_tool(tool, args))

            return await script(session, call)

    return anyio.run(main)


def test_a_parent_drives_a_child_through_mcp(world: Env) -> None:
    world.roost("spawn", "lead", "--detached")
    world.roost("spawn", "stranger", "--detached")
    lead_id = world.ls()["lead"]["id"]

    async def script(session: ClientSession, call: Call) -> Any:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == {
            "create_agent",
            "send_message",
            "answer_question",
            "wait_for_agents",
            "read_conversation",
            "list_agents",
            "stop_agent",
            "park_agent",
            "remove_agent",
            "read_diff",
            "add_review_comment",
            "send_review",
            "search_conversations",
            "merge_child",
        }
        made = await call("create_agent", provider="claude", prompt="hello child", name="kid")
        assert made["name"] == "kid" and made["parent"] == "lead"
        assert made["placement"] == "parked" and made["prompt_delivered"] is True
        waited = await call("wait_for_agents", timeout_seconds=20)
        assert waited["timed_out"] is False
        assert waited["children"] == [
            {"name": "kid", "status": "idle", "last_reply": "echo: hello child"}
        ]
        receipt = await call("send_message", name="kid", text="second task", idempotency_key="k-1")
        assert receipt["delivered"] is True and receipt["how"] == "hook"
        again = await call("send_message", name="kid", text="second task", idempotency_key="k-1")
        assert again["delivered"] is True and again["duplicate"] is True
        waited = await call("wait_for_agents", names=["kid"], timeout_seconds=20)
        assert waited["children"][0]["last_reply"] == "echo: second task"
        conversation = await call("read_conversation", name="kid", messages=3)
        assert conversation["source"] == "transcript"
        assert [m["text"] for m in conversation["messages"]] == [
            "echo: hello child",
            "second task",
            "echo: second task",
        ]
        listed = await call("list_agents")
        assert {(r["name"], r["parent"]) for r in listed} == {("lead", None), ("kid", "lead")}
        refused = await call("send_message", name="stranger", text="hi")
        assert "not in your subtree" in refused["error"]
        refused = await call("stop_agent", name="stranger")
        assert "not in your subtree" in refused["error"]
        refused = await call("remove_agent", name="kid")
        assert "confirm=true" in refused["error"]
        stopped = await call("stop_agent", name="kid")
        assert stopped["stopped"] is True
        return await call("remove_agent", name="kid", confirm=True)

    assert run_client(world, lead_id, script) == {"name": "kid", "removed": True}
    agents = world.ls()
    assert "kid" not in agents and agents["stranger"]["state"] == "running"
    kinds = [e["kind"] for e in json.loads(world.roost("events", "lead", "--json").stdout)]
    assert "child-created" in kinds and "child-sent" in kinds
    # the duplicate was not typed twice: the child saw "second task" once
    starts = world.starts()
    assert starts  # (the transcript assertion above already shows a single second turn)


def test_a_parent_answers_only_its_own_childs_question(world: Env) -> None:
    """answer_question: the child's question and choices, then the answer (the selection
    moved, Enter pressed), refused for an agent outside the caller's subtree, for a choice
    the question does not offer, and for a question other than the one shown."""
    world.roost("spawn", "lead", "--detached")
    world.roost("spawn", "stranger", "--detached")
    lead_id = world.ls()["lead"]["id"]
    world.wait_status("stranger", "idle")
    world.type(world.pane_of("stranger"), "ask")
    world.wait_status("stranger", "waiting")

    async def script(session: ClientSession, call: Call) -> Any:
        await call("create_agent", provider="claude", name="kid")
        world.wait_status("kid", "idle")
        world.type(world.pane_of("kid"), "ask")
        world.wait_status("kid", "waiting")
        shown = await call("answer_question", name="kid")
        assert shown["question"] == "Do you want to proceed?"
        assert [c["label"] for c in shown["choices"]] == ["Yes", "No"]
        refused = await call("answer_question", name="stranger", choice="1")
        assert "not in your subtree" in refused["error"]
        refused = await call("answer_question", name="kid", choice="3")
        assert "offers no choice" in refused["error"]
        refused = await call("answer_question", name="kid", choice="2", question_id="0" * 16)
        assert "changed since it was shown" in refused["error"]
        return await call(
            "answer_question", name="kid", choice="No", question_id=shown["question_id"]
        )

    done = run_client(world, lead_id, script)
    assert done["answered"] == "No" and done["status"] == "idle", done
    assert "denied" in world.screen(world.pane_of("kid"))
    assert world.ls()["stranger"]["status"] == "waiting"  # never pressed


def test_the_child_records_its_parent_and_root(world: Env) -> None:
    world.roost("spawn", "lead", "--detached")
    lead_id = world.ls()["lead"]["id"]

    async def script(session: ClientSession, call: Call) -> Any:
        return await call("create_agent", provider="codex", name="kid2")

    assert run_client(world, lead_id, script)["parent"] == "lead"
    kid = world.ls()["kid2"]
    assert kid["orchestration_parent"] == "lead" and kid["orchestration_root"] == "lead"
    assert kid["placement"] == "detached"


def test_outside_roost_the_server_is_read_only_unless_allowed(world: Env) -> None:
    world.roost("spawn", "solo", "--detached")

    async def read_only(session: ClientSession, call: Call) -> Any:
        listed = await call("list_agents")
        refused = await call("create_agent", provider="claude", name="x")
        stop = await call("stop_agent", name="solo")
        return listed, refused, stop

    listed, refused, stop = run_client(world, None, read_only)
    assert [r["name"] for r in listed] == ["solo"]
    assert "read-only" in refused["error"] and "read-only" in stop["error"]

    async def writer(session: ClientSession, call: Call) -> Any:
        return await call("create_agent", provider="claude", name="made")

    assert run_client(world, None, writer, "--allow-write")["parent"] is None


def test_limits_refuse_a_child_too_many(world: Env) -> None:
    world.roost("spawn", "lead", "--detached")
    (world.home / "config.toml").write_text("[orchestration]\nmax_children = 1\n")
    lead_id = world.ls()["lead"]["id"]

    async def script(session: ClientSession, call: Call) -> Any:
        first = await call("create_agent", provider="codex", name="one")
        second = await call("create_agent", provider="codex", name="two")
        return first, second

    first, second = run_client(world, lead_id, script)
    assert first["name"] == "one"
    assert "orchestration.max_children = 1" in second["error"]
    assert "two" not in world.ls()


def test_an_unknown_caller_is_refused_at_start(world: Env) -> None:
    world.roost("spawn", "solo", "--detached")
    proc = world.roost("mcp", check=False, env={"ROOST_AGENT_ID": "no-such-id"}, input="")
    assert proc.returncode != 0 and "no agent of roost home" in proc.stderr


def test_a_message_that_would_wake_a_child_over_the_limits_is_refused(world: Env) -> None:
    # Issue 18.5: stop_agent, create_agent, then send_message to the stopped child woke it
    # without a check: 6 live children under max_children = 2.
    world.roost("spawn", "lead", "--detached")
    (world.home / "config.toml").write_text("[orchestration]\nmax_children = 2\nmax_tree = 3\n")
    lead_id = world.ls()["lead"]["id"]

    async def script(session: ClientSession, call: Call) -> Any:
        for name in ("one", "two"):
            assert (await call("create_agent", provider="claude", name=name))["name"] == name
        await call("stop_agent", name="one")
        assert (await call("create_agent", provider="claude", name="three"))["name"] == "three"
        refused = await call("send_message", name="one", text="wake up")
        states = {r["name"]: r["state"] for r in await call("list_agents")}
        assert states["one"] == "stopped", states  # not woken by the refused message
        await call("stop_agent", name="two")
        woken = await call("send_message", name="one", text="your turn")
        return refused, woken

    refused, woken = run_client(world, lead_id, script)
    assert "orchestration.max_children = 2" in refused.get("error", ""), refused
    assert woken["delivered"] is True, woken  # a free place: the message wakes it
    live = {n: a["state"] for n, a in world.ls().items() if n != "lead"}
    assert live == {"one": "running", "two": "stopped", "three": "running"}


def test_an_idempotency_key_is_bound_and_outlives_no_dead_claimer(world: Env) -> None:
    # Issue 18.7: a `roost mcp` killed after claiming a key left it "under way" forever, and a
    # key reused for another child returned the first child's receipt and sent nothing.
    world.roost("spawn", "lead", "--detached")
    lead_id = world.ls()["lead"]["id"]
    import sqlite3  # what a `roost mcp` killed -9 after its claim leaves: a claim, no result

    db = sqlite3.connect(world.home / "roost.db")
    with db:
        db.execute(
            "INSERT INTO requests (caller, key, kind, at) VALUES (?, 'k-dead', 'send', "
            "'2026-01-01T00:00:00+00:00')",
            (lead_id,),
        )
    db.close()

    async def script(session: ClientSession, call: Call) -> Any:
        for name in ("one", "two"):
            await call("create_agent", provider="claude", name=name)
        await call("wait_for_agents", timeout_seconds=20)
        retried = await call(
            "send_message", name="one", text="after a crash", idempotency_key="k-dead"
        )
        first = await call("send_message", name="one", text="hello", idempotency_key="k-1")
        other_child = await call("send_message", name="two", text="hello", idempotency_key="k-1")
        other_text = await call("send_message", name="one", text="bye", idempotency_key="k-1")
        again = await call("send_message", name="one", text="hello", idempotency_key="k-1")
        return retried, first, other_child, other_text, again

    retried, first, other_child, other_text, again = run_client(world, lead_id, script)
    assert retried["delivered"] is True and retried["duplicate"] is False, retried
    assert first["delivered"] is True
    for refused in (other_child, other_text):
        assert "idempotency key 'k-1' was used for another message" in refused.get("error", ""), (
            refused
        )
    assert again["duplicate"] is True and again["delivered"] is True
    assert prompts(world, "two") == []
    assert prompts(world, "one") == ["after a crash", "hello"]


def prompts(world: Env, name: str) -> list[str]:
    from roost.providers import hooks

    log = world.home / "agents" / world.ls()[name]["id"] / "hooks.log"
    found = [hooks.parse_line(line) for line in log.read_text().splitlines()]
    return [str(e[2].get("prompt")) for e in found if e is not None and e[1] == "UserPromptSubmit"]


def test_a_key_claimed_by_a_server_killed_9_is_free_for_the_retry(world: Env) -> None:
    # Issue 18.7, as found: kill -9 of `roost mcp` while its send (to a busy child) held a key;
    # every retry was told "still under way", even 45 s later.
    import os
    import signal
    import sqlite3
    import subprocess

    world.roost("spawn", "lead", "--detached")
    lead_id = world.ls()["lead"]["id"]

    async def create(session: ClientSession, call: Call) -> Any:
        return await call("create_agent", provider="claude", name="one", prompt="work 30")

    assert run_client(world, lead_id, create)["prompt_delivered"] is True
    server = subprocess.Popen(
        [sys.executable, "-m", "roost", "mcp"],
        cwd=str(world.tmp),
        env={**world.env, "ROOST_AGENT_ID": lead_id},
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert server.stdin is not None
    for message in (
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "send_message",
                "arguments": {"name": "one", "text": "after the kill", "idempotency_key": "k9"},
            },
        },
    ):
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()

    def claimed() -> bool:
        db = sqlite3.connect(world.home / "roost.db")
        try:
            return (
                db.execute("SELECT 1 FROM requests WHERE key = 'k9' AND result IS NULL").fetchone()
                is not None
            )
        finally:
            db.close()

    world.wait_for(claimed, timeout=30, what="the key claimed")
    # while it waits for the busy child (30 s of work: a loaded machine took over 8 s to get here)
    os.kill(server.pid, signal.SIGKILL)
    server.wait(timeout=10)

    async def retry(session: ClientSession, call: Call) -> Any:
        return await call("send_message", name="one", text="after the kill", idempotency_key="k9")

    receipt = run_client(world, lead_id, retry)
    assert receipt["delivered"] is True and receipt["duplicate"] is False, receipt
    assert prompts(world, "one") == ["work 30", "after the kill"]
