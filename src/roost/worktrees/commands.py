"""`roost worktree`: the git worktrees roost made for agents (docs/WORKTREES.md)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from roost.core.observation import Observation
    from roost.ops.context import App


@click.group(name="worktree")
def worktree_group() -> None:
    """The git worktrees roost made for agents (spawn --worktree).

    \b
    Examples:
      roost worktree prune --dry-run
      roost worktree recreate api-fix
    """


@worktree_group.command(name="prune")
@click.option(
    "--dry-run", "dry_run", is_flag=True, help="Say what would go and why the rest stays."
)
def prune(dry_run: bool) -> None:
    """Remove the worktrees roost made that no agent uses any more, each only when git says
    nothing would be lost (in the current repository and every one roost made worktrees in).

    \b
    Examples:
      roost worktree prune --dry-run
      roost worktree prune
    """
    from roost.cli.main import _app
    from roost.worktrees import operations as worktrees

    for p in worktrees.prune(_app(), os.getcwd(), dry_run):
        verb = ("would remove" if dry_run else "removed") if p.removed else "kept"
        click.echo(f"{verb} {p.path}: {p.why}")


@worktree_group.command(name="recreate")
@click.argument("name")
def recreate(name: str) -> None:
    """Make agent NAME's worktree again, at the same path, from its branch (when the folder
    was deleted): its conversation then resumes there with `roost wake NAME`.

    \b
    Example:
      roost worktree recreate api-fix && roost wake api-fix
    """
    from roost.cli.main import _app
    from roost.system import locks

    app = _app(name)
    with locks.hold(app.paths.locks, name):
        from roost.worktrees import operations as worktrees

        row = worktrees.recreate(app, app.store.require(name))
    click.echo(f"made {row.path} again from branch {row.branch}; wake it: roost wake {name}")


@click.command(name="fork")
@click.argument("name")
@click.argument("new")
@click.option(
    "--worktree", is_flag=True, help="Give the fork its own worktree, from NAME's current commit."
)
def fork_cmd(name: str, new: str, worktree: bool) -> None:
    """Start agent NEW on a copy of NAME's conversation; NAME goes on with the original
    (claude and codex; other CLIs are refused with the reason). NAME@TURN (from `roost
    search`) forks at that turn: before NAME's last one, the fork starts on a copy of NAME's
    record up to the end of that turn (the original is not changed).

    \b
    Example:
      roost fork api-fix api-fix-alt --worktree
      roost fork api-fix@3 api-fix-retry
    """
    from roost.cli.main import _app
    from roost.core import present
    from roost.ops import fork

    session = None
    if "@" in name:  # NAME@TURN, a turn `roost search` found (issue 39)
        from roost.recall import operations as recall

        point = recall.fork_point(_app(new), name, new)
        name, session = point.name, point.session
    result = fork.fork(_app(name, new), name, new, worktree, session)
    a = result.agent
    click.echo(present.spawned(a.name, a.provider, result.pid, a.home, True))
    click.echo(f"forked from {name}" + (f"; worktree: {a.cwd}" if worktree else ""))


def with_git_counts(app: App, found: list[Observation], as_json: bool, tree: bool) -> str:
    """`roost ls --git`: the listing, each worktree agent with its git counts (JSON: a "git"
    object; table: one line per worktree under it)."""
    import json

    from roost.core import present
    from roost.worktrees import operations as worktrees
    from roost.worktrees import rules as wt

    counts = worktrees.git_counts(app)
    if as_json:
        from roost.usage.operations import price_table

        table = price_table(app)
        items = [present.agent_json(o, table) for o in found]
        for item in items:
            item["git"] = counts.get(str(item["id"]))
        return json.dumps(items) + "\n"
    lines = [present.render(found, False, tree).rstrip("\n")]
    names = {o.agent.id: o.agent.name for o in found}
    for agent_id, c in counts.items():
        state = wt.git_state(c)
        lines.append(f"{names.get(agent_id, '?')}: {c['branch']} at {c['path']}: {state}")
    return "\n".join(lines) + "\n"
