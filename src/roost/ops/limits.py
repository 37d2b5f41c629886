"""`roost limits`: the usage limits roost has seen that still hold (store/limits.py), read
without touching tmux."""

from __future__ import annotations

from roost.core import limits
from roost.ops.context import App
from roost.store import limits as stored


def holding(app: App) -> list[tuple[str, str, limits.Limit, float]]:
    """(agent name, provider, limit, seen_at) of every limit that holds now, by name."""
    now = app.clock.now().timestamp()
    return [row for row in stored.seen(app.store.conn) if limits.current(row[2], row[3], now)]
