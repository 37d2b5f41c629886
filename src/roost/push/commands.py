"""`roost web pair` and `roost web devices`: phones paired with roost web (docs/WEB.md)."""

from __future__ import annotations

import json
import sys
from urllib.parse import urlsplit

import click

from roost.core.errors import RoostError


@click.command(name="pair")
@click.option("--no-qr", "no_qr", is_flag=True, help="Print the link only (no QR code).")
@click.option(
    "--url",
    "base",
    metavar="URL",
    help="Where the phone reaches roost web (default: [push] url, else http://[web] bind).",
)
def pair(no_qr: bool, base: str | None) -> None:
    """Print a one-time link (and its QR code) that pairs a phone with roost web: opening it
    gives that device its own credential (never the web token), which `roost web devices
    revoke ID` takes back. The link works once, for 10 minutes.

    \b
    Examples:
      roost web pair
      roost web pair --no-qr --url https://box.tailnet.ts.net
    """
    from roost.cli.main import _app
    from roost.core.settings import is_url
    from roost.core.web import url_host
    from roost.push import operations as push
    from roost.push.rules import PAIRING_TTL

    app = _app()
    if base is not None and not is_url(base):
        raise RoostError(f"--url must be an http:// or https:// URL, not {base[:80]!r}")
    if base is None:
        base = app.settings.push.url
    if base is None:
        from roost.core.web import parse_bind

        host, port = parse_bind(app.settings.web.bind)
        base = f"http://{url_host(host, port)}"
    link = f"{base.rstrip('/')}/pair?code={push.pairing_code(app)}"
    host = urlsplit(base).hostname or ""
    if host == "localhost" or host.startswith("127.") or host == "::1":
        click.echo(
            f"roost: a phone cannot reach {host}: open the link through a tunnel, or set "
            "[push] url (or --url) to where it reaches roost web",
            err=True,
        )
    if not no_qr:
        try:
            import segno
        except ImportError:
            click.echo("roost: no QR code without the web extra (segno): the link only", err=True)
        else:
            segno.make(link, error="l").terminal(out=sys.stdout, compact=True)
    click.echo(link)
    click.echo(f"(one device, once, within {PAIRING_TTL / 60:g} minutes)", err=True)


@click.group(name="devices", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON list.")
@click.pass_context
def devices(ctx: click.Context, as_json: bool) -> None:
    """The devices paired with roost web: id, name, paired, last seen, subscribed to push.

    \b
    Examples:
      roost web devices
      roost web devices revoke 3f2a9c01b7de
    """
    if ctx.invoked_subcommand is not None:
        return
    from roost.cli.main import _app
    from roost.push import operations as push
    from roost.push.rules import plain

    found = push.devices(_app())
    if as_json:
        rows = [
            {
                "id": d.id,
                "name": d.name,
                "paired_at": d.paired_at,
                "last_seen": d.last_seen,
                "revoked_at": d.revoked_at,
                "subscribed": d.subscribed,
            }
            for d in found
        ]
        click.echo(json.dumps(rows, indent=2))
        return
    if not found:
        click.echo("no devices: roost web pair")
        return
    click.echo(f"{'ID':<13} {'NAME':<24} {'PAIRED':<20} {'LAST SEEN':<20} PUSH")
    for d in found:
        push_state = "revoked" if d.revoked_at else ("yes" if d.subscribed else "no")
        click.echo(
            f"{d.id:<13} {plain(d.name, 24):<24} {d.paired_at[:19]:<20} "
            f"{(d.last_seen or '-')[:19]:<20} {push_state}"
        )


@devices.command(name="revoke")
@click.argument("device_id", metavar="ID")
def revoke(device_id: str) -> None:
    """Revoke a device: its credential and its push subscription stop working at once."""
    from roost.cli.main import _app
    from roost.push import operations as push

    push.revoke(_app(), device_id)
    click.echo(f"revoked {device_id}")
