"""Usage limits as last seen (issue 23): one row per limited agent, so a limit outlives the
screen that showed it (a tmux server's death, a reboot): `send` refuses at once and `restore`
starts none of that provider's agents until the reset. Every function runs inside the caller's
`store.write()` transaction, or reads."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from roost.limits.rules import Limit


def remember(
    c: sqlite3.Connection, agent_id: str, provider: str, limit: Limit, seen_at: float
) -> None:
    """Record `limit` for the agent; the same words seen again keep their first reading (a
    clock time read later could fall on the next day)."""
    row = c.execute("SELECT words FROM usage_limits WHERE agent_id = ?", (agent_id,)).fetchone()
    if row is not None and row[0] == limit.words:
        return
    c.execute(
        "INSERT OR REPLACE INTO usage_limits (agent_id, provider, kind, resets_at, words, "
        "seen_at) VALUES (?, ?, ?, ?, ?, ?)",
        (agent_id, provider, limit.kind, limit.resets_at, limit.words, seen_at),
    )


def forget(c: sqlite3.Connection, agent_ids: Iterable[str]) -> None:
    """The agents' limits are over (a turn went on)."""
    c.executemany("DELETE FROM usage_limits WHERE agent_id = ?", [(a,) for a in agent_ids])


def seen(c: sqlite3.Connection) -> list[tuple[str, str, Limit, float]]:
    """Every limit recorded: (agent name, provider, limit, seen_at), by name."""
    rows = c.execute(
        "SELECT a.name, l.provider, l.kind, l.resets_at, l.words, l.seen_at FROM usage_limits l "
        "JOIN agents a ON a.id = l.agent_id ORDER BY a.name"
    ).fetchall()
    return [
        (name, prov, Limit(kind, at, words), seen_at)
        for name, prov, kind, at, words, seen_at in rows
    ]
