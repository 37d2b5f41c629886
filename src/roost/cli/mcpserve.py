"""`roost mcp serve`: the shared MCP endpoint in the foreground (mcp/http.py)."""

from __future__ import annotations

import click


@click.command(name="serve")
def mcp_serve_cmd() -> None:
    """Serve roost's MCP tools to this home's agents on one loopback HTTP endpoint.

    Prints the endpoint's URL, then serves until interrupted. Each agent proves who it is with
    its launch token (Authorization: Bearer); agents launched while it runs are wired to it
    instead of starting their own `roost mcp`. The roost service hosts the same endpoint.
    """
    from roost.mcp import http
    from roost.ops.root import open_app

    app = open_app()
    try:
        http.serve_forever(app)
    finally:
        app.close()
