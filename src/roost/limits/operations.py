"""Usage limits roost has seen: kept when the status pipeline records one (a reaction of
ops/root.py's), and `roost limits`: those that still hold (store/limits.py), read without
touching tmux."""

from __future__ import annotations

from collections.abc import Sequence

from roost.core.observation import Observation
from roost.core.status import Status
from roost.limits import rules as limits
from roost.ops.context import App, OnStatus
from roost.store import limits as stored
from roost.store.db import Connection


def holding(app: App) -> list[tuple[str, str, limits.Limit, float]]:
    """(agent name, provider, limit, seen_at) of every limit that holds now, by name."""
    now = app.clock.now().timestamp()
    return [row for row in stored.seen(app.store.conn) if limits.current(row[2], row[3], now)]


def _recorded(
    app: App, c: Connection, changed: Sequence[Observation], at: str, _read: None
) -> None:
    """A limit seen is kept until a turn goes on, so it outlives its screen."""
    now = app.clock.now().timestamp()
    for o in changed:
        if o.status == Status.LIMITED and o.limit is not None:
            stored.remember(c, o.agent.id, o.agent.provider, o.limit, now)
    stored.forget(c, [o.agent.id for o in changed if o.status in (Status.IDLE, Status.WORKING)])


ON_STATUS = OnStatus("limits", _recorded)
