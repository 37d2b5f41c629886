"""roost web as a component of the roost service (ops/service.py COMPONENTS), when config.toml
says `[web] enabled = true`. Light on purpose: Starlette and uvicorn load in the component's own
thread, at its start, and only when it is enabled."""

from __future__ import annotations

from roost.ops.context import App
from roost.ops.service import Component, Serving

DEFAULT_BIND = "127.0.0.1:7377"


def _start(app: App) -> Serving | None:
    table = app.settings.get("web")
    if not isinstance(table, dict) or table.get("enabled") is not True:
        return None  # off: `roost service status` does not list it
    from roost.web import server

    setup = server.prepare(
        app.paths.home,
        str(table.get("bind", DEFAULT_BIND)),
        table.get("allow_remote") is True,
        table.get("allow_typing") is True,
        in_service=True,
    )
    stop = server.start(setup)  # returns once uvicorn serves
    # The service's pane and status show where; the token stays in its file (--print-url).
    address = f"http://{setup.url.split('/')[2]}/"
    print(f"roost web: {address} (login: roost web --print-url)")
    return Serving(stop, address)


COMPONENT = Component(name="web", start=_start)
