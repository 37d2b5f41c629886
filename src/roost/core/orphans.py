"""Whose is a tagged process? Pure decisions over facts system/procs.py gathered.

Every agent process carries ROOST_HOME and ROOST_AGENT_ID (its roost home and its agent), and,
from its pane, TMUX ("<socket path>,<server pid>,<session>"). A process survives its pane when it
ignores the hangup (nohup, setsid children, a CLI deaf to SIGHUP) or when the whole tmux server
dies. Such a leftover is an orphan; started again beside it, an agent would run its conversation
twice. A process roost started under another tmux server that still runs (one roost home used
through two sockets) is not an orphan: it is the agent, running elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass
from typing import Literal

Whose = Literal["pane", "orphan", "elsewhere"]


@dataclass(frozen=True, slots=True)
class Tagged:
    """A process tagged with an agent of this roost home."""

    pid: int
    agent_id: str
    socket_path: str  # the tmux server its pane was on ("" when it carries no TMUX)
    server_pid: int | None  # that server's pid, when known
    server_alive: bool  # that server still runs
    roost_socket: str = ""  # ROOST_TMUX_SOCKET: the server roost started the agent on


def parse_tmux(value: str) -> tuple[str, int | None]:
    """TMUX's "<socket path>,<server pid>,<session>" -> (socket path, server pid).

    >>> parse_tmux("/tmp/tmux-1000/roost,4242,3")
    ('/tmp/tmux-1000/roost', 4242)
    >>> parse_tmux("")
    ('', None)
    """
    parts = value.rsplit(",", 2)
    if len(parts) != 3:
        return "", None
    return parts[0], int(parts[1]) if parts[1].isdigit() else None


def this_server(rows: Iterable[Mapping[str, str]]) -> tuple[int | None, set[str]]:
    """From `list-panes -a` rows (tmux/format.py's fields): this server's pid (None when none
    runs) and the agents with a live pane on it, as `whose` and `left_behind` take them.

    >>> row = {"server_pid": "42", "roost_id": "a", "pane_dead": "0"}
    >>> this_server([row, {**row, "roost_id": "b", "pane_dead": "1"}, {**row, "roost_id": ""}])
    (42, {'a'})
    >>> this_server([])
    (None, set())
    """
    rows = list(rows)
    first = rows[0]["server_pid"] if rows else ""
    live = {r["roost_id"] for r in rows if r["roost_id"] and r["pane_dead"] != "1"}
    return (int(first) if first.isdigit() else None), live


def whose(proc: Tagged, socket_path: str, server_pid: int | None, live: Set[str]) -> Whose:
    """ "pane": it belongs to its agent's live pane on this server (children that escaped a live
    agent's tree included); "elsewhere": it runs under another live tmux server; "orphan":
    anything else. `live` holds the agents with a live pane on this server, `server_pid` is this
    server's pid (None when none runs)."""
    if not proc.socket_path:  # no TMUX: only the agent's own liveness can vouch for it
        return "pane" if proc.agent_id in live else "orphan"
    if proc.socket_path == socket_path:
        # same socket, other server pid: a server that died (a socket has one server at a time)
        mine = server_pid is not None and proc.server_pid == server_pid
        return "pane" if mine and proc.agent_id in live else "orphan"
    # Under another server: the agent itself if roost started it there (its ROOST_TMUX_SOCKET
    # names that server), not a child the agent ran in some other tmux (the user's, say).
    started_there = proc.socket_path.rsplit("/", 1)[-1] == proc.roost_socket
    return "elsewhere" if proc.server_alive and started_there else "orphan"


def left_behind(
    found: Iterable[Tagged], socket_path: str, server_pid: int | None, live: Set[str]
) -> dict[str, list[int]]:
    """The orphans among `found` (whose() says so), by agent, their pids in order: what doctor
    lists and what the service reaps (docs/DECISIONS.md, "Service": reap).

    >>> dead = Tagged(7, "a", "/s", 41, False)
    >>> mine = Tagged(8, "b", "/s", 42, True)
    >>> left_behind([mine, dead, Tagged(5, "a", "", None, False)], "/s", 42, {"b"})
    {'a': [5, 7]}
    """
    by_agent: dict[str, list[int]] = {}
    for proc in found:
        if whose(proc, socket_path, server_pid, live) == "orphan":
            by_agent.setdefault(proc.agent_id, []).append(proc.pid)
    return {agent: sorted(pids) for agent, pids in by_agent.items()}


def describe(pids: list[int]) -> str:
    """How many processes, and which.

    >>> describe([7]), describe([7, 9])
    ('1 process (pid 7)', '2 processes (pids 7, 9)')
    """
    if len(pids) == 1:
        return f"1 process (pid {pids[0]})"
    return f"{len(pids)} processes (pids {', '.join(map(str, pids))})"
