"""The shared MCP endpoint's address is the roost home's for good (issue 36 point 2): an agent
launched with it keeps roost's tools across `roost service stop; roost service start` and a
kill -9 of the service (the next service takes the same port again, past the last one's
lingering connections); a port another program took is said loudly (the service's status,
doctor: whose tools are cut), never swapped for another behind the agents' backs. Real tmux,
the fake claude, an HTTP client posting to the recorded URL as an agent's CLI does."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from test_mcp_http import INITIALIZE, token_of

from roost.core import endpoint
from roost.core.errors import RoostError
from roost.mcp import lazy
from roost.ops import mcpendpoint

from conftest import Env


def status(world: Env) -> dict[str, Any]:
    return json.loads(world.roost("service", "status", "--json").stdout)


def doctor(world: Env) -> tuple[int, dict[str, Any]]:
    proc = world.roost("doctor", "--json", check=False)
    return proc.returncode, json.loads(proc.stdout)


def checks(report: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [c for c in report["checks"] if c["name"] == name]


def launched_with_endpoint(world: Env, name: str) -> str:
    """An agent (the fake claude) launched while the service serves: the URL it was given."""
    world.start_service()
    world.wait_for(lambda: mcpendpoint.live_url(world.home), 30, "the endpoint")
    world.roost("spawn", name, "--detached")
    agent_id = world.ls()[name]["id"]
    config = json.loads((world.home / "agents" / agent_id / "mcp.json").read_text())
    return str(config["mcpServers"]["roost"]["url"])


def connect(url: str) -> http.client.HTTPConnection:
    parts = urlsplit(url)
    return http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)


def initialize(conn: http.client.HTTPConnection, url: str, token: str) -> int:
    """An MCP initialize, as an agent's CLI posts it (kept alive): the answer's status."""
    conn.request(
        "POST",
        urlsplit(url).path,
        body=INITIALIZE,
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {token}",
        },
    )
    reply = conn.getresponse()
    reply.read()
    return reply.status


def serving_again(world: Env, gone: int) -> dict[str, Any]:
    return world.wait_for(
        lambda: (s := status(world))["running"] and s["pid"] != gone and "mcp" in s["serves"] and s,
        60,
        "the service serving again",
    )


@pytest.mark.tmux
def test_the_address_an_agent_was_given_outlives_a_stop_a_start_and_a_kill_9(world: Env) -> None:
    url = launched_with_endpoint(world, "lead")
    token = token_of(world, "lead")
    assert initialize(connect(url), url, token) == 200
    first = status(world)["pid"]

    world.roost("service", "stop")
    assert mcpendpoint.recorded(world.home) == url  # kept: the home's address
    assert mcpendpoint.live_url(world.home) is None  # but nobody serves it: launches know
    world.start_service()
    assert status(world)["endpoint"] == url
    assert initialize(connect(url), url, token) == 200

    # A kill -9 while a connection is open: the dead server's side of it lingers (FIN_WAIT2,
    # then TIME_WAIT) on the port; the next service takes the port again all the same.
    lingering = connect(url)
    assert initialize(lingering, url, token) == 200
    second = status(world)["pid"]
    assert second != first
    os.kill(second, signal.SIGKILL)
    back = serving_again(world, second)  # its pane's hook restarts it
    assert back["endpoint"] == url
    assert initialize(connect(url), url, token) == 200
    lingering.close()


@pytest.mark.tmux
def test_doctor_says_whose_tools_are_cut_while_nobody_serves_their_address(world: Env) -> None:
    url = launched_with_endpoint(world, "lead")
    code, report = doctor(world)
    assert [c["ok"] for c in checks(report, "mcp endpoint")] == [True], report
    assert checks(report, "service")[0]["ok"], report

    world.roost("service", "stop")
    code, report = doctor(world)
    cut = checks(report, "mcp endpoint")
    assert code != 0 and not report["ok"], report
    assert len(cut) == 1 and not cut[0]["ok"], cut
    assert url in cut[0]["detail"] and "lead" in cut[0]["detail"], cut
    assert "not running" in cut[0]["detail"] and cut[0]["advice"] == "roost service start"
    text = world.roost("doctor", check=False).stdout
    assert "all good" not in text and "roost tools are cut" in text

    world.start_service()
    code, report = doctor(world)
    assert [c["ok"] for c in checks(report, "mcp endpoint")] == [True], report


@pytest.mark.tmux
def test_a_port_another_program_took_is_said_loudly_and_kept(world: Env) -> None:
    url = launched_with_endpoint(world, "lead")
    world.roost("service", "stop")
    port = urlsplit(url).port
    squatter = socket.socket()
    # the service's own closed connections may leave the port in TIME_WAIT for a minute; a
    # listener here still keeps any other bind (SO_REUSEADDR or not) off it
    squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    squatter.bind(("127.0.0.1", port))
    squatter.listen()
    try:
        world.roost("service", "start")
        found = status(world)
        mcp = next(c for c in found["components"] if c["name"] == "mcp")
        assert found["running"] and mcp["state"] == "failed" and found["endpoint"] is None, found
        assert f"127.0.0.1:{port}" in mcp["error"] and f"pid {os.getpid()}" in mcp["error"]
        assert "lead" in mcp["error"], mcp
        assert "mcp failed" in world.roost("service", "status").stdout
        assert mcpendpoint.recorded(world.home) == url  # not moved behind the agents' backs
        assert mcpendpoint.live_url(world.home) is None  # a launch now gets its own roost mcp
        code, report = doctor(world)
        cut = checks(report, "mcp endpoint")
        assert code != 0 and not cut[0]["ok"] and "lead" in cut[0]["detail"], report
        assert "taken by" in cut[0]["detail"], cut
        assert not checks(report, "service")[0]["ok"], report
    finally:
        squatter.close()
    world.roost("service", "stop")
    world.start_service()
    assert status(world)["endpoint"] == url


def test_a_home_takes_its_own_port_first_and_moves_only_when_no_agent_holds_it(
    tmp_path: Path,
) -> None:
    home = tmp_path / "roost"
    home.mkdir()
    first = lazy.listen(home, lambda url: [])
    try:
        port = first.getsockname()[1]
        assert port in endpoint.home_ports(str(home))  # never recorded: the home's own
        url = f"http://127.0.0.1:{port}/mcp"
        mcpendpoint.record(home, url)
        first.listen()  # held: the next endpoint cannot take it
        with pytest.raises(RoostError, match=r"roost's tools are cut for lead, kid"):
            lazy.listen(home, lambda given: ["lead", "kid"] if given == url else [])
        moved = lazy.listen(home, lambda given: [])  # nobody's agent holds it: a new one
        assert moved.getsockname()[1] != port
        assert moved.getsockname()[1] in endpoint.home_ports(str(home))
        moved.close()
    finally:
        first.close()
    again = lazy.listen(home, lambda url: [])  # free again: the recorded port
    assert again.getsockname()[1] == port
    again.close()


def test_a_released_record_keeps_the_address_and_names_no_server(tmp_path: Path) -> None:
    url = "http://127.0.0.1:20001/mcp"
    mcpendpoint.record(tmp_path, url)
    assert mcpendpoint.server(tmp_path) == os.getpid()
    mcpendpoint.release(tmp_path, "http://127.0.0.1:20002/mcp")  # not its record: untouched
    assert mcpendpoint.server(tmp_path) == os.getpid()
    mcpendpoint.release(tmp_path, url)
    assert mcpendpoint.recorded(tmp_path) == url
    assert mcpendpoint.server(tmp_path) is None
    assert mcpendpoint.live_url(tmp_path) is None


def modern_capabilities(url: str, token: str) -> tuple[str, Any]:
    """What the endpoint tells a client of MCP 2026-07-28 (as Claude Code 2.1.332 speaks it):
    the version agreed and the server's capabilities."""
    import anyio
    import httpx2
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> tuple[str, Any]:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            return str(client.session.protocol_version), client.server_capabilities

    return anyio.run(main)


@pytest.mark.tmux
def test_the_endpoint_offers_no_stream_whose_loss_a_restart_would_be(world: Env) -> None:
    """No `subscriptions/listen`: a CLI that holds a listen stream sees a service restart as the
    server lost (Claude Code 2.1.332 then reconnects with backoff, roost's tools gone meanwhile,
    and for good after a long outage). roost's tools never change: nothing to listen for."""
    url = launched_with_endpoint(world, "lead")
    version, capabilities = modern_capabilities(url, token_of(world, "lead"))
    assert version == "2026-07-28"
    assert capabilities.tools is not None and not capabilities.tools.list_changed
    assert not (capabilities.resources and capabilities.resources.subscribe)


def test_a_recorded_url_with_a_bad_port_is_no_endpoint() -> None:
    """The record is a file in roost's home: a port that is no number (`urlsplit` raises on
    it) reads as no loopback endpoint, never as an error."""
    from roost.ops import mcpendpoint

    assert not mcpendpoint.is_loopback_url("http://127.0.0.1:99999x/mcp")
    assert mcpendpoint.is_loopback_url("http://127.0.0.1:20345/mcp")
