"""Texts roost holds for an agent while it asks the person something (issue 34): a spawn's
first prompt. Nothing roost types on its own goes into a question; what would have is kept
here, durably, and delivered once, oldest first, when the agent is at its input again
(ops/held.py); what it waits behind is the agent's status and its reason, not stored twice.
Functions taking a connection run inside the caller's `store.write()` transaction (or read on
the store's connection)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

PROMPT = "prompt"  # a spawn's first prompt


@dataclass(frozen=True, slots=True)
class Held:
    id: int
    agent_id: str
    text: str
    origin: str  # PROMPT
    held_at: str
    after_tools: bool  # it goes in once the CLI has listed roost's MCP tools
    claimed_until: str | None  # its spawn delivers it until then; others leave it


_COLUMNS = "id, agent_id, text, origin, held_at, after_tools = 1, claimed_until"


def hold(
    c: sqlite3.Connection,
    agent_id: str,
    text: str,
    origin: str,
    at: str,
    *,
    after_tools: bool = False,
    claimed_until: str | None = None,
) -> int:
    cursor = c.execute(
        "INSERT INTO held_inputs (agent_id, text, origin, held_at, after_tools, claimed_until)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (agent_id, text, origin, at, int(after_tools), claimed_until),
    )
    return int(cursor.lastrowid or 0)


def release(c: sqlite3.Connection, agent_id: str) -> None:
    """Its spawn stopped watching: whoever finds the agent at its input delivers."""
    c.execute(
        "UPDATE held_inputs SET claimed_until = NULL WHERE agent_id = ? AND delivered_at IS NULL",
        (agent_id,),
    )


def pending(c: sqlite3.Connection, agent_id: str | None = None) -> list[Held]:
    """What waits, oldest first (one agent's, or every agent's)."""
    where, params = ("AND agent_id = ?", (agent_id,)) if agent_id else ("", ())
    rows = c.execute(
        f"SELECT {_COLUMNS} FROM held_inputs WHERE delivered_at IS NULL {where} ORDER BY id",
        params,
    )
    return [Held(*r) for r in rows]


def delivered(c: sqlite3.Connection, held_id: int, at: str, how: str) -> bool:
    """Mark it delivered; False when another delivery marked it first."""
    cursor = c.execute(
        "UPDATE held_inputs SET delivered_at = ?, how = ? WHERE id = ? AND delivered_at IS NULL",
        (at, how, held_id),
    )
    return cursor.rowcount == 1
