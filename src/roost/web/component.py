"""roost web as a component of the roost service (ops/service.py COMPONENTS), when config.toml
says `[web] enabled = true`. Light on purpose: Starlette and uvicorn load in the component's own
thread, at its start, and only when it is enabled."""

from __future__ import annotations

from roost.ops.context import App
from roost.ops.service import Component, Serving


def _start(app: App) -> Serving | None:
    web = app.settings.web
    if not web.enabled:
        return None  # off: `roost service status` does not list it
    from roost.web import server

    setup = server.prepare(
        app.paths.home, web.bind, web.allow_remote, web.allow_typing, in_service=True
    )
    stop = server.start(setup)  # returns once uvicorn serves
    # The service's pane and status show where; the token stays in its file (--print-url).
    address = f"http://{setup.url.split('/')[2]}/"
    print(f"roost web: {address} (login: roost web --print-url)")
    return Serving(stop, address)


COMPONENT = Component(name="web", start=_start)
