"""`roost notify`: alerts to the person (alerts/operations.py) — try the channels, or run the passes
where no roost service does."""

from __future__ import annotations

import os
import sys
from typing import IO, TYPE_CHECKING

import click

from roost.core.errors import RoostError

if TYPE_CHECKING:
    from roost.core.events import Event
    from roost.ops.context import App


@click.group(name="notify")
def notify_group() -> None:
    """Notifications to you when an agent needs you: waiting, an error, a usage limit, a crash
    or exit, a child of your agent finished. Channels: config.toml [notify] (README).

    \b
    Examples:
      roost notify test
      roost notify run --once
    """


@notify_group.command(name="test")
def test_command() -> None:
    """Send a test notification through every channel configured, and say how each went.

    \b
    Example:
      roost notify test
    """
    from roost.alerts import operations as alerts
    from roost.ops.root import open_app

    app = open_app(reading=True)
    try:
        table = app.settings.notify
        results = alerts.test_alert(app)
    finally:
        app.close()
    if table.terminal and sys.stdout.isatty():
        from roost.system.terminal import raw

        raw(sys.stdout).write(
            alerts.terminal_text("roost: test notification", "It works.", dict(os.environ))
        )
        results.insert(0, ("terminal", "ok"))
    if not results:
        raise RoostError(
            "no notification channel: this is no terminal, and config.toml [notify] sets no "
            "command, ntfy or webhook",
            code=2,
        )
    for channel, said in results:
        click.echo(f"{channel}: {said}")
    if any(said != "ok" for _, said in results):
        sys.exit(1)


@notify_group.command(name="run")
@click.option("--once", is_flag=True, help="One pass, then exit.")
@click.option(
    "--interval", type=float, default=1.0, show_default=True, help="Seconds between two passes."
)
def run_command(once: bool, interval: float) -> None:
    """Deliver the notifications the event log calls for, until interrupted (the roost service
    does this when it runs; two at once never send one twice).

    \b
    Example:
      roost notify run --once
    """
    import time

    from roost.alerts import operations as alerts
    from roost.ops.root import open_app

    if not interval > 0:
        raise RoostError(f"--interval must be a number of seconds above 0, not {interval}", code=2)
    app = open_app()
    try:
        while True:
            for done in alerts.run_pass(app):
                failed = {k: v for k, v in done.outcome.items() if v != "ok"}
                for channel, said in failed.items():
                    click.echo(f"roost: {channel}: {said}", err=True)
            if once:
                return
            time.sleep(interval)
    finally:
        app.close()


class WatchAlerts:
    """`roost watch --notify`'s part: `emit` writes each `alert` event of the stream to the
    terminal. The roost service decides and delivers alerts (one runtime, issue 36); the
    watch shows the ones it logged."""

    def __init__(self, app: App, terminal: IO[str]) -> None:
        from roost.system.terminal import raw

        self.app = app
        self.terminal = raw(terminal)  # the alert's own sequences are meant for the terminal
        self.on = app.settings.notify.terminal

    def emit(self, event: Event) -> None:
        if event.kind == "alert":
            self.show(str(event.data.get("title")), str(event.data.get("body")))

    def show(self, title: str, body: str) -> None:
        """An alert's title and body on the terminal (a host's, read from its stream)."""
        from roost.alerts import operations as alerts

        if self.on:
            self.terminal.write(alerts.terminal_text(title, body, self.app.environ))
            self.terminal.flush()

    def flush(self) -> None:
        sys.stdout.flush()
