"""roost web as a component of the roost service (ops/service.py COMPONENTS), when config.toml
says `[web] enabled = true`. Light on purpose: Starlette and uvicorn load in the component's own
thread, at its start, and only when it is enabled."""

from __future__ import annotations

from collections.abc import Callable

from roost.ops.context import App
from roost.ops.service import Component

DEFAULT_BIND = "127.0.0.1:7377"


def _start(app: App) -> Callable[[], None]:
    table = app.settings.get("web")
    if not isinstance(table, dict) or table.get("enabled") is not True:
        return lambda: None
    from roost.web import server

    setup = server.prepare(
        app.paths.home,
        str(table.get("bind", DEFAULT_BIND)),
        table.get("allow_remote") is True,
        table.get("allow_typing") is True,
        in_service=True,
    )
    stop = server.start(setup)
    # The service's pane shows where; the token stays in its file (roost web --print-url).
    print(f"roost web: http://{setup.url.split('/')[2]}/ (login: roost web --print-url)")
    return stop


COMPONENT = Component(name="web", start=_start)
