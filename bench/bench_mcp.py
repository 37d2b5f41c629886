"""Memory for roost's MCP tools with N agents: N per-agent `roost mcp` stdio processes (today's
wiring, each started as its CLI starts it) against the one shared endpoint (`roost mcp serve`,
the server the roost service hosts) serving all N. Every agent connects, lists the tools and
calls `list_agents` once, so each server has loaded what it needs to answer.

Measured: total RSS (and USS) of the N processes against the endpoint's one process after the
N agents' calls, and the time from a server's start until it answers the first tool call.
Target: the endpoint's RSS <= 1/10 of the N processes' total.

    .venv/bin/python bench/bench_mcp.py [--agents 20] [--json]
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import psutil

from roost.core.model import INTENT_RUNNING, Agent
from roost.store.db import Store
from roost.system.config import Paths

from _common import PYTHON, finish, mb, parser, table, world

TARGET = 0.1
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
CALL = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list_agents"}}


def seed(home: Path, work: Path, count: int) -> list[tuple[str, str]]:
    """`count` agents with a current launch each: (id, launch token)."""
    store = Store.open(Paths(home).db)
    made = []
    for i in range(count):
        agent = Agent(
            id=str(uuid.uuid4()),
            name=f"agent-{i:02d}",
            provider="claude",
            cwd=str(work),
            home=f"agent-{i:02d}",
            provider_session_id=str(uuid.uuid4()),
            created_at="2026-01-01T00:00:00.000+00:00",
            intent=INTENT_RUNNING,
        )
        store.insert(agent)
        token = uuid.uuid4().hex
        store.begin_launch(agent.id, token, time.time())
        made.append((agent.id, token))
    store.close()
    return made


def rss(pids: list[int]) -> tuple[int, int]:
    total_rss = total_uss = 0
    for pid in pids:
        info = psutil.Process(pid).memory_full_info()
        total_rss += info.rss
        total_uss += info.uss
    return total_rss, total_uss


def stdio_server(env: dict[str, str], cwd: Path, agent_id: str) -> subprocess.Popen[str]:
    """One agent's `python -P -m roost mcp`, as mcpwire.server_entry starts it, on pipes."""
    return subprocess.Popen(
        [PYTHON, "-P", "-m", "roost", "mcp"],
        env={**env, "ROOST_AGENT_ID": agent_id},
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def stdio_servers(env: dict[str, str], cwd: Path, agents: list[tuple[str, str]]) -> dict[str, Any]:
    """Today: one `python -P -m roost mcp` per agent, as mcpwire.server_entry starts it."""
    procs, firsts = [], []
    try:
        for agent_id, _token in agents:
            started = time.monotonic()
            proc = stdio_server(env, cwd, agent_id)
            procs.append(proc)
            assert proc.stdin is not None and proc.stdout is not None
            for message in (INIT, INITIALIZED, LIST, CALL):
                proc.stdin.write(json.dumps(message) + "\n")
                proc.stdin.flush()
                if "id" in message:
                    reply = json.loads(proc.stdout.readline())
                    assert "result" in reply, reply
            firsts.append(time.monotonic() - started)
        total, unique = rss([p.pid for p in procs])
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    return {"processes": len(procs), "rss": total, "uss": unique, "first_call_s": firsts}


def post(url: str, token: str, message: dict[str, Any]) -> dict[str, Any] | None:
    request = urllib.request.Request(
        url,
        data=json.dumps(message).encode(),
        method="POST",
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
    )
    with urllib.request.urlopen(request, timeout=60) as reply:
        body = reply.read()
    return json.loads(body) if body else None


def endpoint(env: dict[str, str], cwd: Path, agents: list[tuple[str, str]]) -> dict[str, Any]:
    """The shared endpoint: one process for every agent."""
    started = time.monotonic()
    proc = subprocess.Popen(
        [PYTHON, "-P", "-m", "roost", "mcp", "serve"],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        first = None
        for _agent_id, token in agents:
            for message in (INIT, INITIALIZED, LIST, CALL):
                reply = post(url, token, message)
                assert reply is None or "result" in reply, reply
            first = first or time.monotonic() - started
        total, unique = rss([proc.pid])
    finally:
        proc.terminate()
        proc.wait(10)
    return {"processes": 1, "rss": total, "uss": unique, "first_call_s": [first]}


def main() -> int:
    p = parser(__doc__ or "")
    p.add_argument("--agents", type=int, default=20)
    args = p.parse_args()
    with world("mcp") as w:
        w.roost("ls")  # creates the home and its store
        agents = seed(w.roost_home, w.tmp / "work", args.agents)
        stdio = stdio_servers(w.env, w.tmp, agents)
        shared = endpoint(w.env, w.tmp, agents)
    ratio = shared["rss"] / stdio["rss"]
    rows = [
        ["server", "processes", "RSS MB", "USS MB", "first call s (median)"],
        [
            f"roost mcp x {args.agents}",
            stdio["processes"],
            mb(stdio["rss"]),
            mb(stdio["uss"]),
            f"{sorted(stdio['first_call_s'])[len(stdio['first_call_s']) // 2]:.2f}",
        ],
        [
            "shared endpoint",
            1,
            mb(shared["rss"]),
            mb(shared["uss"]),
            f"{shared['first_call_s'][0]:.2f}",
        ],
    ]
    human = table(rows) + f"\n\nendpoint / per-agent total RSS: {ratio:.3f} (target <= {TARGET})"
    results = {"agents": args.agents, "stdio": stdio, "endpoint": shared, "ratio": ratio}
    return finish("bench_mcp", results, human, ratio <= TARGET, args.json)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
