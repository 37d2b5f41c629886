"""Token usage and its estimated cost per agent, tab and orchestration tree (issue 23 part 4):
each agent's session file is read from where the last read stopped (store/usage.py's cursor),
only its complete lines, and what they hold (usage/rules.py) is added to the stored totals in
the same transaction that moves the cursor. A file replaced (another inode) or cut shorter than
the cursor is read again from its start, its old totals dropped. `roost ls` only reads the
totals; the service (at each turn's end) and `roost usage` read the files."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

from roost.core import present
from roost.core.model import Agent
from roost.ops.context import App
from roost.providers.base import get as provider
from roost.store import usage as rows
from roost.system import untrusted
from roost.usage import prices
from roost.usage import rules as usage
from roost.usage.rules import Line, Tokens

CHUNK = 4 << 20  # bytes read at most per file per pass: a huge backlog is read over passes


def session_file(app: App, agent: Agent) -> Path | None:
    """The file where the agent's CLI records its current conversation's usage, if any."""
    return provider(agent.provider).usage_file(agent, app.environ)


def scan(app: App, agents: Iterable[Agent]) -> int:
    """Read what each agent's session file gained since the last read; how many tokens that
    added in all."""
    return sum(_isolated(app, a) for a in agents if a.provider in usage.READERS)


def _isolated(app: App, agent: Agent) -> int:
    """scan_one, where a fault in one agent's file is that agent's nothing: the service's
    budgets and every other agent's figures go on (an OverflowError on one line of one
    transcript once turned budgets off for all)."""
    try:
        return scan_one(app, agent)
    except (ValueError, OverflowError, RecursionError, MemoryError) as exc:
        import sys

        sys.stderr.write(f"roost: {agent.name}'s usage was not read: {type(exc).__name__}\n")
        return 0


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
            # a fork's first file begins with its original's history (issue 35)
            start = rows.fork_point(app.store.conn, agent.id, str(path)) if fresh else None
            state = state if start is None else start
            fh.seek(offset)
            data, end = complete_lines(fh, state)
    except OSError:
        return 0  # not written yet, or gone: nothing to add
    found, state = usage.read(agent.provider, untrusted.lines(data), state)
    with app.store.write() as c:
        if _moved(rows.cursor(c, agent.id, str(path))) != _moved(known):
            return 0  # another reader (the service, roost usage, doctor) read it meanwhile
        if fresh and known is not None:
            rows.restart(c, agent.id, str(path))
        if start is not None:
            rows.bind_fork_point(c, agent.id, str(path))
        rows.advance(c, agent.id, str(path), inode, offset + end, state, found)
    return sum(t.total for t in found.values())


def catch_up(app: App, agents: Iterable[Agent], most: int = untrusted.READ_LIMIT) -> None:
    """Read each agent's file on to its end, pass after pass while its cursor moves, at most
    `most` bytes an agent: what doctor says of the files (the lines left out) is then theirs,
    not only what the service had read of them."""
    for agent in agents:
        path = session_file(app, agent) if agent.provider in usage.READERS else None
        read = 0
        while path is not None and read < most:
            before = _moved(rows.cursor(app.store.conn, agent.id, str(path)))
            _isolated(app, agent)
            after = _moved(rows.cursor(app.store.conn, agent.id, str(path)))
            if after is None or (before is not None and after[1] <= before[1]):
                break  # at its end, or read again from its start (it was replaced)
            read += after[1] - (before[1] if before else 0)


def _moved(cursor: tuple[int, int, object] | None) -> tuple[int, int] | None:
    return None if cursor is None else (cursor[0], cursor[1])


PASSING = "passing"  # state key: the cursor is inside a line too long to read, passing it by


def complete_lines(fh: BinaryIO, state: usage.State) -> tuple[bytes, int]:
    """The complete lines from the file's position on (a line still being written waits for
    the next read), and how many bytes the cursor moves: at most CHUNK, or one line's
    untrusted.LINE_LIMIT when a line is longer than CHUNK. A line longer than that is passed
    over a piece at a time (`state` says so between reads) and counted (usage.TOO_LONG): one
    such line held an agent's cursor where it was for good."""
    data = fh.read(CHUNK)
    passed = 0
    if state.get(PASSING):
        passed = data.find(b"\n") + 1
        if not passed:
            return b"", len(data)
        del state[PASSING]
        data = data[passed:]
    end = data.rfind(b"\n") + 1
    if not end and not passed and len(data) == CHUNK:  # one line longer than a read
        data += fh.read(untrusted.LINE_LIMIT + 1 - CHUNK)
        end = data.rfind(b"\n") + 1
        if not end and len(data) > untrusted.LINE_LIMIT:
            usage.skip(state, usage.TOO_LONG)
            state[PASSING] = True
            return b"", len(data)
    return data[:end], passed + end


# ---- a fork's own turns (issue 35) -----------------------------------------------------------

FORK_READ_LIMIT = 1 << 30  # bytes of the original's conversation read at a fork, at most


def record_fork_point(app: App, origin: Agent, fork: Agent) -> None:
    """At `roost fork`: the fork's usage starts where the original's conversation stands now,
    so the history its CLI copies into the fork's file counts once, for the original. An
    original whose file cannot be read leaves none: the fork then counts what its file holds."""
    path = session_file(app, origin) if origin.provider in usage.READERS else None
    if path is None:
        return
    try:
        state = usage.fork_point(origin.provider, _whole(path))
    except OSError:
        return
    with app.store.write() as c:
        rows.set_fork_point(c, fork.id, state)


def _whole(path: Path) -> Iterator[str]:
    """Every complete line of a CLI's file, read in bounded pieces: at most FORK_READ_LIMIT
    bytes, a line longer than untrusted.LINE_LIMIT left out (only its first bytes are kept
    while its end is looked for, enough to know it is too long)."""
    with untrusted.open_file(path) as fh:
        rest, read = b"", 0
        while read < FORK_READ_LIMIT and (data := fh.read(CHUNK)):
            read += len(data)
            data = rest + data
            end = data.rfind(b"\n") + 1
            yield from untrusted.lines(data[:end])
            rest = data[end:][: untrusted.LINE_LIMIT + 1]


def price_table(app: App) -> dict[str, tuple[float, ...]]:
    return prices.table(app.settings.prices)


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


# ---- the figure every surface shows (issue 35) ---------------------------------------------


def figures(app: App, agent_ids: Sequence[str] | None = None) -> dict[str, dict[str, object]]:
    """Agent id -> its usage as `roost ls --json` gives it (core/present.py usage_json: the
    stored totals per model, at config.toml's prices), for the agents given (None: all): the
    web's agent page and the TUI show this, as the fleet and `ls --json` do."""
    table = price_table(app)
    stored = rows.per_model(app.store.conn, agent_ids)
    ids = list(stored) if agent_ids is None else agent_ids
    return {a: present.usage_json(stored.get(a, []), table) for a in ids}


def tokens_by_agent(app: App) -> dict[str, int]:
    """Agent id -> tokens used, as stored (no file read), for the agents that used any: the
    TUI's column, `figures`' total, summed by one query (no prices: it only counts)."""
    return rows.tokens_by_agent(app.store.conn)
