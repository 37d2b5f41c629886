"""`roost export` / `roost import`: the whole workspace as versioned JSON, round-tripped exactly.

Import validates everything first and writes in one transaction, so bad input changes nothing.
The format and its rules are core/exchange.py; the rows are read and written by store/exchange.py.
"""

from __future__ import annotations

from typing import Any

from roost.core.exchange import FORMAT, VERSION, refused, validate
from roost.ops.context import App
from roost.providers import traits
from roost.store import exchange
from roost.store.db import now_iso


def export(app: App) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, **exchange.export_tables(app.store)}


def import_(app: App, data: Any) -> int:
    """Add the export's records; returns how many agents. Refused whole on the first problem."""
    seen_at = now_iso()
    try:
        with app.store.write() as c:
            validate(data, exchange.taken(c), traits.SESSION_IDS)
            exchange.insert_tables(c, data, seen_at)
    except exchange.RecordRefused as exc:
        # validate() checks every constraint the schema has; this is its safety net
        raise refused(f"the database refused a record ({exc})") from None
    return len(data["agents"])
