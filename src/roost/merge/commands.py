"""`roost merge` and `roost conflicts` (issue 38 points 3 and 4; merge/operations.py does the
work)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from collections.abc import Callable

    from roost.merge.operations import Plan, Side
    from roost.store.merge import Pair


@click.command(name="merge")
@click.argument("name")
@click.argument("paths", nargs=-1)
@click.option("--squash", "mode", flag_value="squash", help="One commit naming the agent.")
@click.option(
    "--rebase",
    "mode",
    flag_value="rebase",
    help="Replay the agent's commits onto the branch (its own branch is not touched).",
)
@click.option(
    "--files",
    "mode",
    flag_value="files",
    help="Take only PATHS (files or folders) as they are at the agent's branch, as one commit.",
)
@click.option(
    "--into",
    "into",
    default=None,
    metavar="BRANCH",
    help="Merge into BRANCH [default: the branch the main checkout has checked out].",
)
@click.option(
    "--hunks",
    "hunks",
    multiple=True,
    metavar="FILE:N[,N...]",
    help="Take only these hunks of `roost diff NAME` (numbered from 1 in each file, as it shows "
    "them; committed or not), as one commit. Repeat for more files.",
)
@click.option("--yes", "yes", is_flag=True, help="Do not ask (needed without a terminal).")
def merge_command(
    name: str,
    paths: tuple[str, ...],
    mode: str | None,
    into: str | None,
    hunks: tuple[str, ...],
    yes: bool,
) -> None:
    """Take agent NAME's committed work into the main checkout's branch (or --into BRANCH):
    a merge commit by default. Refused, changing nothing, while NAME is mid-turn, when the
    main checkout has uncommitted changes, or when the merge would conflict (the files
    named). NAME's branch and worktree stay; its uncommitted changes are not taken (counted).
    --hunks takes chosen hunks of the change `roost diff NAME` shows (committed or not), as
    one commit; refused, changing nothing, when one is not in the diff, binary, changed since
    its fingerprint was shown, or when they would not apply. The other agents branched from
    the same base are told that it moved.

    \b
    Examples:
      roost merge api-fix
      roost merge api-fix --squash --yes
      roost merge api-fix --files src/parser.py tests/test_parser.py
      roost merge api-fix --rebase --into release
      roost merge api-fix --hunks src/parser.py:1,3 --hunks README.md:2
    """
    from roost.cli.main import _app
    from roost.merge import operations as merging
    from roost.merge import rules

    if hunks and (mode or paths):
        raise click.UsageError("--hunks goes alone (no --squash, --rebase, --files or PATHS)")
    how = "hunks" if hunks else mode or "merge"
    if paths and how != "files":
        raise click.UsageError("PATHS are for --files only")
    picks = rules.parse_picks(hunks) if hunks else ()
    app = _app(name)
    ask = None if yes else _asker()
    done = merging.merge(app, name, how, paths, into, confirm=ask, hunks=picks)
    for line in done.said():
        click.echo(line)


def _merged_line(p: Plan) -> str:
    from roost.merge import rules

    return rules.merged_line(
        p.agent, p.branch, p.target, p.mode, p.commits, len(p.files), p.result, p.before
    )


def _asker() -> Callable[[Plan], bool]:
    """Ask at a terminal; without one, refuse (`--yes` says yes)."""
    from roost.core.errors import RoostError

    if not sys.stdin.isatty():

        def refuse(_p: Plan) -> bool:
            raise RoostError("not merged: no terminal to ask; add --yes to merge", code=2)

        return refuse

    def ask(p: Plan) -> bool:
        line = _merged_line(p).replace("merged ", "merge ", 1).split(", now at")[0]
        if p.note:
            click.echo(f"note: {p.note}", err=True)
        return click.confirm(f"{line}?", default=False, err=True)

    return ask


@click.command(name="conflicts")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option(
    "--now",
    "now",
    is_flag=True,
    help="Judge every worktree agent now first (the watch judges each at its turn's end).",
)
def conflicts_command(as_json: bool, now: bool) -> None:
    """The pairs of worktree agents whose changes collide: the same lines changed, or a
    merge of their branches that would conflict, with the files (and lines).

    \b
    Examples:
      roost conflicts
      roost conflicts --now --json | jq '.[].files'
    """
    import json

    from roost.cli.main import _app
    from roost.merge import operations as merging

    app = _app()
    if now:
        for agent in app.store.agents():
            merging.check(app, agent)
    found = merging.conflicts(app)
    if as_json:
        click.echo(json.dumps([_pair_json(p) for p in found]))
        return
    if not found:
        click.echo("no agents collide")
        return
    for p in found:
        click.echo(_pair_line(p))


def _pair_json(p: Pair) -> dict[str, object]:
    c = p.collision
    return {
        "repo": p.repo,
        "agents": sorted([p.a_name, p.b_name]),
        "files": list(c.files),
        "lines": {path: [list(r) for r in ranges] for path, ranges in c.lines.items()},
        "conflicts": list(c.conflicts),
        "found_at": p.found_at,
        "seen_at": p.seen_at,
        "alerted_at": p.alerted_at,
    }


def _pair_line(p: Pair) -> str:
    from roost.merge import rules

    return f"{p.repo}: " + rules.describe(p.collision, {p.a_id: p.a_name, p.b_id: p.b_name})


@click.command(name="compare")
@click.argument("names", nargs=-1, required=True)
@click.option(
    "--check",
    "run_check",
    is_flag=True,
    help="Run config.toml's [review] check in each worktree (no shell, with its time limit).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def compare_command(names: tuple[str, ...], run_check: bool, as_json: bool) -> None:
    """Worktree agents side by side (a fan's, say): the files and lines each changed since
    its branch left its base, its commits, its uncommitted files, its usage, and with --check
    the check's result; then `roost merge` the one you choose.

    \b
    Examples:
      roost compare api-1 api-2 api-3
      roost compare api-1 api-2 --check
    """
    import json

    from roost.cli.main import _app
    from roost.merge import operations as merging

    app = _app(*names)
    sides = merging.compare(app, names, run_check)
    if as_json:
        click.echo(json.dumps([_side_json(s) for s in sides]))
        return
    click.echo(_side_by_side(sides), nl=False)
    for s in sides:
        if s.check is not None and s.check.exit_code != 0 and s.check.tail:
            click.echo(f"\n{s.agent}: {s.check.words}; its output ends (all of it: {s.check.log}):")
            click.echo("\n".join(s.check.tail.splitlines()[-10:]))


def _side_json(s: Side) -> dict[str, object]:
    c = s.changed
    return {
        "agent": s.agent,
        "branch": s.branch,
        "worktree": s.path,
        "files": c.files,
        "added": c.added,
        "deleted": c.deleted,
        "binary": c.binary,
        "commits": s.commits,
        "uncommitted": s.uncommitted,
        "usage": dict(s.usage),
        "check": None
        if s.check is None
        else {
            "command": s.check.command,
            "exit_code": s.check.exit_code,
            "seconds": round(s.check.seconds, 3),
            "result": s.check.words,
            "log": s.check.log,
        },
    }


def _side_by_side(sides: list[Side]) -> str:
    from roost.core.present import visible

    def tokens(s: Side) -> str:
        total = s.usage.get("total")
        return f"{total:,}" if isinstance(total, int) else "-"

    def cost(s: Side) -> str:
        usd = s.usage.get("cost_usd")
        return f"${usd:.2f}" if isinstance(usd, int | float) else "-"

    rows: list[tuple[str, ...]] = [
        ("", *(s.agent for s in sides)),
        ("branch", *(s.branch for s in sides)),
        ("files", *(str(s.changed.files) for s in sides)),
        ("lines", *(f"+{s.changed.added} -{s.changed.deleted}" for s in sides)),
        ("commits", *(str(s.commits) for s in sides)),
        ("uncommitted", *(str(s.uncommitted) for s in sides)),
        ("tokens", *(tokens(s) for s in sides)),
        ("cost", *(cost(s) for s in sides)),
    ]
    if any(s.check is not None for s in sides):
        rows.append(("check", *(s.check.words if s.check else "-" for s in sides)))
    rows = [tuple(visible(cell) for cell in r) for r in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "".join(
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() + "\n"
        for r in rows
    )
