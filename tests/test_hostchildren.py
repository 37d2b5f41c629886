"""Children on a host (issue 24 part 4, docs/HOSTS.md "Children on a host"), over real OpenSSH
(tests/sshd.py): a parent here (a fake claude) creates a child on host h1 through its MCP tools
(`roost mcp`, the SDK's client), the child's turn ends on h1, and the parent hears of it as of a
local child: the notice "[roost] h1:kid finished its turn: ..." as its next prompt, through this
roost's service following h1's event stream. The service stopped and started between turns,
or h1's connection dropped, resumes by seq: nothing missed, nothing doubled."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import pytest
from sshd import Fleet, Host, kill_masters
from test_mcp_server import Call, run_client
from test_notify_e2e import prompts

from conftest import Env

if TYPE_CHECKING:
    from mcp import ClientSession

pytestmark = pytest.mark.tmux

# `wait(fn)`: anything blocking, off the session's loop; `steps(call, wait)`: one session's work
Wait: TypeAlias = Callable[[Callable[[], Any]], Awaitable[Any]]
Steps: TypeAlias = Callable[[Call, Wait], Awaitable[None]]


def unprefixed(found: Any, tool: str) -> Any:
    """A tool's answer; an error without the SDK's prefix (the rest is roost's words)."""
    if isinstance(found, dict) and "error" in found:
        return {"error": found["error"].removeprefix(f"Error executing tool {tool}: ")}
    return found


def call(world: Env, agent_id: str, tool: str, **args: Any) -> Any:
    async def script(session: ClientSession, call: Call) -> Any:
        return await call(tool, **args)

    return unprefixed(run_client(world, agent_id, script), tool)


def session_of(world: Env, agent_id: str, steps: Steps) -> None:
    """`steps(call, wait)` in one MCP session of the agent (one `roost mcp` for many calls):
    `call(tool, **args)` a tool, `wait(fn)` anything blocking, off the session's loop."""
    import anyio

    async def script(session: ClientSession, call_tool: Call) -> None:
        async def call(tool: str, **args: Any) -> Any:
            return unprefixed(await call_tool(tool, **args), tool)

        async def wait(fn: Callable[[], Any]) -> Any:
            return await anyio.to_thread.run_sync(fn)

        await steps(call, wait)

    run_client(world, agent_id, script)


def recorded(world: Env) -> list[tuple[Any, ...]]:
    """The rows of children on hosts and the queued notices, read from the local store."""
    conn = sqlite3.connect(Path(world.home) / "roost.db")
    try:
        children = conn.execute("SELECT host, name, status FROM host_children").fetchall()
        notices = conn.execute("SELECT child_name, status FROM notifications").fetchall()
    finally:
        conn.close()
    return [*children, *notices]


def stops_on(host: Host, name: str) -> int:
    """How many turns the child ended on its host (its Stop hook lines)."""
    agent_id = host.world.ls()[name]["id"]
    log = Path(host.world.home) / "agents" / agent_id / "hooks.log"
    return sum("\tStop\t" in line for line in log.read_text().splitlines()) if log.exists() else 0


def told(world: Env) -> list[str]:
    return [p for p in prompts(world, "lead") if p.startswith("[roost]")]


def test_a_child_on_a_host_tells_its_parent_here_across_a_service_restart(fleet: Fleet) -> None:
    h1 = fleet.add("h1")
    local = fleet.local
    local.roost("spawn", "lead", "--detached")
    local.roost("spawn", "other", "--detached")
    lead_id, other_id = local.ls()["lead"]["id"], local.ls()["other"]["id"]
    local.roost("service", "stop")  # its turn ends while no one here follows h1
    first = "[roost] h1:kid finished its turn: done working"

    async def lead(call: Call, wait: Wait) -> None:
        # a turn over at once: no look on h1 sees it working (as on a loaded machine), and
        # its end is still a turn's end (the host's send records it begun)
        made = await call("create_agent", provider="claude", prompt="work 0", name="kid",
                          host="h1")  # fmt: skip
        assert made["name"] == "h1:kid" and made["host"] == "h1" and made["parent"] == "lead"
        assert made["prompt_delivered"] is True
        assert h1.world.ls()["kid"]["state"] == "running"  # spawned there, by h1's roost
        assert "kid" not in local.ls()  # nothing of it is an agent here
        await wait(lambda: local.wait_for(lambda: stops_on(h1, "kid") == 1, 30, "its Stop"))
        assert told(local) == []
        local.roost("service", "start")  # reads h1's stream from where it stood: the turn's end
        await wait(lambda: local.wait_for(lambda: told(local) == [first], 40, "the parent told"))

        listed = {r["name"]: r for r in await call("list_agents")}
        assert listed["h1:kid"]["parent"] == "lead" and listed["h1:kid"]["host"] == "h1"
        assert listed["h1:kid"]["status"] == "idle"
        refused = await call("send_message", name="h1:nobody", text="hi")  # not created here
        assert refused == {"error": "no agent named 'h1:nobody' among the children on hosts"}
        read = await call("read_conversation", name="h1:kid", messages=2)  # as h1 reads it
        assert read == {
            "name": "h1:kid",
            "source": "transcript",
            "messages": [
                {"role": "user", "text": "work 0"},
                {"role": "assistant", "text": "done working"},
            ],
        }, read
        h1.world.roost("place", "kid", "--tab", "main")  # its person there put it on screen
        assert await call("park_agent", name="h1:kid") == {"name": "h1:kid", "parked": True}
        assert h1.world.ls()["kid"]["placement"] == "detached"

        local.roost("service", "stop")
        sent = await call("send_message", name="h1:kid", text="work 0")
        assert sent["delivered"] is True, sent
        await wait(lambda: local.wait_for(lambda: stops_on(h1, "kid") == 2, 30, "2nd turn"))
        local.roost("service", "start")
        await wait(lambda: local.wait_for(lambda: len(told(local)) == 2, 40, "the 2nd notice"))

    session_of(local, lead_id, lead)
    kill_masters(str(fleet.ssh_config))  # h1's stream drops: followed again from its cursor
    # and the parent sleeps: woken for the notice, as for a local child's (between sessions:
    # a hibernate ends every process of the agent's, its `roost mcp` too)
    local.roost("hibernate", "lead")

    # (one call in a session of its own: the wake ends every process tagged as the parent's,
    # which a test's `roost mcp` with the parent's id is; its 3 s of work leave time to close)
    sent = call(local, lead_id, "send_message", name="h1:kid", text="work 3")
    assert sent["delivered"] is True, sent
    local.wait_for(lambda: len(told(local)) == 3, 40, "the 3rd notice")
    assert local.ls()["lead"]["state"] == "running"

    async def lead_again(call: Call, wait: Wait) -> None:
        local.roost("service", "stop")
        local.roost("service", "start")  # read again from its cursor: nothing new, nothing twice
        waited = await call("wait_for_agents", names=["h1:kid"], timeout_seconds=20)
        assert waited["children"] == [
            {"name": "h1:kid", "status": "idle", "last_reply": "done working"}
        ], waited
        await wait(lambda: local.wait_for(lambda: local.ls()["lead"]["status"] == "idle", 30))
        assert told(local) == [first, first, first]
        assert local.roost("reply", "h1:kid").stdout == "done working\n"  # its last words there
        assert recorded(local) == [("h1", "kid", "idle"), *[("h1:kid", "finished")] * 3]

    session_of(local, lead_id, lead_again)

    async def stranger(
        call: Call, wait: Wait
    ) -> None:  # a child on a host is in its parent's scope only
        refused = await call("send_message", name="h1:kid", text="hi")
        assert refused == {
            "error": "h1:kid is not in your subtree: you may act only on yourself and the "
            "agents you created (and theirs)"
        }
        assert [r["name"] for r in await call("list_agents")] == ["other"]
        for tool in ("read_conversation", "park_agent"):
            refused = await call(tool, name="h1:kid")
            assert "not in your subtree" in refused["error"], (tool, refused)

    session_of(local, other_id, stranger)

    async def done(call: Call, wait: Wait) -> None:
        local.roost("service", "stop")  # (what its stop tells the parent is not this test's)
        assert await call("stop_agent", name="h1:kid") == {"name": "h1:kid", "stopped": True}
        assert h1.world.ls()["kid"]["state"] == "stopped"
        removed = await call("remove_agent", name="h1:kid", confirm=True)
        assert removed == {"name": "h1:kid", "removed": True}
        assert "kid" not in h1.world.ls()
        assert recorded(local) == [("h1:kid", "finished")] * 3

    session_of(local, lead_id, done)


def test_an_unknown_or_unreachable_host_is_one_clear_error_and_nothing_recorded(
    fleet: Fleet,
) -> None:
    h1 = fleet.add("h1")
    fleet.local.roost("host", "add", "h2", "h2.invalid")  # no such machine: ssh cannot reach it
    local = fleet.local
    local.roost("spawn", "lead", "--detached")
    lead_id = local.ls()["lead"]["id"]
    local.roost("service", "stop")

    unknown = call(local, lead_id, "create_agent", provider="claude", name="kid", host="nope")
    assert unknown == {"error": "no host named 'nope' (roost host ls; roost host add NAME DEST)"}, (
        unknown
    )

    down = call(local, lead_id, "create_agent", provider="claude", name="kid", host="h2")
    assert down["error"].startswith("host h2 unreachable: "), down
    assert "\n" not in down["error"]

    bad = call(local, lead_id, "create_agent", provider="claude", prompt="a\x00b", host="h1")
    assert bad["error"].startswith("invalid prompt: "), bad  # as a local child's, before ssh

    h1.roost("spawn", "kid", "--detached")  # the name is taken there: refused, not woken
    taken = call(local, lead_id, "create_agent", provider="claude", name="kid", host="h1")
    assert taken == {"error": "host h1 has an agent named 'kid'; choose another name"}, taken
    assert recorded(local) == []
    assert sorted(local.ls()) == ["lead"]
    assert sorted(h1.world.ls()) == ["kid"]  # only the one spawned there by hand


def test_reply_of_an_unknown_agent_is_one_clear_line(world: Env) -> None:
    found = world.roost_inprocess("reply", "nobody")
    assert found.returncode == 4
    assert found.stderr.strip().splitlines() == ["roost: no agent named 'nobody' (see `roost ls`)"]
