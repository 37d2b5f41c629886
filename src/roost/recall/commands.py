"""`roost search` and `roost show` (issue 39): search every conversation, and go back to the
moment something was said. docs/RECALL.md."""

from __future__ import annotations

import json

import click

LIMIT = 20


@click.command(name="search")
@click.argument("query", required=False)
@click.option("--agent", "agent", metavar="NAME", help="Only this agent's conversations.")
@click.option(
    "--provider",
    type=click.Choice(["claude", "codex", "gemini", "aider"]),
    help="Only this CLI's.",
)
@click.option("--since", metavar="T", help="Said since T (12h, 7d, 2031-03-01, an ISO time).")
@click.option("--until", metavar="T", help="Said until T.")
@click.option("--file", "file", metavar="PATH", help="Only turns whose tools touched PATH.")
@click.option("--role", type=click.Choice(["user", "agent", "tool"]), help="Only this role's.")
@click.option("--limit", type=click.IntRange(1, 1000), default=LIMIT, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON array of hits.")
@click.option("--reindex", is_flag=True, help="Rebuild the index from the CLIs' records.")
@click.option(
    "--forget",
    "forget",
    metavar="NAME",
    help="Remove NAME's entries from the index and keep it out (until --remember NAME).",
)
@click.option(
    "--remember", "remember", metavar="NAME", help="Index a forgotten NAME again (from its start)."
)
def search_command(
    query: str | None,
    agent: str | None,
    provider: str | None,
    since: str | None,
    until: str | None,
    file: str | None,
    role: str | None,
    limit: int,
    as_json: bool,
    reindex: bool,
    forget: str | None,
    remember: str | None,
) -> None:
    """Search every conversation of every agent (all four CLIs, every session of each
    agent's lineage, removed agents until gc): ranked hits, each with its agent and turn
    (NAME@TURN, for `roost show`). QUERY is FTS5's: words, "a phrase", prefix*, a OR b,
    a NOT b.

    \b
    Examples:
      roost search "login redirect"
      roost search 'retry* NOT flaky' --agent api --since 7d
      roost search migration --file src/db/schema.py --role tool --json
      roost search --reindex
      roost search --forget scratch     # out of the index, its later turns too
      roost search --remember scratch   # back in, read again from its start
    """
    from roost.cli.main import _app
    from roost.core.errors import RoostError
    from roost.recall import operations as recall
    from roost.recall import rules

    app = _app()
    if forget is not None:
        gone = recall.forget(app, forget)
        click.echo(
            f"forgot {gone} message(s) of {forget}; it stays out of the index "
            f"(`roost search --remember {forget}` brings it back)"
        )
        return
    if remember is not None:
        marked = recall.remember(app, remember)
        click.echo(f"remembering {remember} ({marked} agent(s)): indexed again from the start")
        return
    if reindex:
        done = recall.reindex(app)
        click.echo(
            f"indexed {done.messages} message(s) from {done.records} record(s), "
            f"{done.read / 1e6:.1f} MB"
            + (f"; {len(done.refused)} record(s) left out" if done.refused else "")
        )
        if not query:
            return
    if not query:
        raise RoostError(
            "search: give a QUERY (or --reindex, --forget NAME, --remember NAME)", code=2
        )
    try:
        now = app.clock.now()
        filters = recall.Filters(
            agent=agent,
            provider=provider,
            since=rules.moment(since, now) if since else None,
            until=rules.moment(until, now) if until else None,
            role=role,
            file=file,
        )
    except ValueError as exc:
        raise RoostError(f"search: {exc}", code=2) from None
    hits = recall.fresh_search(app, query, filters, limit)
    if as_json:
        click.echo(json.dumps([h.as_json() for h in hits]))
        return
    if not hits:
        click.echo("no match", err=True)
        raise SystemExit(1)
    for h in hits:
        click.echo(f"{h.ref}  {h.when}  {h.role}  {h.provider}")
        click.echo(f"    {h.snippet}")


def show_turns(ref: str, context: int, as_json: bool) -> None:
    from roost.cli.main import _app
    from roost.core.errors import RoostError
    from roost.core.present import shown
    from roost.recall import operations as recall
    from roost.recall import rules

    found = rules.turn_ref(ref)
    if found is None:
        raise RoostError(f"show: {ref!r} is not NAME@TURN (e.g. api@12)", code=2)
    name, number = found
    listed = recall.turns(_app(), name, number, context)
    if as_json:
        click.echo(json.dumps([t.as_json() for t in listed]))
        return
    for t in listed:
        mark = ">>" if t.number == number else "--"
        click.echo(f"{mark} {t.ref}  {t.at}")
        for m in t.messages:
            files = f"  [{', '.join(m.files)}]" if m.files else ""
            click.echo(f"[{m.role}]{shown(files)}")
            click.echo(shown(m.text).rstrip("\n"))
        click.echo("")


@click.command(name="show")
@click.argument("ref", metavar="NAME@TURN")
@click.option("--context", type=click.IntRange(0, 100), default=0, help="Turns either side.")
@click.option("--json", "as_json", is_flag=True, help="The turns as JSON.")
def show_command(ref: str, context: int, as_json: bool) -> None:
    """Print turn TURN of agent NAME (its prompt, the agent's words, its tool calls), as the
    recall index holds it, with CONTEXT turns either side.

    \b
    Examples:
      roost show api@12
      roost show api@12 --context 2
    """
    show_turns(ref, context, as_json)
