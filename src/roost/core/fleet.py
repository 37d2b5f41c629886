"""One view of the fleet (`roost ls --all`, `roost watch --all`): local and remote agents'
JSON rows, each naming its host, and the table people read. Pure: rows in, text out."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from roost.core.present import visible

LOCAL = "local"  # the table's word for this machine; JSON says null


@dataclass(frozen=True, slots=True)
class HostView:
    """One host's answer to `roost ls --json`: its agents' rows, or why it did not answer
    (the TUI and the web view group the fleet by these)."""

    host: str
    agents: tuple[dict[str, object], ...] = ()
    unreachable: str | None = None


def tagged(rows: Iterable[dict[str, object]], host: str | None) -> list[dict[str, object]]:
    """Each row with its `host` first (None: this machine).

    >>> tagged([{"name": "a"}], "build")
    [{'host': 'build', 'name': 'a'}]
    """
    return [{"host": host, **{k: v for k, v in r.items() if k != "host"}} for r in rows]


def combined(
    local: Iterable[dict[str, object]], views: Iterable[HostView]
) -> tuple[list[dict[str, object]], list[tuple[str, str]]]:
    """`ls --all`'s rows (this machine's, then each host's that answered, each tagged) and the
    hosts that did not answer with why.

    >>> views = [HostView("b", ({"name": "x"},)), HostView("c", unreachable="no")]
    >>> combined([{"name": "a"}], views)
    ([{'host': None, 'name': 'a'}, {'host': 'b', 'name': 'x'}], [('c', 'no')])
    """
    rows, missing = tagged(local, None), []
    for view in views:
        if view.unreachable is not None:
            missing.append((view.host, view.unreachable))
        else:
            rows += tagged(view.agents, view.host)
    return rows, missing


def unreachable_row(host: str, reason: str) -> dict[str, object]:
    """--json's entry for a host that did not answer: no agents, its reason."""
    return {"host": host, "unreachable": reason}


def table(rows: list[dict[str, object]]) -> str:
    """HOST, NAME, STATUS, PROVIDER, PID, CWD: the rows of every reachable host.

    >>> print(table([{"host": None, "name": "a", "status": "idle", "provider": "claude",
    ...               "pid": 7, "cwd": "/w"}]), end="")
    HOST   NAME  STATUS  PROVIDER  PID  CWD
    local  a     idle    claude    7    /w
    """
    if not rows:
        return "no agents on any host\n"
    lines: list[tuple[str, ...]] = [("HOST", "NAME", "STATUS", "PROVIDER", "PID", "CWD")]
    for r in rows:
        status = str(r.get("status") or r.get("state") or "unknown")
        lines.append(
            (
                str(r.get("host") or LOCAL),
                str(r.get("name")),
                status,
                str(r.get("provider")),
                str(r.get("pid") or "-"),
                str(r.get("cwd")),
            )
        )
    lines = [tuple(visible(cell) for cell in line) for line in lines]  # a host's strings
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]) - 1)]
    return "".join(
        "  ".join(cell.ljust(w) for cell, w in zip(line[:-1], widths, strict=True))
        + "  "
        + line[-1]
        + "\n"
        for line in lines
    )


def unreachable_line(host: str, reason: str) -> str:
    """stderr's one line for a host that did not answer (the rest of the view still prints).

    >>> unreachable_line("build", "did not answer within 5 s")
    'roost: host build unreachable: did not answer within 5 s'
    """
    return f"roost: host {visible(host)} unreachable: {visible(reason)}"
