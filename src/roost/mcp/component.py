"""The shared MCP endpoint as a component of the roost service (ops/service.py COMPONENTS).
Light on purpose: the service imports every component before it registers its run, and the
endpoint listens at the start but loads the SDK and the HTTP server (mcp/http.py, seconds to
import on a busy machine) at its first caller (mcp/lazy.py)."""

from __future__ import annotations

from roost.ops.context import App
from roost.ops.service import Component, Serving


def _start(app: App) -> Serving:
    from roost.mcp import lazy

    endpoint = lazy.start(app)
    return Serving(endpoint.stop, endpoint.url)  # its address: what `roost service status` shows


COMPONENT = Component(name="mcp", start=_start)
