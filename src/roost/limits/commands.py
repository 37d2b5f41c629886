"""`roost limits`: the agents held by a usage limit, when it resets and what happens then."""

from __future__ import annotations

import json

import click


@click.command(name="limits")
@click.option("--json", "as_json", is_flag=True, help="One JSON list, for scripts.")
def limits_command(as_json: bool) -> None:
    """List the agents a usage limit holds: its kind, when it resets, what happens then.

    A limit is read from the CLI's own words (its hooks, its screen) and kept until a turn goes
    on, so it outlives a tmux server's death. Until the reset, `send` refuses the agent and
    `restore` starts none of its provider's agents. With `roost policy NAME --on-limit resume`
    roost tells it to go on after the reset ("then: resume at 17:03 (in 2 h 13 min)").

    \b
    Example:
      roost limits --json
    """
    from roost.core import present
    from roost.limits import operations as limits
    from roost.ops import resume
    from roost.ops.root import open_app
    from roost.system.clock import local_zone

    app = open_app(reading=True)
    try:
        rows = limits.holding(app)
        planned = resume.outlooks(app)
        now = app.clock.now().timestamp()
        zone = local_zone(app.environ)
    finally:
        app.close()
    then = {name: said for name, (said, _due) in planned.items()}
    if as_json:
        click.echo(
            json.dumps(
                [
                    {
                        "name": name,
                        "provider": provider,
                        "kind": limit.kind,
                        "resets_at": limit.resets_at,
                        "words": limit.words,
                        "then": then.get(name),
                        "resume_at": planned[name][1] if name in planned else None,
                    }
                    for name, provider, limit, _seen in rows
                ]
            )
        )
        return
    click.echo(present.limits_table(rows, now, zone, then), nl=False)
