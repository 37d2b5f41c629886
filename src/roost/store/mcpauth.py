"""Who holds a launch token: the shared MCP endpoint's one question of the store (mcp/http.py).

A launch token (ops/lifecycle.py mints one per launch, `launches` keeps only the current one
per agent) is the secret an agent's CLI shows the endpoint; a token of an earlier launch is no
longer in the table, so it names nobody.
"""

from __future__ import annotations

import sqlite3


def agent_for_token(conn: sqlite3.Connection, token: str) -> str | None:
    """The id of the agent whose current launch has `token`, or None."""
    row = conn.execute("SELECT agent_id FROM launches WHERE token = ?", (token,)).fetchone()
    return str(row[0]) if row else None
