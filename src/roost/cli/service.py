"""`roost service start|stop|status|run`: the roost service (ops/service.py), a hidden process
inside roost's tmux server that pushes what changed. Every other command works without it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from roost.core.service import ServiceStatus
    from roost.ops.context import App


@click.group()
def service() -> None:
    """The roost service: one process in a hidden session of roost's tmux server that watches
    for changes (no polling) and records them in the event log. Commands work without it; `roost
    watch` and the TUI read its stream when it runs. `roost restore` starts it.

    \b
    Example:
      roost service start
      roost service status --json
    """


def _app() -> App:
    from roost.ops.root import open_app

    return open_app()


def _show(found: ServiceStatus, as_json: bool) -> None:
    click.echo(json.dumps(found.as_json()) if as_json else found.text())


@service.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object.")
def start(as_json: bool) -> None:
    """Start the service (nothing to do when it runs) and wait for its components' starts;
    exits 1 when it did not start."""
    from roost.ops import service as svc

    found = svc.start(_app())
    _show(found, as_json)
    if not found.running:
        raise SystemExit(1)


@service.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object.")
def stop(as_json: bool) -> None:
    """Stop the service; it stays stopped until `roost service start` or `roost restore`.
    Agents are not touched."""
    from roost.ops import service as svc

    _show(svc.stop(_app()), as_json)


@service.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object.")
def status(as_json: bool) -> None:
    """Whether the service runs: its pid, since when, which components serve (looked at now:
    the readers' socket answers from the service, the MCP endpoint's address; web as it
    started), and
    the last error of any that failed."""
    from roost.ops import service as svc

    _show(svc.status(_app(), probe=True), as_json)


@service.command(hidden=True)
def run() -> None:
    """The service's own process (run by `roost service start` in its hidden session). One per
    ROOST_HOME: a second refuses at once (exit 1) and changes nothing."""
    from roost.ops.root import open_app
    from roost.service import main

    raise SystemExit(main.run(open_app(), open_app))
