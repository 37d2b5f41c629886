"""`roost web`: roost in a browser (roost/web/, docs/WEB.md), in the foreground."""

from __future__ import annotations

from pathlib import Path

import click

from roost.core.errors import RoostError


@click.group(invoke_without_command=True)
@click.option(
    "--bind",
    default="127.0.0.1:7377",  # core/web.py DEFAULT_PORT
    show_default=True,
    metavar="HOST:PORT",
    help="Where to listen (port 0: any free port). Loopback unless --allow-remote.",
)
@click.option("--print-url", is_flag=True, help="Print the login URL (with its token) and exit.")
@click.option(
    "--allow-remote", is_flag=True, help="Allow listening on an address other machines reach."
)
@click.option(
    "--allow-typing",
    is_flag=True,
    help="Allow typing into terminals, for browsers logged in with the typing token "
    "(the URL printed with this flag); others only watch.",
)
@click.pass_context
def web(
    ctx: click.Context, bind: str, print_url: bool, allow_remote: bool, allow_typing: bool
) -> None:
    """Serve the fleet, each agent and a live terminal to a browser, until interrupted.

    Every browser logs in once with the secret token in $ROOST_HOME/web-token (the URL it
    prints); docs/WEB.md tells how to reach it from a phone or another machine (ssh -L, a
    tailnet) without opening a port.

    \b
    Examples:
      roost web
      roost web --print-url
      ssh -L 7377:127.0.0.1:7377 my-box   # then open the URL on this machine
      roost web pair                      # a phone: a one-time link and its QR code
    """
    if ctx.invoked_subcommand is not None:
        return
    from roost.system import locate

    try:
        from roost.web import server
    except ImportError as exc:
        raise RoostError(
            f"roost web needs the web extra: pip install 'roost[web]' ({exc})"
        ) from None
    home = Path(locate.roost_home())
    if print_url:
        click.echo(server.print_url(home, bind, allow_remote, allow_typing))
        return
    setup = server.prepare(home, bind, allow_remote, allow_typing)  # its socket bound first
    _runtime()
    server.serve(setup)


def _runtime() -> None:
    """Its buttons start and change agents: the roost service runs first (issue 36)."""
    from roost.ops import service
    from roost.ops.root import open_app

    app = open_app()
    try:
        service.before_serving(app, lambda line: click.echo(f"roost: {line}", err=True))
    finally:
        app.close()


# A phone's pairing and its devices (issue 40): the push room's commands.
from roost.push.commands import devices, pair  # noqa: E402

web.add_command(pair)
web.add_command(devices)
