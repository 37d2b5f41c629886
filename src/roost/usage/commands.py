"""`roost usage`: the tokens each agent used, read from its CLI's own session files, and their
estimated cost (issue 23 part 4)."""

from __future__ import annotations

import json
import re
from datetime import date

import click

from roost.core.errors import RoostError


def _day(text: str) -> bool:
    """A real calendar day written YYYY-MM-DD (what the stored days compare with)."""
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return False
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


@click.command(name="usage")
@click.argument("name", required=False)
@click.option("--tree", is_flag=True, help="NAME's orchestration tree as one (no NAME: per tree).")
@click.option("--tab", "per_tab", is_flag=True, help="Per tab instead of per agent.")
@click.option("--since", metavar="YYYY-MM-DD", help="From this day on (UTC days).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object, for scripts.")
def usage_command(
    name: str | None, tree: bool, per_tab: bool, since: str | None, as_json: bool
) -> None:
    """Tokens used per agent (or tab, or orchestration tree), day and model, with an estimated
    cost. Reads what each agent's session file gained since the last look first.

    \b
    Examples:
      roost usage
      roost usage lead --tree --since 2026-11-01
      roost usage --tab --json
    """
    from roost.ops.root import open_app
    from roost.usage import operations as usage
    from roost.usage import prices
    from roost.usage import rules as core

    if since is not None and not _day(since):
        raise RoostError(f"--since wants a day as YYYY-MM-DD, not {since!r}", code=2)
    if per_tab and tree:
        raise RoostError("--tab and --tree are two ways to group: give one", code=2)
    app = open_app()
    try:
        if name is None:
            agents = app.store.agents()
        else:
            agent = app.store.require(name)
            agents = usage.tree_of(app, agent) if tree else [agent]
        usage.scan(app, agents)
        group = "tab" if per_tab else "tree" if tree and name is None else "agent"
        lines = usage.report(app, agents, since, group)
        if name is not None and tree:  # the whole tree as one, under NAME
            lines = usage.merged(lines, name)
    finally:
        app.close()
    if as_json:
        click.echo(json.dumps(core.as_json(lines, prices.TAKEN)))
    else:
        click.echo(core.table(lines, prices.TAKEN), nl=False)
