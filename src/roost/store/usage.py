"""Token usage read from the CLIs' session files (issue 23 part 4, branch usage): a cursor per
agent and file (where the last read stopped, the file's inode, the reader's state), the totals
per agent, file, day and model, and the budgets (part 5). Every function runs inside the
caller's `store.write()` transaction, or reads."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from roost.usage.rules import Found, Tokens, skipped


def cursor(
    c: sqlite3.Connection, agent_id: str, path: str
) -> tuple[int, int, dict[str, object]] | None:
    """(inode, offset, reader state) of the agent's last read of `path`, or None before one."""
    row = c.execute(
        "SELECT inode, offset, state FROM usage_cursors WHERE agent_id = ? AND path = ?",
        (agent_id, path),
    ).fetchone()
    return None if row is None else (int(row[0]), int(row[1]), json.loads(row[2]))


# A fork's starting state (usage/rules.py fork_point) is kept as a cursor row under this name, which
# no file has: the first file the fork's CLI writes (its own conversation's) is read from there,
# and read from there again if that file is replaced; any later file starts from nothing.
FORK_POINT = "(fork point)"


def set_fork_point(c: sqlite3.Connection, agent_id: str, state: dict[str, object]) -> None:
    """Where the fork `agent_id`'s usage starts: the original's state at the fork."""
    c.execute(
        "INSERT OR REPLACE INTO usage_cursors (agent_id, path, inode, offset, state) "
        "VALUES (?, ?, 0, 0, ?)",
        (agent_id, FORK_POINT, json.dumps({"path": None, "state": state}, separators=(",", ":"))),
    )


def fork_point(c: sqlite3.Connection, agent_id: str, path: str) -> dict[str, object] | None:
    """The state a read of `path` from its start begins with when the agent is a fork and
    `path` is its first file (or no file has been read for it yet); else None."""
    row = c.execute(
        "SELECT state FROM usage_cursors WHERE agent_id = ? AND path = ?", (agent_id, FORK_POINT)
    ).fetchone()
    point = json.loads(row[0]) if row is not None else {}
    if point.get("path") not in (None, path) or not isinstance(point.get("state"), dict):
        return None
    return dict(point["state"])


def bind_fork_point(c: sqlite3.Connection, agent_id: str, path: str) -> None:
    """The fork point is `path`'s from now on (its first file): no later file starts there."""
    c.execute(
        "UPDATE usage_cursors SET state = json_set(state, '$.path', ?) "
        "WHERE agent_id = ? AND path = ? AND json_extract(state, '$.path') IS NULL",
        (path, agent_id, FORK_POINT),
    )


def restart(c: sqlite3.Connection, agent_id: str, path: str) -> None:
    """The file was replaced or cut short: forget what it gave, to read it again from its start."""
    c.execute("DELETE FROM usage_totals WHERE agent_id = ? AND path = ?", (agent_id, path))
    c.execute("DELETE FROM usage_cursors WHERE agent_id = ? AND path = ?", (agent_id, path))
    c.execute("DELETE FROM usage_models WHERE agent_id = ?", (agent_id,))
    c.execute(
        "INSERT INTO usage_models (agent_id, model, input, output, cache_write, cache_read) "
        "SELECT agent_id, model, sum(input), sum(output), sum(cache_write), sum(cache_read) "
        "FROM usage_totals WHERE agent_id = ? GROUP BY model",
        (agent_id,),
    )


def advance(
    c: sqlite3.Connection,
    agent_id: str,
    path: str,
    inode: int,
    offset: int,
    state: dict[str, object],
    found: Found,
) -> None:
    """Add what a read found and move the cursor past it, together."""
    c.execute(
        "INSERT OR REPLACE INTO usage_cursors (agent_id, path, inode, offset, state) "
        "VALUES (?, ?, ?, ?, ?)",
        (agent_id, path, inode, offset, json.dumps(state, separators=(",", ":"))),
    )
    c.executemany(
        "INSERT INTO usage_totals (agent_id, path, day, model, input, output, cache_write, "
        "cache_read) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (agent_id, path, day, model) "
        "DO UPDATE SET input = input + excluded.input, output = output + excluded.output, "
        "cache_write = cache_write + excluded.cache_write, "
        "cache_read = cache_read + excluded.cache_read",
        [(agent_id, path, day, model, *t.as_tuple()) for (day, model), t in found.items()],
    )
    per_model: dict[str, Tokens] = {}
    for (_day, model), t in found.items():
        per_model[model] = per_model.get(model, Tokens()) + t
    c.executemany(
        "INSERT INTO usage_models (agent_id, model, input, output, cache_write, cache_read) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (agent_id, model) DO UPDATE SET "
        "input = input + excluded.input, output = output + excluded.output, "
        "cache_write = cache_write + excluded.cache_write, "
        "cache_read = cache_read + excluded.cache_read",
        [(agent_id, model, *t.as_tuple()) for model, t in per_model.items()],
    )


def totals(
    c: sqlite3.Connection, agent_ids: Sequence[str], since: str | None = None
) -> list[tuple[str, str, str, Tokens]]:
    """(agent id, day, model, tokens) of the agents, from day `since` on, by agent, day, model."""
    marks = ",".join("?" * len(agent_ids))
    rows = c.execute(
        "SELECT agent_id, day, model, sum(input), sum(output), sum(cache_write), "
        f"sum(cache_read) FROM usage_totals WHERE agent_id IN ({marks}) AND day >= ? "
        "GROUP BY agent_id, day, model ORDER BY agent_id, day, model",
        (*agent_ids, since or ""),
    ).fetchall()
    return [(a, d, m, Tokens(i, o, w, r)) for a, d, m, i, o, w, r in rows]


def tokens_by_agent(c: sqlite3.Connection) -> dict[str, int]:
    """Agent id -> every token it used, for the agents that used any."""
    rows = c.execute(
        "SELECT agent_id, sum(input + output + cache_write + cache_read) FROM usage_models "
        "GROUP BY agent_id HAVING sum(input + output + cache_write + cache_read) > 0"
    ).fetchall()
    return {str(a): int(n) for a, n in rows}


def per_model(
    c: sqlite3.Connection, agent_ids: Sequence[str] | None = None
) -> dict[str, list[list[Any]]]:
    """Agent id -> its stored usage, [model, input, output, cache_write, cache_read] per model
    (what `ls --json` reads with each agent), for the agents given (None: every agent)."""
    query = "SELECT agent_id, model, input, output, cache_write, cache_read FROM usage_models"
    params: tuple[str, ...] = ()
    if agent_ids is not None:
        query += f" WHERE agent_id IN ({','.join('?' * len(agent_ids))})"
        params = tuple(agent_ids)
    found: dict[str, list[list[Any]]] = {}
    for agent_id, *model in c.execute(query + " ORDER BY agent_id, model", params):
        found.setdefault(str(agent_id), []).append(model)
    return found


def skipped_lines(c: sqlite3.Connection) -> dict[str, dict[str, int]]:
    """Agent id -> the lines its CLI's files held that their readers left out, by why
    (usage/rules.py skipped), for the agents with any: one small state per file read."""
    found: dict[str, dict[str, int]] = {}
    for agent_id, state in c.execute("SELECT agent_id, state FROM usage_cursors"):
        try:
            counts = skipped(json.loads(state))
        except ValueError:
            continue
        mine = found.setdefault(str(agent_id), {}) if counts else {}
        for why, n in counts.items():
            mine[why] = mine.get(why, 0) + n
    return found


# ---- budgets (part 5) ---------------------------------------------------------------------


def set_budget(
    c: sqlite3.Connection, agent_id: str, tree: bool, tokens: int | None, dollars: float | None
) -> None:
    """An agent's own budget (`tree` False) or its orchestration tree's; both None: none."""
    prefix = "tree_" if tree else ""
    c.execute("INSERT OR IGNORE INTO usage_budgets (agent_id) VALUES (?)", (agent_id,))
    c.execute(
        f"UPDATE usage_budgets SET {prefix}tokens = ?, {prefix}dollars = ? WHERE agent_id = ?",
        (tokens, dollars, agent_id),
    )


def budgets(
    c: sqlite3.Connection,
) -> list[tuple[str, int | None, float | None, int | None, float | None]]:
    """(agent id, tokens, dollars, tree tokens, tree dollars) of every agent with a budget."""
    rows = c.execute(
        "SELECT agent_id, tokens, dollars, tree_tokens, tree_dollars FROM usage_budgets "
        "WHERE coalesce(tokens, dollars, tree_tokens, tree_dollars) IS NOT NULL"
    ).fetchall()
    return [tuple(r) for r in rows]


def set_parked(c: sqlite3.Connection, agent_ids: Iterable[str], why: str | None) -> None:
    """Why each agent was parked for its budget (None: it was woken, or never was)."""
    for agent_id in agent_ids:
        c.execute("INSERT OR IGNORE INTO usage_budgets (agent_id) VALUES (?)", (agent_id,))
        c.execute("UPDATE usage_budgets SET parked = ? WHERE agent_id = ?", (why, agent_id))


def parked(c: sqlite3.Connection, agent_id: str) -> str | None:
    row = c.execute("SELECT parked FROM usage_budgets WHERE agent_id = ?", (agent_id,)).fetchone()
    return None if row is None else row[0]


BUDGET_COLUMNS = ("tokens", "dollars", "tree_tokens", "tree_dollars", "parked")


def exported_budgets(c: sqlite3.Connection) -> list[dict[str, object]]:
    """Every agent's budget row that says something, for `roost export` (core/exchange.py)."""
    rows = c.execute(
        "SELECT agent_id, tokens, dollars, tree_tokens, tree_dollars, parked FROM usage_budgets "
        "WHERE coalesce(tokens, dollars, tree_tokens, tree_dollars, parked) IS NOT NULL "
        "ORDER BY agent_id"
    ).fetchall()
    return [dict(zip(("agent", *BUDGET_COLUMNS), r, strict=True)) for r in rows]


def insert_budget(c: sqlite3.Connection, row: dict[str, object]) -> None:
    """One validated budget of an import (its agent is new to this home)."""
    c.execute(
        "INSERT INTO usage_budgets (agent_id, tokens, dollars, tree_tokens, tree_dollars, parked) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (row["agent"], *(row[k] for k in BUDGET_COLUMNS)),
    )
