"""`roost reply NAME`: an agent's last answer, as a parent's notice or wait_for_agents gives it
(its Stop hook's words, its transcript's, its CLI's own record's). A parent here asks a host's
roost for a child's last words this way (docs/HOSTS.md "Children on a host")."""

from __future__ import annotations

import json

import click


@click.command(name="reply")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help='Print {"name": ..., "reply": ...}.')
def reply_command(name: str, as_json: bool) -> None:
    """Print agent NAME's last answer (nothing, exit 1, when it has none). Never wakes it.

    \b
    Example:
      roost reply api-fix
      roost reply build:api-fix --json
    """
    from roost.core.names import check_name
    from roost.ops import orchestrate
    from roost.ops.context import open_app

    check_name(name)
    app = open_app(reading=True)
    try:
        said = orchestrate.last_reply(app, app.store.require(name))
    finally:
        app.close()
    if as_json:
        click.echo(json.dumps({"name": name, "reply": said}))
    elif said is None:
        raise click.exceptions.Exit(1)
    else:
        click.echo(said)
