"""The shared MCP endpoint's facts below the MCP layer: who a launch token names, and where the
endpoint of this roost home listens (the file `mcp-endpoint` in ROOST_HOME: its URL, and the
pid of the process serving it while one does: mcp/lazy.py, mcp/http.py), so a launch can wire
its agent to it (ops/lifecycle.py). The URL stays recorded when its server stops: it is the
home's stable address, which every later endpoint takes again (core/endpoint.py).

Identity on the endpoint is the launch token alone (a per-launch secret in the agent's
environment, ROOST_LAUNCH_TOKEN), never a name the caller claims: ROOST_AGENT_ID means
nothing there. A token names the agent whose current launch it is; an earlier launch's token,
another home's or a made-up one names nobody.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
from pathlib import Path
from urllib.parse import urlsplit

from roost.core.endpoint import port_of
from roost.core.errors import RoostError
from roost.core.scope import Caller
from roost.ops.context import App
from roost.providers import mcpwire
from roost.system import handover, procs

ENDPOINT_FILE = "mcp-endpoint"
PATH = "/mcp"


def caller_for_token(app: App, token: str | None) -> Caller:
    """The agent holding `token` as its current launch's; refused otherwise. An agent on the
    endpoint never writes as a person's client: it acts on itself and its own subtree."""
    agent_id = app.store.agent_for_token(token) if token else None
    if agent_id is None:
        raise RoostError("no agent of this roost home holds that launch token")
    return Caller(agent_id, allow_write=False)


# What the endpoint's own environment decides, never the caller's saved one: which roost.
OWN = ("ROOST_HOME", "ROOST_TMUX_SOCKET", "TMUX_TMPDIR")


def acting_as(app: App, token: str | None) -> tuple[App, Caller]:
    """The caller, and the app to act in: with the environment the agent was started with
    (its API keys, PATH, provider settings: what a child it creates starts with, as under its
    own `roost mcp`, which ran in its process tree), this roost's own location kept."""
    caller = caller_for_token(app, token)
    assert caller.agent_id is not None
    saved = handover.recall_environment(app.paths.agent_dir(caller.agent_id))
    if saved is None:
        return app, caller
    own = {k: app.environ[k] for k in OWN if k in app.environ}
    kept = {k: v for k, v in saved.items() if k not in OWN}
    return dataclasses.replace(app, environ={**kept, **own}), caller


def holder(db: Path, token: str) -> str | None:
    """`caller_for_token` for the HTTP gate, which has no App: the agent id or None."""
    from roost.store.db import Store

    store = Store.open(db, reading=True)
    try:
        return store.agent_for_token(token)
    finally:
        store.close()


def endpoint_file(home: Path) -> Path:
    return home / ENDPOINT_FILE


def record(home: Path, url: str) -> None:
    """Say that this process serves this home's endpoint at `url` (0600, replaced atomically)."""
    _write(home, {"url": url, "pid": os.getpid()})


def release(home: Path, url: str) -> None:
    """This process no longer serves `url`. The address stays recorded, with no process: it is
    this home's for good (running agents were launched with it), and the next endpoint takes
    it again (mcp/lazy.py). Left alone when the record is no longer this process's."""
    if _record(home) == (url, os.getpid()):
        _write(home, {"url": url})


def _write(home: Path, content: dict[str, object]) -> None:
    path = endpoint_file(home)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(content, fh)
    os.replace(tmp, path)


def recorded(home: Path) -> str | None:
    """This home's endpoint address, served now or not; None before any endpoint listened."""
    return _record(home)[0]


def server(home: Path) -> int | None:
    """The pid of the process that recorded it serves the endpoint (None: nobody said so)."""
    return _record(home)[1]


def _record(home: Path) -> tuple[str | None, int | None]:
    """The recorded (url, pid of the process that serves it); Nones when there is none."""
    try:
        with open(endpoint_file(home), encoding="utf-8") as fh:
            found = json.load(fh)
    except (OSError, ValueError):
        return None, None
    if not isinstance(found, dict):
        return None, None
    url, pid = found.get("url"), found.get("pid")
    if not isinstance(url, str) or not is_loopback_url(url):
        return None, None
    return url, pid if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 else None


def wired(app: App) -> dict[str, list[str]]:
    """The running agents launched with a shared endpoint, by the URL they were given (their
    MCP config file names it): who loses roost's tools while nobody serves it. Sorted names."""
    live = {p.agent_id for p in app.tmux.list_panes() if p.agent_id and not p.dead}
    home = str(app.paths.home)
    found: dict[str, list[str]] = {}
    for agent in sorted(app.store.agents(), key=lambda a: a.name):
        url = mcpwire.entry(home, agent.id).get("url") if agent.id in live else None
        if isinstance(url, str):
            found.setdefault(url, []).append(agent.name)
    return found


def given(app: App, url: str) -> list[str]:
    """The running agents launched with the endpoint at `url`."""
    return wired(app).get(url, [])


def is_loopback_url(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme == "http" and parts.hostname == "127.0.0.1" and port_of(url) is not None


def live_url(home: Path, timeout: float = 0.5) -> str | None:
    """The recorded endpoint's URL when a live process says it serves it, else None: a cheap
    look (the tests' wait for an endpoint). A launch asks more (ops/lifecycle.py `_endpoint`):
    the running service's own endpoint, never one whose process is merely alive and stopping.
    Where /proc tells, the recording process alive and a roost is enough: a connection would
    make the service load the MCP SDK (mcp/lazy.py)."""
    url, pid = _record(home)
    if url is None or pid is None:
        return None  # no process serves it (a stopped service keeps its address recorded)
    alive = procs.roost_alive(pid)
    if alive is not None:
        return url if alive else None
    try:
        with socket.create_connection(("127.0.0.1", port_of(url) or 0), timeout=timeout):
            return url
    except OSError:
        return None
