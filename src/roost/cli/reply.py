"""What an agent said. `roost reply NAME`: its last answer, as a parent's notice or
wait_for_agents gives it (its Stop hook's words, its transcript's, its CLI's own record's).
`roost read NAME`: its recent conversation, as the MCP tool read_conversation gives it (the
messages of its CLI's own record; the screen's tail of a CLI that keeps none). A parent here
asks a host's roost about a child there this way (docs/HOSTS.md "Children on a host")."""

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
    from roost.ops import replies
    from roost.ops.root import open_app

    check_name(name)
    app = open_app(reading=True)
    try:
        said = replies.last(app, app.store.require(name))
    finally:
        app.close()
    if as_json:
        click.echo(json.dumps({"name": name, "reply": said}))
    elif said is None:
        raise click.exceptions.Exit(1)
    else:
        click.echo(said)


@click.command(name="read")
@click.argument("name")
@click.option(
    "-n", "--messages", type=click.IntRange(1, 100), default=10, show_default=True,
    help="How many recent messages.",
)  # fmt: skip
@click.option(
    "--max-chars", type=click.IntRange(200, 20_000), default=4000, show_default=True,
    help="At most this many characters in all.",
)  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print what read_conversation returns.")
def read_command(name: str, messages: int, max_chars: int, as_json: bool) -> None:
    """Print agent NAME's last messages, as its CLI's own record holds them (claude's
    transcript, codex's rollout, gemini's chat file, aider's chat history); for a command,
    which keeps none, the tail of its screen, said so on stderr. Never wakes it.

    \b
    Example:
      roost read api-fix -n 4
      roost read build:api-fix --json
    """
    from roost.core.names import check_name
    from roost.core.present import for_terminal
    from roost.core.scope import Caller
    from roost.ops import orchestrate
    from roost.ops.root import open_app

    check_name(name)
    app = open_app(reading=True)
    try:
        app.store.require(name)  # the person's words for one that does not exist
        found = orchestrate.read(app, Caller(None), name, messages, max_chars)
    finally:
        app.close()
    if as_json:
        click.echo(json.dumps(found))
    elif found["source"] == "transcript":
        for m in found["messages"]:
            click.echo(f"{m['role']}: {for_terminal(m['text'])}")
    elif found["source"] == "screen":
        if found.get("note"):
            click.echo(f"roost: {for_terminal(found['note'])}", err=True)
        click.echo(for_terminal(found["screen"]))
    else:
        from roost.core.errors import RoostError

        raise RoostError(found["note"])
