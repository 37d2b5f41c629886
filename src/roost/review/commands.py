"""`roost diff`, `roost comment`, `roost review send`: an agent's change seen, commented on,
and the comments sent to it (review/operations.py does the work)."""

from __future__ import annotations

import sys
from typing import IO

import click

from roost.core.errors import RoostError

COLOURS = ("auto", "always", "never")


def _out() -> IO[str]:
    """stdout under the terminal guard (system/terminal): what roost paints is its own escape
    codes; the contents' control characters are escaped before they get here (rules)."""
    from roost.system import terminal

    return terminal.raw(sys.stdout)


def _painting(colour: str) -> bool:
    if colour == "always":
        return True
    if colour == "never":
        return False
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


@click.command(name="diff")
@click.argument("name")
@click.option("--stat", "stat", is_flag=True, help="Files with their added and removed lines.")
@click.option("--name-only", "name_only", is_flag=True, help="Only the changed files' names.")
@click.option("--json", "as_json", is_flag=True, help="The change as JSON (hunks within budget).")
@click.option(
    "--base",
    default=None,
    metavar="COMMIT",
    help="Diff against this commit [default: where the agent's branch started].",
)
@click.option(
    "--new-base",
    is_flag=True,
    help="Diff against where its base branch is now, after a merge of another agent moved it.",
)
@click.option(
    "--file", "file", default=None, metavar="PATH", help="Only this file (and all of it)."
)
@click.option(
    "--lines",
    type=click.IntRange(min=1),
    default=None,
    help="Lines shown per file [default: 500; with --file 20000], 5000 in all.",
)
@click.option(
    "--color",
    "colour",
    type=click.Choice(COLOURS),
    default="auto",
    show_default=True,
    help="Colour the output (auto: when stdout is a terminal).",
)
def diff_cmd(
    name: str,
    stat: bool,
    name_only: bool,
    as_json: bool,
    base: str | None,
    new_base: bool,
    file: str | None,
    lines: int | None,
    colour: str,
) -> None:
    """Show agent NAME's change: its worktree against the commit its branch started from,
    committed, staged, unstaged and untracked files in one view. An agent with no roost
    worktree shows the uncommitted changes of its checkout (against HEAD).

    Large diffs are paged: each file shows its first lines, then how many more and the command
    that shows the rest (`--file`); binary files are named with their size.

    \b
    Examples:
      roost diff api-fix --stat
      roost diff api-fix --file src/app.py
      roost diff api-fix --json | jq '.files[].path'
    """
    from roost.cli.main import _app
    from roost.review import operations as review
    from roost.review import rules

    if stat and name_only:
        raise click.UsageError("--stat and --name-only go one at a time")
    if new_base and base is not None:
        raise click.UsageError("--base and --new-base go one at a time")
    app = _app(name, reading=True)
    if new_base:
        from roost.merge import operations as merging

        moved = merging.moved_base(app, app.store.require(name))
        if moved is None:
            raise RoostError(f"{name}'s base branch has not moved since its branch started", code=2)
        base = moved.commit
    t = review.target(app, name, base)
    paint = _painting(colour) and not as_json
    out = _out()
    if stat or name_only:
        d = review.summary(app, t, file)
        if as_json:
            out.write(rules.diff_json(d, d.files, hunks=False) + "\n")
        elif name_only:
            out.write(rules.render_names(d))
        else:
            out.write(rules.describe(d) + "\n" + rules.render_stat(d, paint))
        return
    per_file = lines or (rules.ONE_FILE_LINES if file else rules.FILE_LINES)
    total = max(per_file, rules.TOTAL_LINES)
    budget = rules.Budget(per_file, total)
    found = review.files(app, t, budget, file)
    d = rules.Diff(name, t.top, t.base, t.against, t.head, t.branch)
    if as_json:
        out.write(rules.diff_json(d, found) + "\n")
        return
    out.write(rules.describe(d) + "\n")
    shown = 0
    for f in found:
        shown += 1
        out.write("\n")
        for line in rules.render_file(f, name, paint):
            out.write(line)
    if shown == 0:
        out.write("no changes\n" if file is None else f"{rules.shown_path(file)}: no changes\n")


@click.command(name="comment")
@click.argument("name")
@click.argument("where", required=False, metavar="FILE:LINE[-END]")
@click.argument("text", required=False)
@click.option("--list", "listing", is_flag=True, help="Every comment and how it stands now.")
@click.option("--json", "as_json", is_flag=True, help="With --list: as JSON.")
@click.option("--rm", "remove", type=int, default=None, metavar="ID", help="Remove comment ID.")
def comment_cmd(
    name: str,
    where: str | None,
    text: str | None,
    listing: bool,
    as_json: bool,
    remove: int | None,
) -> None:
    """Comment on agent NAME's change: on FILE:LINE (or FILE:START-END, lines of the file as it
    is now, which must be in the diff), kept until removed; `roost review send NAME` sends the
    comments to the agent. With --list: each comment and its state: open, outdated (its lines
    changed since), sending, sent (not addressed yet), addressed (its lines changed since it
    was sent).

    \b
    Examples:
      roost comment api-fix src/app.py:42 "this retries forever: cap it"
      roost comment api-fix src/app.py:40-48 "split this function"
      roost comment api-fix --list
      roost comment api-fix --rm 3
    """
    from roost.cli.main import _app
    from roost.review import operations as review
    from roost.review import rules

    if listing or as_json:
        if where or text or remove is not None:
            raise click.UsageError("--list takes no FILE:LINE, TEXT or --rm")
        found = review.comments(_app(name, reading=True), name)
        if as_json:
            import json

            click.echo(json.dumps([rules.comment_json(s) for s in found]))
        elif not found:
            click.echo(f"{name} has no comments")
        else:
            for s in found:
                click.echo(rules.comment_row(s))
        return
    if remove is not None:
        if where or text:
            raise click.UsageError("--rm ID takes no FILE:LINE or TEXT")
        review.remove(_app(name), name, remove)
        click.echo(f"removed comment #{remove}")
        return
    if where is None or text is None:
        raise click.UsageError("give FILE:LINE and TEXT (or --list, or --rm ID)")
    path, start, end = rules.parse_where(where)
    made = review.comment(_app(name), name, path, start, end, text)
    click.echo(rules.comment_made(name, made))


@click.group(name="review")
def review_group() -> None:
    """Review an agent's change: see it (`roost diff`), comment (`roost comment`), send.

    \b
    Examples:
      roost review send api-fix
    """


@review_group.command(name="send")
@click.argument("name")
@click.option(
    "--timeout",
    type=float,
    default=600.0,
    show_default=True,
    help="Seconds the send may take (waking the agent, waiting until it is ready, confirming).",
)
def review_send(name: str, timeout: float) -> None:
    """Send agent NAME every comment not sent yet, as ONE message (each comment's file, lines,
    the code around them and its text), through roost's acknowledged send: never typed into a
    question, its delivery confirmed. Comments that do not fit in one message (16,000
    characters) wait for the next send, which says how many.

    \b
    Example:
      roost review send api-fix
    """
    from roost.cli.main import _app
    from roost.review import operations as review
    from roost.review import rules

    done = review.send(_app(name, runtime=True), name, timeout=timeout)
    line = rules.sent_line(name, done.delivered, done.how, len(done.ids), done.left)
    if not done.delivered:
        raise RoostError(line)
    click.echo(line)
