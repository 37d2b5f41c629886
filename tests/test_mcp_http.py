"""The shared MCP endpoint (mcp/http.py), run as `roost mcp serve` and spoken to with the SDK's
own streamable HTTP client, as an agent's CLI would: identity by launch token only, scope as
`roost mcp`'s, refusals for a forged, absent, old or foreign token, a non-loopback peer or
Host, and an oversized body. Real tmux, fake agent CLIs."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import httpx2
import pytest
from test_mcp_server import Call, Script

from roost.system.admission import Message, Receive, Scope, Send

from conftest import Env, make_env

if TYPE_CHECKING:
    from mcp import ClientSession

pytestmark = pytest.mark.tmux


@contextlib.contextmanager
def endpoint(world: Env, **extra_env: str) -> Iterator[str]:
    """`roost mcp serve` in the background; its URL (its first line of output)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "roost", "mcp", "serve"],
        env={**world.env, **extra_env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=world.tmp,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), proc.stderr.read() if proc.stderr else ""
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def token_of(world: Env, name: str) -> str:
    from roost.store.db import Store

    store = Store.open(world.home / "roost.db", reading=True)
    try:
        agent = store.require(name)
        launch = store.launch(agent.id)
    finally:
        store.close()
    assert launch is not None
    return launch[0]


def result_of(reply: Any) -> Any:
    if reply.is_error:
        return {"error": " ".join(c.text for c in reply.content)}
    data = reply.structured_content
    if isinstance(data, dict) and set(data) == {"result"}:
        return data["result"]
    return data if data is not None else json.loads(reply.content[0].text)


def as_agent(url: str, token: str | None, script: Script) -> Any:
    from mcp import ClientSession  # at the call, not at collection (test_mcp_server.run_client)
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}

    async def main() -> Any:
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()

            async def call(tool: str, **args: Any) -> Any:
                return result_of(await session.call_tool(tool, args))

            return await script(session, call)

    return anyio.run(main)


def post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, str]:
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
).encode()


def test_an_agent_is_who_its_launch_token_says_and_acts_in_its_scope(world: Env) -> None:
    world.roost("spawn", "lead", "--detached")
    world.roost("spawn", "stranger", "--detached")
    # The endpoint's own environment names "stranger": that must name nobody on this path.
    stranger_id = world.ls()["stranger"]["id"]
    with endpoint(world, ROOST_AGENT_ID=stranger_id) as url:

        async def lead(session: ClientSession, call: Call) -> Any:
            tools = {t.name for t in (await session.list_tools()).tools}
            assert "create_agent" in tools and "wait_for_agents" in tools
            made = await call("create_agent", provider="claude", prompt="hi", name="kid")
            assert made["name"] == "kid" and made["parent"] == "lead"
            return {a["name"] for a in await call("list_agents")}

        assert as_agent(url, token_of(world, "lead"), lead) == {"lead", "kid"}

        async def stranger(session: ClientSession, call: Call) -> Any:
            listed = {a["name"] for a in await call("list_agents")}
            refused = await call("stop_agent", name="kid")
            sent = await call("send_message", name="kid", text="obey me")
            return listed, refused, sent

        listed, refused, sent = as_agent(url, token_of(world, "stranger"), stranger)
        assert listed == {"stranger"}  # the second agent's token can't act as the first
        assert "error" in refused and "error" in sent
    assert world.ls()["kid"]["state"] == "running"


def test_a_forged_absent_or_old_token_is_refused(world: Env) -> None:
    world.roost("spawn", "lead", "--detached")
    old = token_of(world, "lead")
    world.roost("stop", "lead")
    world.roost("start", "lead")
    new = token_of(world, "lead")
    assert new != old
    with endpoint(world) as url:
        for headers in (
            {},
            {"Authorization": "Bearer " + "0" * 32},
            {"Authorization": f"Bearer {old}"},
            {"Authorization": new},  # not a bearer token
            {"X-Roost-Agent-Id": world.ls()["lead"]["id"]},
        ):
            status, _body = post(url, INITIALIZE, headers)
            assert status == 401, headers
        status, body = post(url, INITIALIZE, {"Authorization": f"Bearer {new}"})
        assert status == 200 and '"serverInfo"' in body


def test_an_agent_of_another_roost_home_cannot_reach_this_one(
    world: Env, tmp_path_factory: pytest.TempPathFactory
) -> None:
    other = make_env(tmp_path_factory.mktemp("o"))
    try:
        other.roost("spawn", "intruder", "--detached")
        foreign = token_of(other, "intruder")
        world.roost("spawn", "lead", "--detached")
        with endpoint(world) as url:
            status, _body = post(url, INITIALIZE, {"Authorization": f"Bearer {foreign}"})
            assert status == 401
    finally:
        subprocess.run(
            ["tmux", "-L", other.socket, "kill-server"], capture_output=True, env=other.env
        )


def test_only_loopback_and_bounded_bodies(world: Env) -> None:
    world.roost("spawn", "lead", "--detached")
    auth = {"Authorization": f"Bearer {token_of(world, 'lead')}"}
    with endpoint(world) as url:
        port = int(url.split(":")[2].split("/")[0])
        listening = {
            c.laddr.ip
            for c in __import__("psutil").net_connections("tcp")
            if c.laddr and c.laddr.port == port and c.status == "LISTEN"
        }
        assert listening == {"127.0.0.1"}
        # DNS rebinding: a page's request to a name that resolves here has a foreign Host
        status, _ = post(url, INITIALIZE, {**auth, "Host": "evil.example:80"})
        assert status in (400, 421)
        status, _ = post(url, INITIALIZE, {**auth, "Origin": "http://evil.example"})
        assert status in (400, 403)
        # a body over the bound is refused before the server reads it all
        status, _ = post(url, b"[" + b" " * (2 << 20) + b"]", auth)
        assert status == 413
        status, _ = post(url, INITIALIZE, auth)
        assert status == 200


def test_the_gate_refuses_a_peer_that_is_not_loopback(tmp_path: Path) -> None:
    from roost.mcp.http import gate

    reached: list[Scope] = []

    async def inner(scope: Scope, receive: Receive, send: Send) -> None:
        reached.append(scope)

    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    async def receive() -> Message:
        return {"type": "http.request", "body": b""}

    scope = {
        "type": "http",
        "client": ("192.0.2.7", 40000),
        "headers": [(b"authorization", b"Bearer whatever")],
    }
    anyio.run(gate(inner, tmp_path / "roost.db"), scope, receive, send)
    assert reached == [] and sent[0]["status"] == 403


def serving(world: Env) -> str:
    """The service started (as a launch would) and its endpoint listening: its URL."""
    from roost.ops import mcpendpoint

    world.roost("service", "start")
    return world.wait_for(lambda: mcpendpoint.live_url(world.home), 30, "the endpoint")


def test_each_cli_is_wired_to_the_services_endpoint_in_its_own_words(
    world: Env, private_home: Path
) -> None:
    import tomllib

    from test_mcp_wiring import codex_overrides, wired

    world.env["FAKE_AGENT_LOG_ENV"] = "GEMINI_CLI_SYSTEM_SETTINGS_PATH,ROOST_LAUNCH_TOKEN"
    url = serving(world)
    work = world.tmp / "work"
    bearer = {"Authorization": "Bearer ${ROOST_LAUNCH_TOKEN}"}
    world.roost("spawn", "cl", "--cwd", str(work), "--detached")
    config, settings = wired(world.last_start(1))
    assert config == {"mcpServers": {"roost": {"type": "http", "url": url, "headers": bearer}}}
    assert settings["permissions"] == {"allow": ["mcp__roost"]}
    world.roost("spawn", "cx", "--provider", "codex", "--cwd", str(work), "--detached")
    found = {
        k: tomllib.loads(f"v = {v}")["v"] for k, v in codex_overrides(world.last_start(2)).items()
    }
    assert found == {
        "url": url,
        "bearer_token_env_var": "ROOST_LAUNCH_TOKEN",
        "default_tools_approval_mode": "approve",
        "startup_timeout_sec": 30,
    }
    world.roost("spawn", "gm", "--provider", "gemini", "--cwd", str(work), "--detached")
    path = Path(world.last_start(3)["env"]["GEMINI_CLI_SYSTEM_SETTINGS_PATH"])
    entry = json.loads(path.read_text())["mcpServers"]["roost"]
    assert entry == {"httpUrl": url, "headers": bearer, "trust": True}
    for start in (1, 2, 3):  # the token is the launch's own, in its environment only
        assert world.last_start(start)["env"]["ROOST_LAUNCH_TOKEN"]


def test_a_child_created_on_the_endpoint_starts_with_its_parents_environment(world: Env) -> None:
    """As under the parent's own `roost mcp` (its process tree): the child gets the parent's
    API keys and PATH, not the service's environment."""
    world.env["FAKE_AGENT_LOG_ENV"] = "PARENTS_KEY"
    world.roost("spawn", "lead", "--detached", env={"PARENTS_KEY": "k-123"})
    with endpoint(world) as url:

        async def lead(session: ClientSession, call: Call) -> Any:
            return await call("create_agent", provider="claude", name="kid")

        assert as_agent(url, token_of(world, "lead"), lead)["parent"] == "lead"
    assert world.last_start(2)["env"].get("PARENTS_KEY") == "k-123"


@pytest.mark.parametrize(
    ("headers", "token"),
    [
        pytest.param({"authorization": "Bearer abc"}, "abc", id="bearer"),
        pytest.param({"authorization": "abc"}, None, id="no-scheme"),
        pytest.param({"authorization": "Bearer "}, None, id="empty"),
        pytest.param({}, None, id="none"),
    ],
)
def test_the_gate_reads_the_bearer_token(headers: dict[str, str], token: str | None) -> None:
    from roost.mcp.http import bearer

    assert bearer(headers) == token


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        pytest.param("127.0.0.1", True, id="ipv4-loopback"),
        pytest.param("::1", True, id="ipv6-loopback"),
        pytest.param("10.0.0.1", False, id="private-address"),
        pytest.param(None, False, id="no-peer"),
        pytest.param("localhost", False, id="a-name"),  # a name, not an address
    ],
)
def test_the_gate_knows_a_loopback_peer(host: str | None, loopback: bool) -> None:
    from roost.mcp.http import is_loopback

    assert is_loopback(host) is loopback


@pytest.mark.parametrize(
    ("body", "lists"),
    [
        pytest.param(b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}', True, id="one"),
        pytest.param(b'[{"jsonrpc":"2.0","id":2,"method":"tools/list"}]', True, id="a-batch"),
        pytest.param(
            b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"x":"tools/list"}}',
            False,
            id="the-words-in-a-call",
        ),
        pytest.param(b"tools/list{", False, id="not-json"),
    ],
)
def test_the_gate_knows_a_tools_list_request(body: bytes, lists: bool) -> None:
    from roost.mcp.http import lists_tools

    assert lists_tools(body) is lists


def loaded_sdk(pid: int) -> bool:
    """Whether the process mapped pydantic's compiled core, which the MCP SDK loads."""
    return "pydantic_core" in Path(f"/proc/{pid}/maps").read_text()


def test_the_service_loads_the_sdk_at_the_first_call_and_answers_it(world: Env) -> None:
    """The endpoint listens from the service's start, but the SDK and the HTTP server load only
    when a caller connects (mcp/lazy.py): launches, `live_url`'s check and an idle service
    never load them; the first call waits while they load, and is answered."""
    from roost.ops import mcpendpoint

    url = serving(world)
    service = int(world.tmux("display-message", "-p", "-t", "=_roost_service:", "#{pane_pid}"))
    # an agent whose CLI does not connect at its start (claude's, codex's and gemini's do)
    world.roost("spawn", "lead", "--detached", "--provider", "command", "--", "sleep", "1000")
    assert mcpendpoint.live_url(world.home) == url
    assert not loaded_sdk(service)

    async def lead(session: ClientSession, call: Call) -> Any:
        return await call("list_agents")

    assert [a["name"] for a in as_agent(url, token_of(world, "lead"), lead)] == ["lead"]
    assert loaded_sdk(service)


def test_a_record_whose_process_is_gone_or_not_roost_is_no_endpoint(tmp_path: Path) -> None:
    from roost.ops import mcpendpoint

    url = "http://127.0.0.1:9/mcp"
    other = subprocess.Popen(["sleep", "30"])
    try:
        for pid, live in ((other.pid, False), (2**22 + 1, False)):
            (tmp_path / mcpendpoint.ENDPOINT_FILE).write_text(json.dumps({"url": url, "pid": pid}))
            assert (mcpendpoint.live_url(tmp_path) is not None) is live
    finally:
        other.kill()
        other.wait()
