"""Token usage and its estimated cost per agent, tab and orchestration tree (issue 23 part 4):
each agent's session file is read from where the last read stopped (store/usage.py's cursor),
only its complete lines, and what they hold (core/usage.py) is added to the stored totals in
the same transaction that moves the cursor. A file replaced (another inode) or cut shorter than
the cursor is read again from its start, its old totals dropped. `roost ls` only reads the
totals; the service (at each turn's end) and `roost usage` read the files."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from roost.core import prices, usage
from roost.core.model import Agent
from roost.core.usage import Line, Tokens
from roost.ops.context import App
from roost.providers.base import get as provider
from roost.store import usage as rows
from roost.system import untrusted

CHUNK = 4 << 20  # bytes read at most per file per pass: a huge backlog is read over passes


def session_file(app: App, agent: Agent) -> Path | None:
    """The file where the agent's CLI records its current conversation's usage, if any."""
    return provider(agent.provider).usage_file(agent, app.environ)


def scan(app: App, agents: Iterable[Agent]) -> int:
    """Read what each agent's session file gained since the last read; how many tokens that
    added in all."""
    return sum(scan_one(app, a) for a in agents if a.provider in usage.READERS)


def scan_one(app: App, agent: Agent) -> int:
    path = session_file(app, agent)
    if path is None:
        return 0
    try:
        with untrusted.open_file(path) as fh:
            inode, size = os.fstat(fh.fileno()).st_ino, os.fstat(fh.fileno()).st_size
            known = rows.cursor(app.store.conn, agent.id, str(path))
            fresh = known is None or known[0] != inode or known[1] > size
            offset, state = (0, {}) if fresh or known is None else (known[1], known[2])
            fh.seek(offset)
            data = fh.read(CHUNK)
    except OSError:
        return 0  # not written yet, or gone: nothing to add
    end = data.rfind(b"\n") + 1  # a line still being written waits for the next read
    found, state = usage.read(
        agent.provider, data[:end].decode("utf-8", "replace").splitlines(), state
    )
    with app.store.write() as c:
        if fresh and known is not None:
            rows.restart(c, agent.id, str(path))
        rows.advance(c, agent.id, str(path), inode, offset + end, state, found)
    return sum(t.total for t in found.values())


def price_table(app: App) -> dict[str, tuple[float, ...]]:
    given = app.settings.get("prices")
    return prices.table(given if isinstance(given, dict) else None)


def report(
    app: App, agents: Sequence[Agent], since: str | None, group: str = "agent"
) -> list[Line]:
    """The stored totals of `agents` from day `since` on, per agent (or per `tab`, per `tree`:
    its orchestration root), day and model."""
    table = price_table(app)
    by_id = {a.id: a for a in agents}
    summed: dict[tuple[str, str, str], Tokens] = {}
    for agent_id, day, model, tokens in rows.totals(app.store.conn, list(by_id), since):
        key = (owner(by_id[agent_id], group), day, model)
        summed[key] = summed.get(key, Tokens()) + tokens
    return [
        Line(who, day, model, t, prices.cost(model, t, table))
        for (who, day, model), t in sorted(summed.items())
    ]


def owner(agent: Agent, group: str) -> str:
    if group == "tab":
        return agent.tab or "(no tab)"
    if group == "tree":
        return agent.orchestration_root_name or agent.name
    return agent.name


def tree_of(app: App, root: Agent) -> list[Agent]:
    """The agent and every agent of the orchestration tree under it (children, theirs...)."""
    everyone = app.store.agents()
    tree, ids = [root], {root.id}
    grew = True
    while grew:
        grew = False
        for a in everyone:
            if a.orchestration_parent in ids and a.id not in ids:
                tree.append(a)
                ids.add(a.id)
                grew = True
    return tree


def merged(lines: list[Line], who: str) -> list[Line]:
    """`lines` summed per day and model under one name (a tree as one)."""
    by: dict[tuple[str, str], list[Line]] = {}
    for ln in lines:
        by.setdefault((ln.day, ln.model), []).append(ln)
    out = []
    for (day, model), group in sorted(by.items()):
        tokens, cost, unpriced = usage.summed(group)
        out.append(Line(who, day, model, tokens, None if unpriced else cost))
    return out


def tokens_by_agent(app: App) -> dict[str, int]:
    """Agent id -> tokens used, as stored (no file read): the TUI's column."""
    return rows.tokens_by_agent(app.store.conn)
