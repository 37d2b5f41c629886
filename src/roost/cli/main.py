"""The `roost` command: thin Click wrappers over the operations (ops/); what they print is
core/present.py's; every error is one line on stderr."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from functools import partial
from typing import IO, TYPE_CHECKING, Any, ClassVar

import click

from roost.cli.mcpserve import mcp_serve_cmd
from roost.core import present
from roost.core.errors import RoostError
from roost.core.model import RESTART_POLICIES
from roost.providers import traits

if TYPE_CHECKING:
    from roost.core.events import Event
    from roost.ops.context import App
SPLITS = ("auto", "right", "below", "v", "h")  # v and h: the old letters, read as before
SPLIT_HELP = (
    "Where the new tile goes: right of or below the tab's focused tile (while every "
    "tile keeps a usable size), or auto: where the layout stays balanced. "
    "(v and h, the old letters, still mean right and below.)"
)


def _known(what: str) -> Callable[[click.Context, click.Parameter, str], list[Any]]:
    """Shell completion of agent or tab names: one read-only SELECT, only while completing
    (`roost ls` and every other command never run it)."""

    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        from click.shell_completion import CompletionItem

        from roost.store.status import known_names
        from roost.system import locate

        found = known_names(os.path.join(locate.roost_home(), "roost.db"), what)
        return [CompletionItem(n) for n in found if n.startswith(incomplete)]

    return complete


AGENTS, TABS = _known("agents"), _known("tabs")


class _Group(click.Group):
    """Click's group, save that a word people reach for that is no command says what to use
    (Click's "did you mean" would offer `restore` for `restart`: another action entirely)."""

    NOT_COMMANDS: ClassVar[dict[str, str]] = {
        "restart": "To restart an agent: roost kill NAME && roost wake NAME; "
        "every live agent: roost reload."
    }

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] in self.NOT_COMMANDS:
            ctx.fail(f"No such command {args[0]!r}. {self.NOT_COMMANDS[args[0]]}")
        return super().resolve_command(ctx, args)


@click.group(
    cls=_Group,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(package_name="roost", prog_name="roost")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """roost gives AI coding agents a durable home in tmux. With no command: the TUI.

    Each agent lives in a tmux session of its own on roost's private server and keeps its
    conversation across crashes, kills and reboots. `roost --host NAME COMMAND …` (or NAME:AGENT
    for an agent) runs the command on another machine's roost: see `roost host --help`.

    \b
    Example:
      roost spawn fix-login --cwd ~/src/app --prompt "fix the login test"
      roost ls
      roost attach fix-login
    """
    if ctx.invoked_subcommand is None:
        _tui()


def _tui() -> None:
    from roost.tui.app import run

    run()


@cli.command()
def tui() -> None:
    """Open the full-screen view of every agent (also: `roost` alone).

    \b
    Example:
      roost tui
    """
    _tui()


@cli.command(name="open")
@click.argument("tab_name", metavar="TAB", shell_complete=TABS)
def open_cmd(tab_name: str) -> None:
    """Open TAB in plain tmux: one pane per tile, each attached to that agent's home.

    \b
    Example:
      roost open main
    """
    from roost.ops import tabview
    from roost.system import programs

    app = _app(tab_name)
    argv = tabview.open_tab(app, tab_name)
    env = dict(app.tmux.env)
    app.close()
    programs.replace_roost(argv, env)


def _app(*names: str, reading: bool = False, runtime: bool = False) -> App:
    """Check the names given first, so bad input never creates or opens anything. (The store
    and tmux are imported here, not at the top, to keep `roost --help` fast.) `runtime`: a
    command that starts or changes agents makes sure the roost service runs first (issue 36).
    A command that works without it (it cannot start, or serves no endpoint to a launch) says
    so once, on stderr."""
    from roost.core.names import check_name
    from roost.ops import service
    from roost.ops.root import open_app

    for name in names:
        check_name(name)
    app = open_app(reading=reading)
    service.say_without(_say)
    if runtime:
        service.runtime(app)
    return app


def _say(line: str) -> None:
    click.echo(f"roost: {line}", err=True)


@cli.command(context_settings={"ignore_unknown_options": True})
@click.argument("name")
@click.option(
    "--provider",
    type=click.Choice(tuple(traits.BY_NAME)),
    default=None,
    help="Which agent CLI to run [default: claude].",
)
@click.option("--cwd", type=str, default=None, help="Working directory [default: the current one].")
@click.option(
    "--home",
    "home",
    default=None,
    metavar="TEAM",
    help="Put the agent's window in the shared home session TEAM.",
)
@click.option(
    "--dangerous/--no-dangerous",
    default=None,
    help="Skip the agent's permission prompts [default: the workspace's mode].",
)
@click.option("--prompt", default=None, help="The first message for the agent.")
@click.option(
    "--tab",
    default=None,
    help="The tab whose tile it becomes [default: main].",
    shell_complete=TABS,
)
@click.option(
    "--split", type=click.Choice(SPLITS), default="auto", show_default=True, help=SPLIT_HELP
)
@click.option(
    "--detached",
    is_flag=True,
    help="Park it instead of tiling it: running now, hibernated at the next restore.",
)
@click.option(
    "--parent", default=None, metavar="P", help="Link it under agent P.", shell_complete=AGENTS
)
@click.option(
    "--orchestrated-by",
    "orchestrated_by",
    default=None,
    metavar="P",
    help="Agent P created it (orchestration parent; the root is inherited).",
)
@click.option(
    "--restart",
    type=click.Choice(RESTART_POLICIES),
    default="never",
    show_default=True,
    help="Restart it when it exits with a failure (with backoff).",
)
@click.option(
    "--no-mcp", "no_mcp", is_flag=True, help="Do not give it roost's MCP tools (roost mcp)."
)
@click.option(
    "--worktree",
    is_flag=True,
    help="Give it a git worktree of the current repository, on a branch of its own.",
)
@click.option("--branch", default=None, help="With --worktree: the branch [default: roost/NAME].")
@click.option("--base", default=None, help="With --worktree: where a new branch starts [HEAD].")
@click.option(
    "--yes",
    is_flag=True,
    help="With --worktree: agree to run the repository's setup script as it is now.",
)
@click.option(
    "--fan",
    type=int,
    default=None,
    metavar="N",
    help="Start N agents NAME-1..NAME-N on the same prompt, each in its own worktree.",
)
@click.argument("argv", nargs=-1, type=click.UNPROCESSED)
def spawn(
    name: str,
    provider: str | None,
    cwd: str | None,
    home: str | None,
    dangerous: bool | None,
    prompt: str | None,
    tab: str | None,
    split: str,
    detached: bool,
    parent: str | None,
    orchestrated_by: str | None,
    restart: str,
    no_mcp: bool,
    worktree: bool,
    branch: str | None,
    base: str | None,
    yes: bool,
    fan: int | None,
    argv: tuple[str, ...],
) -> None:
    """Start agent NAME in its own home (or wake it, if it exists and is stopped).

    Everything after `--` is passed to the agent CLI; with --provider command it is the program.

    \b
    Examples:
      roost spawn api-fix --cwd ~/src/api --prompt "make the tests pass"
      roost spawn reviewer --provider codex --home team --tab review --split below
      roost spawn helper --detached --orchestrated-by api-fix
      roost spawn logs --provider command -- tail -f /var/log/syslog
      roost spawn api-fix --worktree --base main
      roost spawn api --fan 3 --prompt "make the parser 2x faster"  (then: roost compare)
    """
    # the spawn's options but its name, worktree and branch: one agent's, or each of a fan's
    one = partial(
        _spawn_one,
        provider=provider,
        cwd=cwd,
        home=home,
        dangerous=dangerous,
        prompt=prompt,
        tab=tab,
        split=split,
        detached=detached,
        parent=parent,
        orchestrated_by=orchestrated_by,
        restart=restart,
        no_mcp=no_mcp,
        base=base,
        yes=yes,
        argv=argv,
    )
    if fan is None:
        one(name, worktree=worktree, branch=branch)
        return
    from roost.merge.rules import fan_names

    if branch:
        raise click.UsageError("--fan gives each agent its own branch: no --branch")
    names = fan_names(name, fan)
    app = _app(*names)  # every name checked before anything is made
    taken = [n for n in names if app.store.get(n) is not None]
    app.close()
    if taken:
        raise RoostError(f"--fan makes new agents: {', '.join(taken)} exist already")
    for each in names:
        one(each, worktree=True, branch=None)
    click.echo(f"fanned out: {', '.join(names)}; compare them: roost compare {' '.join(names)}")


def _spawn_one(
    name: str,
    provider: str | None,
    cwd: str | None,
    home: str | None,
    dangerous: bool | None,
    prompt: str | None,
    tab: str | None,
    split: str,
    detached: bool,
    parent: str | None,
    orchestrated_by: str | None,
    restart: str,
    no_mcp: bool,
    worktree: bool,
    branch: str | None,
    base: str | None,
    yes: bool,
    argv: tuple[str, ...],
) -> None:
    from roost.ops import lifecycle
    from roost.worktrees import operations as worktrees

    if (branch or base or yes) and not worktree:
        raise click.UsageError("--branch, --base and --yes go with --worktree")
    asking = (lambda q: click.confirm(q, default=False)) if sys.stdin.isatty() else None

    if home is not None:
        from roost.core.names import check_name

        check_name(home, "home name")
    app = _app(name, runtime=True)
    place = lifecycle.Place(
        tab=tab, split=split, detached=detached, parent=parent, orchestrated_by=orchestrated_by
    )
    result = lifecycle.spawn(
        app,
        name,
        provider=provider,
        cwd=cwd,
        home=home,
        dangerous=dangerous,
        prompt=prompt,
        args=argv,
        place=place,
        restart=restart,
        mcp=not no_mcp,
        worktree=worktrees.Ask(branch, base, yes, asking) if worktree else None,
    )
    a = result.agent
    if result.question is not None:  # one line: it asks the person first; the prompt waits
        click.echo(present.waiting_for_you(a.name, result.question, result.prompt))
    else:
        click.echo(present.spawned(a.name, a.provider, result.pid, a.home, a.launches == 1))
        if result.prompt == "held":
            click.echo(present.prompt_held(a.name))
    if worktree:
        click.echo(f"worktree: {a.cwd}")


@cli.command(name="ls")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array for scripts.")
@click.option("--tree", is_flag=True, help="Show each agent's orchestration children under it.")
@click.option(
    "--git", "with_git", is_flag=True, help="With each worktree's dirty / ahead / behind counts."
)
@click.option("--all", "everywhere", is_flag=True, help="Also every host's (roost host).")
def ls_cmd(as_json: bool, tree: bool, with_git: bool, everywhere: bool) -> None:
    """List every agent and whether it runs.

    \b
    Examples:
      roost ls
      roost ls --tree
      roost ls --json | jq '.[] | select(.state == "stopped") | .name'
    """
    from roost.ops import observe

    if everywhere:
        if tree or with_git:
            raise click.UsageError("--all lists every host's agents, without --tree or --git")
        return ls_all(as_json)  # hosts/commands.py
    app = _app(reading=True)
    found = observe.current(app)
    if not with_git:
        from roost.usage.operations import price_table

        click.echo(present.render(found, as_json, tree, price_table(app)), nl=False)
        return
    from roost.worktrees.commands import with_git_counts

    click.echo(with_git_counts(app, found, as_json, tree), nl=False)


@cli.command()
@click.argument("name", shell_complete=AGENTS)
def attach(name: str) -> None:
    """Attach to agent NAME in its home, waking it first if it is stopped. Needs a terminal:
    without one it refuses (exit 2) and wakes nothing.

    Leave it again with C-q (detach), the same inside your own tmux or not; your own tmux
    session stays attached. roost's server uses the prefix C-a (C-a d detaches too; C-a C-a
    sends C-a to the agent). Your own settings for it: $ROOST_HOME/tmux.conf.

    \b
    Example:
      roost attach api-fix
    """
    from roost.ops import lifecycle
    from roost.system import programs

    app = _app(name, runtime=True)
    notes: list[str] = []
    argv = lifecycle.attach_plan(app, name, notes, terminal=sys.stdin.isatty())
    for note in notes:
        click.echo(note, err=True)
    env = dict(app.tmux.env)  # without $TMUX: attaching from inside another tmux is intended
    app.close()
    programs.replace_roost(argv, env)


@cli.command()
@click.argument("name", shell_complete=AGENTS)
@click.option("--tree", is_flag=True, help="Also kill every descendant (linked or orchestrated).")
def kill(name: str, tree: bool) -> None:
    """Stop agent NAME's whole process tree; its home and record stay.

    \b
    Examples:
      roost kill api-fix && roost wake api-fix
      roost kill lead --tree
    """
    from roost.core import present
    from roost.ops import lifecycle
    from roost.ops import workspace as wsops

    app = _app(name, runtime=True)
    if lifecycle.handed_over(app, name, ["kill", name, *(["--tree"] if tree else [])]):
        click.echo(present.handed_over(name, "kill"))
        return
    if tree:
        click.echo(present.killed_tree(wsops.kill_tree(app, name)))
        return
    click.echo(present.stopped(name, len(lifecycle.kill(app, name))))


# `stop` and `start`: the words people reach for (in tmux, `kill` destroys; roost's keeps the
# home and the record). Same commands under a second name.
cli.add_command(kill, name="stop")


@cli.command()
@click.argument("name", shell_complete=AGENTS)
@click.option(
    "--fresh", is_flag=True, help="Start a new conversation instead of resuming the recorded one."
)
@click.option(
    "--session",
    "session",
    metavar="ID",
    help="Resume this earlier conversation of the agent (an id of its "
    "session_history in `roost ls --json`).",
)
def wake(name: str, fresh: bool, session: str | None) -> None:
    """Start agent NAME again in its home, resuming its conversation in its cwd.

    \b
    Examples:
      roost wake api-fix
      roost wake api-fix --session 5f0c...   # back to an earlier conversation
    """
    from roost.budgets import operations as budget
    from roost.ops import lifecycle

    app = _app(name, runtime=True)
    result = lifecycle.wake(app, name, fresh=fresh, session=session)
    click.echo(present.woke(name, result.started, result.pid, result.agent.home))
    parked = budget.take_parked(app, name)  # issue 23 part 5: why the budget parked it
    if parked:
        click.echo(
            f"{name} was parked because {parked}; while it is, {name} is parked again after "
            f"each turn (roost policy {name} --budget … raises it)"
        )


cli.add_command(wake, name="start")
from roost.worktrees.commands import fork_cmd, worktree_group  # noqa: E402  (issue 22)

cli.add_command(worktree_group)
cli.add_command(fork_cmd)
from roost.merge.commands import (  # noqa: E402  (issue 38)
    compare_command,
    conflicts_command,
    merge_command,
)

cli.add_command(merge_command)
cli.add_command(conflicts_command)
cli.add_command(compare_command)

from roost.limits.commands import limits_command  # noqa: E402 - issue 23: roost limits

cli.add_command(limits_command)

from roost.usage.commands import usage_command  # noqa: E402 - issue 23 part 4 (branch usage)

cli.add_command(usage_command)

from roost.recall.commands import search_command, show_command  # noqa: E402 - issue 39: recall

cli.add_command(search_command)
cli.add_command(show_command)


@cli.command()
@click.argument("name", shell_complete=AGENTS)
@click.option(
    "--keep-worktree",
    "keep_worktree",
    is_flag=True,
    help="Keep its git worktree and branch (roost worktree prune removes it later).",
)
def rm(name: str, keep_worktree: bool) -> None:
    """Forget agent NAME: stop it, remove its window or home, and its record. Its git worktree
    goes too, only when git says nothing would be lost.

    \b
    Example:
      roost rm api-fix
    """
    from roost.ops import lifecycle

    app = _app(name)
    extra = ["--keep-worktree"] if keep_worktree else []
    if lifecycle.handed_over(app, name, ["rm", name, *extra]):
        click.echo(present.handed_over(name, "rm"))
        return
    for line in lifecycle.rm(app, name, keep_worktree=keep_worktree):
        click.echo(line)
    click.echo(present.removed(name))


@cli.command()
@click.argument("name", shell_complete=AGENTS)
@click.option(
    "--lines",
    "-n",
    type=int,
    default=50,
    show_default=True,
    help="How many of the last lines to print (at most 10000).",
)
def capture(name: str, lines: int) -> None:
    """Print the last lines of agent NAME's screen.

    \b
    Example:
      roost capture api-fix --lines 20
    """
    from roost.ops import lifecycle

    click.echo(lifecycle.capture(_app(name), name, lines), nl=False)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print findings as JSON.")
def doctor(as_json: bool) -> None:
    """Check tmux, the socket, the store, drift between store and tmux, and the agent CLIs.

    Exits 1 when it finds a problem; each finding says what to do about it. Each agent CLI's
    installed version is shown next to the one roost was verified with (WARN when they differ).

    \b
    Example:
      roost doctor
    """
    from roost.ops import doctor as doc

    report = doc.run()
    click.echo(json.dumps(report.as_json(), indent=2) if as_json else report.text(), nl=False)
    if not report.ok:
        sys.exit(1)


# ---- the workspace -----------------------------------------------------------------------
@cli.group()
def tab() -> None:
    """Tabs: named, ordered groups of tiles (the agents on screen).

    \b
    Examples:
      roost tab new review
      roost tab ls
    """


@tab.command(name="new")
@click.argument("name")
def tab_new(name: str) -> None:
    """Create an empty tab NAME.

    \b
    Example:
      roost tab new review
    """
    from roost.ops import workspace as wsops

    wsops.tab_new(_app(), name)
    click.echo(present.tab_created(name))


@tab.command(name="rename")
@click.argument("old", shell_complete=TABS)
@click.argument("new")
def tab_rename(old: str, new: str) -> None:
    """Rename tab OLD to NEW.

    \b
    Example:
      roost tab rename review code-review
    """
    from roost.ops import workspace as wsops

    wsops.tab_rename(_app(), old, new)
    click.echo(present.tab_renamed(old, new))


@tab.command(name="close")
@click.argument("name", shell_complete=TABS)
def tab_close(name: str) -> None:
    """Close tab NAME; its tiles are parked and keep running.

    \b
    Example:
      roost tab close review
    """
    from roost.ops import workspace as wsops

    click.echo(present.tab_closed(name, wsops.tab_close(_app(), name)))


@tab.command(name="balance")
@click.argument("name", shell_complete=TABS)
def tab_balance(name: str) -> None:
    """Lay tab NAME out as an even grid, its tiles in order (as tmux's tiled layout).

    \b
    Example:
      roost tab balance main
    """
    from roost.ops import workspace as wsops

    click.echo(present.tab_balanced(name, len(wsops.tab_balance(_app(), name))))


@tab.command(name="ls")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def tab_ls(as_json: bool) -> None:
    """List tabs with their tiles in order.

    \b
    Example:
      roost tab ls
    """
    from roost.ops import workspace as wsops

    rows = wsops.tab_list(_app())
    click.echo(present.tabs([(r.name, r.tiles, r.focus) for r in rows], as_json), nl=False)


@cli.command()
@click.argument("name", shell_complete=AGENTS)
@click.option("--tree", is_flag=True, help="Also park every descendant.")
def park(name: str, tree: bool) -> None:
    """Take agent NAME off screen: it keeps running, and hibernates at the next restore.

    \b
    Example:
      roost park api-fix
    """
    from roost.ops import workspace as wsops

    click.echo(present.parked(wsops.park(_app(name, runtime=True), name, tree)))


@cli.command()
@click.argument("name", shell_complete=AGENTS)
@click.option(
    "--tab",
    "tab_name",
    required=True,
    help="The tab to put it in (made if missing).",
    shell_complete=TABS,
)
@click.option(
    "--split", type=click.Choice(SPLITS), default="auto", show_default=True, help=SPLIT_HELP
)
def place(name: str, tab_name: str, split: str) -> None:
    """Put a parked or buried agent NAME on screen as a tile of TAB, waking it.

    \b
    Example:
      roost place api-fix --tab main --split right
    """
    from roost.ops import workspace as wsops

    placed = wsops.place(_app(name), name, tab_name, split)
    click.echo(
        present.placed(name, tab_name, placed.result.pid, placed.was if placed.moved else None)
    )


@cli.command()
@click.argument("name", shell_complete=AGENTS)
def bury(name: str) -> None:
    """Close agent NAME's tile and keep it for revival; its process stops.

    \b
    Example:
      roost bury old-experiment && roost unbury old-experiment
    """
    from roost.ops import workspace as wsops

    wsops.bury(_app(name), name)
    click.echo(present.buried(name))


@cli.command()
@click.argument("name", shell_complete=AGENTS)
def unbury(name: str) -> None:
    """Revive buried agent NAME where it was (or parked, if its tab is gone).

    \b
    Example:
      roost unbury old-experiment
    """
    from roost.ops import workspace as wsops

    click.echo(present.unburied(name, wsops.unbury(_app(name), name)))


@cli.command()
@click.argument("name", shell_complete=AGENTS)
def pin(name: str) -> None:
    """Pin agent NAME to the top of lists (it does not wake it).

    \b
    Example:
      roost pin api-fix
    """
    from roost.ops import workspace as wsops

    click.echo(present.pinned(name, wsops.pin(_app(name), name)))


@cli.command()
@click.argument("name", shell_complete=AGENTS)
def unpin(name: str) -> None:
    """Unpin agent NAME.

    \b
    Example:
      roost unpin api-fix
    """
    from roost.ops import workspace as wsops

    click.echo(present.unpinned(name, wsops.unpin(_app(name), name)))


@cli.command()
@click.argument("child", shell_complete=AGENTS)
@click.option(
    "--parent", default=None, metavar="P", help="The parent agent.", shell_complete=AGENTS
)
@click.option("--clear", is_flag=True, help="Remove the link instead.")
def link(child: str, parent: str | None, clear: bool) -> None:
    """Link agent CHILD under agent P (or --clear the link).

    \b
    Examples:
      roost link tests --parent api-fix
      roost link tests --clear
    """
    from roost.ops import workspace as wsops

    if not clear and parent is None:
        raise click.UsageError("give --parent P, or --clear")
    app = _app(child, *([parent] if parent else []))
    wsops.link(app, child, None if clear else parent)
    click.echo(present.linked(child, None if clear else parent))


@cli.command()
@click.argument("name", shell_complete=AGENTS)
def hibernate(name: str) -> None:
    """Stop agent NAME's process now and release its home; keep everything else.

    \b
    Example:
      roost hibernate api-fix && roost wake api-fix
    """
    from roost.ops import lifecycle

    app = _app(name, runtime=True)
    if lifecycle.handed_over(app, name, ["hibernate", name]):
        click.echo(present.handed_over(name, "hibernate"))
        return
    lifecycle.hibernate(app, name)
    click.echo(present.hibernates(name))


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option(
    "--concurrency",
    type=int,
    default=None,
    help="At most this many agents start at once [default: 3, or restore.concurrency].",
)
@click.option(
    "--stagger",
    type=float,
    default=None,
    help="Seconds between two starts [default: 0.25, or restore.stagger].",
)
def restore(as_json: bool, concurrency: int | None, stagger: float | None) -> None:
    """Bring the workspace back: start the tiles' agents, hibernate the rest.

    Parked and buried agents get no process and no home; they wake when used. Each start is
    watched for a few seconds: one whose CLI dies at once counts as failed, with its last words
    as the reason (also in `roost ls`); after 2 identical authentication failures of one
    provider its other agents are not started, nor is an agent that needs approval, whose
    executable is missing or whose conversation cannot be resumed. Progress goes to stderr, a
    line per agent as its start settles; the report (or --json) to stdout: what resumed its
    conversation (with its session id), what started, what is still hibernated, what failed and
    what was not started, each with why. Exits 1 when any failed or was not started.

    \b
    Example:
      roost restore --concurrency 2
    """
    from roost.ops import service
    from roost.ops.restore import restore as run

    app = _app()
    # the runtime first (issue 36), even after a `roost service stop`: its start overlaps the
    # plan, and each launch waits for its endpoint, so no restored agent gets a transport of
    # its own (when none can, the restore says so once, not per agent)
    service.runtime(app, force=True)
    report = run(app, concurrency, stagger, tell=lambda line: click.echo(line, err=True))
    click.echo(json.dumps(report.as_json()) if as_json else report.text(), nl=as_json)
    if not report.ok:
        sys.exit(1)


@cli.command()
@click.option(
    "--dangerous/--no-dangerous",
    default=None,
    help="Switch the workspace's mode before restarting.",
)
def reload(dangerous: bool | None) -> None:
    """Restart the live agents (tiles that run), in a new mode if asked; never starts others.

    \b
    Example:
      roost reload --dangerous
    """
    from roost.ops import workspace as wsops

    click.echo(present.reloaded(wsops.reload(_app(), dangerous)))


@cli.command()
@click.option(
    "--older-than",
    "older_than",
    default=None,
    metavar="DURATION",
    help="Also remove parked or buried agents idle this long (30m, 12h, 7d, 2w).",
)
@click.option("--dry-run", is_flag=True, help="Only list what would be removed.")
@click.option(
    "--yes", "-y", is_flag=True, help="Remove without asking (needed when stdin is not a terminal)."
)
def gc(older_than: str | None, dry_run: bool, yes: bool) -> None:
    """Remove stale records (and idle parked or buried agents); never a pinned, live or running
    one. Lists what it would remove and asks first (or takes --yes).

    \b
    Example:
      roost gc --older-than 14d --dry-run
      roost gc --older-than 14d --yes
    """
    from roost.ops import workspace as wsops

    age = wsops.parse_duration(older_than) if older_than else None
    app = _app()
    found = wsops.gc_candidates(app, age)
    if not found:
        click.echo(present.collected([], dry_run), nl=False)
        if not dry_run:
            _forget_removed(app)
        return
    if dry_run or not yes:
        click.echo(present.collected([(a.name, why) for a, why in found], True), nl=False)
        if dry_run:
            return
        if not sys.stdin.isatty():
            raise RoostError(
                f"nothing removed: stdin is not a terminal to ask; pass --yes to "
                f"remove the {len(found)} agent(s) above",
                code=2,
            )
        if not click.confirm(f"remove {len(found)} agent(s)?", default=False):
            click.echo("nothing removed")
            return
    removed, kept = wsops.gc_remove(app, found)
    if removed:
        click.echo(present.collected([(a.name, why) for a, why in removed], False), nl=False)
    for agent in kept:
        click.echo(f"kept {agent.name}: it started running meanwhile")
    _forget_removed(app)


def _forget_removed(app: App) -> None:
    """gc removes what the recall index kept of removed agents' conversations (issue 39)."""
    from roost.recall import operations as recall

    gone = recall.prune(app)
    if gone:
        click.echo(f"forgot {gone} message(s) of removed agents in the recall index")


@cli.command(name="export")
def export_cmd() -> None:
    """Print the whole workspace as versioned JSON.

    \b
    Example:
      roost export > workspace.json
    """
    from roost.ops import transfer

    click.echo(json.dumps(transfer.export(_app(reading=True)), indent=2, sort_keys=True))


@cli.command(name="import")
@click.argument("file", type=click.File("r"))
@click.option(
    "--allow-dangerous",
    is_flag=True,
    help="Keep the file's dangerous mode (the workspace's and its agents') and its "
    "agents' CLI arguments; without it they are left off, and listed.",
)
def import_cmd(file: IO[str], allow_dangerous: bool) -> None:
    """Add the agents, tabs and pins of an export; bad input changes nothing.

    \b
    Example:
      roost import workspace.json
    """
    from roost.ops import transfer

    try:
        data = json.load(file)
    except (ValueError, RecursionError) as exc:
        raise RoostError(f"import refused, nothing changed: not JSON ({exc})", code=2) from None
    app = _app()
    click.echo(present.imported(*transfer.import_(app, data, allow_dangerous)))
    for name, why in transfer.cannot_resume(app, [a["id"] for a in data["agents"]]):
        click.echo(present.cannot_resume(name, why), err=True)


@cli.command()
@click.argument("name", shell_complete=AGENTS)
@click.option(
    "--yes", "-y", is_flag=True, help="Approve without asking (needed without a terminal)."
)
def approve(name: str, yes: bool) -> None:
    """Show the arguments an import kept aside for agent NAME and, on your yes, make them its
    own: until then it never starts.

    \b
    Example:
      roost approve logs
    """
    from roost.core.exchange import PROGRAM_IN_ARGS
    from roost.ops import transfer

    app = _app(name)
    agent, args = transfer.proposal(app, name)
    if args is None:
        click.echo(f"{name}: nothing to approve")
        return
    program_first = agent.provider in PROGRAM_IN_ARGS
    click.echo(present.approval(agent.name, agent.provider, args, program_first), nl=False)
    if not yes:
        if not sys.stdin.isatty():
            raise RoostError(
                f"nothing approved: stdin is not a terminal to ask; pass --yes to approve "
                f"{name}'s {len(args)} argument(s) above",
                code=2,
            )
        if not click.confirm("approve them?", default=False):
            click.echo("nothing approved")
            return
    transfer.approve(app, name, args)
    click.echo(present.approved(name))


# ---- status, send, supervision ---------------------------------------------------------------
@cli.command()
@click.argument("name", shell_complete=AGENTS)
@click.argument("text", required=False)
@click.option("--wait", is_flag=True, help="Wait until the agent is idle again; print its reply.")
@click.option(
    "--timeout",
    type=float,
    default=600.0,
    show_default=True,
    help="Seconds the whole command may take: waking the agent, waiting for it to be "
    "ready, delivering and confirming the text, and with --wait its reply.",
)
@click.option(
    "--ready-timeout",
    "ready_timeout",
    type=float,
    default=60.0,
    show_default=True,
    help="Seconds to wait for the agent to be ready for input (idle) before giving "
    "up (within --timeout).",
)
def send(name: str, text: str | None, wait: bool, timeout: float, ready_timeout: float) -> None:
    """Send TEXT (or standard input) to agent NAME as its next message, and confirm it arrived.

    Wakes a stopped or hibernated agent first, waits for it to be idle, and never sends on top
    of a draft someone left typed on its input line: it refuses instead (the draft stays as it
    was). Exits 1 when the text was not delivered or a time limit ran out, saying what it was
    waiting for. Confirming delivery takes at most 15 s.

    \b
    Examples:
      roost send api-fix "run the tests again"
      git diff | roost send reviewer --wait --timeout 300
    """
    from roost.core import delivery
    from roost.ops import send as sending

    problem = delivery.check_timeouts(timeout, ready_timeout)
    if problem is not None:
        raise RoostError(problem, code=2)
    if text is None:
        text = sys.stdin.read()
    result = sending.send(
        _app(name, runtime=True),
        name,
        text,
        wait=wait,
        timeout=timeout,
        ready_timeout=ready_timeout,
    )
    if result.note is not None:
        click.echo(f"roost: {result.note}", err=True)
    if not result.delivered:
        raise RoostError(present.not_delivered(name, result.how))
    if result.timed_out:
        raise RoostError(
            f"timed out after {timeout:g} s waiting for {name}'s reply (the "
            f"message was delivered; roost capture {name} shows where it is)"
        )
    if result.failure is not None:
        raise RoostError(present.turn_failed(name, result.failure))
    if wait and result.reply is None:
        raise RoostError(present.no_reply(name, result.no_reply or "none was found"))
    if wait:
        click.echo(result.reply)
    else:
        click.echo(present.delivered(name, result.how))


@cli.command()
@click.argument("name", shell_complete=AGENTS)
@click.argument("choice", required=False)
@click.option(
    "--question",
    "expect",
    metavar="ID",
    help="Answer only this question (the id `roost answer NAME` shows): refused if the agent "
    "now asks something else.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the question or the outcome as JSON.")
def answer(name: str, choice: str | None, expect: str | None, as_json: bool) -> None:
    """Answer agent NAME's question: without CHOICE, show what it asks and its choices.

    CHOICE is a choice's number, y or n, or its words. roost presses it only if the agent still
    asks that question, waits until the question is gone, says what the agent shows next, and
    then sends what it held for the agent (a first prompt). Exits 1 when the agent asks
    nothing, 2 when CHOICE names none of its choices; nothing is pressed then.

    \b
    Examples:
      roost answer api-fix                 # what does it ask?
      roost answer api-fix 2               # "Yes, I trust this folder"
      roost answer api-fix "yes, i trust"  # the same, by its words
    """
    import json

    from roost.ops import answer as answering

    app = _app(name, runtime=True)
    if choice is None:
        found = answering.asked(app, name)
        if as_json:
            click.echo(json.dumps(present.question_json(name, found.question)))
        else:
            click.echo(present.question(name, found.question), nl=False)
        return
    done = answering.answer(app, name, choice, expect=expect)
    went_in = done.held
    said = present.answered(name, done.choice.label, done.status, done.reason, went_in)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "name": name,
                    "question": done.question.text,
                    "choice": {"key": done.choice.key, "label": done.choice.label},
                    "status": done.status,
                    "status_reason": done.reason,
                    "held_delivered": went_in,
                    "said": said,
                }
            )
        )
    else:
        click.echo(said)


@cli.command()
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON object per event (status changes and more)."
)
@click.option(
    "--interval",
    type=float,
    default=1.0,
    show_default=True,
    help="Seconds between two looks when the roost service does not run.",
)
@click.option(
    "--since",
    type=click.IntRange(min=0),
    default=None,
    metavar="SEQ",
    help="Resume: every event after sequence SEQ (a line's `seq`), then what follows.",
)
@click.option(
    "--notify",
    is_flag=True,
    help="Also show each alert on this terminal: a desktop notification and a bell (stderr "
    "with --json); with --all each host's too, titled (on HOST). Only shown: each machine's "
    "roost service delivers its own to its config.toml [notify] channels (roost notify).",
)
@click.option("--all", "everywhere", is_flag=True, help="With --json: also every host's events.")
def watch(
    as_json: bool, interval: float, since: int | None, notify: bool, everywhere: bool
) -> None:
    """Print every agent's status changes as they happen, until interrupted (Ctrl-C); --json
    prints every event of the log, in order, none missed, each with its sequence `seq`. Times
    are in your time zone ($TZ); --json gives ISO 8601 with the offset. With the roost service
    running (started here on demand), changes are pushed; without it, watch looks itself.

    \b
    Example:
      roost watch --json | jq -c 'select(.status == "waiting")'
      roost watch --json --since 1200
    """
    from roost.ops import observe, stream
    from roost.system.clock import local_zone

    if everywhere:
        if not as_json or since is not None:
            raise click.UsageError("--all goes with --json (and resumes each host by itself)")
        return watch_all(notify)  # hosts/commands.py
    app, zone = _app(), local_zone(os.environ)
    shown: dict[str, str | None] = {}
    if since is None:
        # The first look shows every agent; then the events the log records after it (by this
        # watch's refresh, the service, a send, an ls, the TUI), not a comparison of two looks:
        # that would miss a turn that began and ended between them.
        since = app.store.last_event_id()
        first = observe.refresh(app)
        for o in first:
            click.echo(present.watch_line(o, None, as_json, zone))
        shown = {o.agent.id: o.status_since for o in first}

    alerting = WatchAlerts(app, sys.stderr if as_json else sys.stdout) if notify else None

    def emit(event: Event) -> None:
        line = present.stream_line(event, shown, as_json, zone)
        if line is not None:
            click.echo(line)
        if alerting is not None:
            alerting.emit(event)

    stream.follow(app, since, interval, emit, alerting.flush if alerting else sys.stdout.flush)


@cli.command()
@click.argument("name", required=False, shell_complete=AGENTS)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
@click.option("--limit", type=int, default=200, show_default=True, help="The newest this many.")
def events(name: str | None, as_json: bool, limit: int) -> None:
    """Show the event log of agent NAME (or of all agents). Times are in your time zone ($TZ);
    --json gives ISO 8601 with the offset.

    \b
    Example:
      roost events api-fix --json
    """
    app = _app(*([name] if name else []), reading=True)
    agent_id = app.store.require(name).id if name else None
    found = app.store.events(agent_id, limit)
    if as_json:
        click.echo(json.dumps([e.listed() for e in found]))
        return
    from roost.system.clock import local_zone

    zone = local_zone(os.environ)
    for e in found:
        click.echo(present.event_line(e, zone))


@cli.command()
@click.argument("name", shell_complete=AGENTS)
@click.argument("policy", type=click.Choice(RESTART_POLICIES), required=False)
@click.option(
    "--on-limit",
    type=click.Choice(["resume", "off", "default"]),
    help="At a usage limit's reset: resume (tell it to go on), off, or default (its tab's, "
    "else config.toml's [limits] on_limit).",
)
@click.option("--tab", "is_tab", is_flag=True, help="NAME is a tab: set its --on-limit.")
@click.option("--budget", metavar="TOKENS|$COST", help="Park NAME after the turn that reaches it.")
@click.option("--tree-budget", metavar="TOKENS|$COST", help="The same for NAME's whole tree.")
def policy(
    name: str,
    policy: str | None,
    on_limit: str | None,
    is_tab: bool,
    budget: str | None,
    tree_budget: str | None,
) -> None:
    """Set agent NAME's restart policy: never, or on-failure (1 s, 2 s, 4 s backoff; more than
    3 failed starts within 60 s and it stays failed until you wake it); what happens at a usage
    limit's reset (--on-limit); and its budget: --budget (tokens: 500k, 2M; or an estimated
    cost: $5) parks it after the turn that reaches it, --tree-budget counts its orchestration
    tree, `off` clears either.

    \b
    Example:
      roost policy api-fix on-failure
      roost policy api-fix --on-limit resume
      roost policy lead --tree-budget '$20'
    """
    if policy is None and on_limit is None and budget is None and tree_budget is None:
        raise RoostError("give a restart POLICY, --on-limit, --budget or --tree-budget", code=2)
    if is_tab and (policy is not None or budget is not None or tree_budget is not None):
        raise RoostError("a tab has no restart policy or budget, only --on-limit", code=2)
    if budget is not None or tree_budget is not None:  # both checked before anything is stored
        from roost.budgets.rules import parse

        for given in (budget, tree_budget):
            if given is not None:
                parse(given)
    app = _app(name)
    if policy is not None:
        from roost.ops.supervise import set_restart_policy

        set_restart_policy(app, name, policy)
        click.echo(present.restart_policy_set(name, policy))
    if on_limit is not None:
        from roost.ops import resume

        resume.set_policy(app, name, on_limit, tab=is_tab)
        click.echo(f"{'tab ' if is_tab else ''}{name}: on-limit {on_limit}")
    if budget is not None or tree_budget is not None:  # issue 23 part 5 (branch usage)
        from roost.budgets import operations as budgets

        for given, tree in ((budget, False), (tree_budget, True)):
            if given is not None:
                click.echo(budgets.set_budget(app, name, given, tree))
        budgets.enforce(app)  # one already reached parks now if NAME is idle


@cli.group(name="mcp", invoke_without_command=True)
@click.option(
    "--allow-write",
    is_flag=True,
    help="Outside an agent started by roost: allow creating, messaging and stopping "
    "agents (read-only otherwise).",
)
@click.pass_context
def mcp_cmd(ctx: click.Context, allow_write: bool) -> None:
    """Serve roost's orchestration tools over MCP on stdio.

    Run by the agents roost starts (their caller identity is ROOST_AGENT_ID); an agent acts on
    itself and the agents it created. See docs/ORCHESTRATION.md.

    \b
    Examples:
      roost mcp                 # read-only, for your own MCP client
      roost mcp --allow-write
    """
    if ctx.invoked_subcommand is not None:
        return
    from roost.mcp import server
    from roost.ops import service
    from roost.ops.root import open_app

    app = open_app()
    try:
        service.before_serving(app, _say)  # it creates and changes agents: the runtime first
    finally:
        app.close()
    server.serve(dict(os.environ), allow_write)


mcp_cmd.add_command(mcp_serve_cmd)  # `roost mcp serve`: the shared endpoint (cli/mcpserve.py)


# `_supervise PANE` and `_notify`, run by hooks, are answered before Click (cli/hooks.py).


@cli.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the shell completion script for SHELL (commands, options, agent and tab names).

    \b
    Example (bash; zsh alike, in ~/.zshrc):
      eval "$(roost completion bash)"      # in ~/.bashrc
      roost completion fish > ~/.config/fish/completions/roost.fish
    """
    from click.shell_completion import get_completion_class

    script = get_completion_class(shell)
    assert script is not None  # bash, zsh and fish are Click's own
    click.echo(script(cli, {}, "roost", "_ROOST_COMPLETE").source())


from roost.cli.service import service  # noqa: E402 - the service's commands (a module of its own)

cli.add_command(service)

from roost.alerts.commands import WatchAlerts, notify_group  # noqa: E402 (issue 21: notifications to the person)

cli.add_command(notify_group)

from roost.cli.web import web as web_cmd  # noqa: E402 (roost web: its own module)

cli.add_command(web_cmd)

from roost.hosts.commands import host_group, ls_all, watch_all  # noqa: E402 (issue 24: remote hosts)

cli.add_command(host_group)

from roost.cli.reply import read_command, reply_command  # noqa: E402 - issue 24 part 4 (branch hostchild)

cli.add_command(reply_command)
cli.add_command(read_command)

from roost.review.commands import comment_cmd, diff_cmd, review_group  # noqa: E402 - issue 38

cli.add_command(diff_cmd)
cli.add_command(comment_cmd)
cli.add_command(review_group)


def main(argv: list[str] | None = None) -> None:
    try:
        cli.main(args=argv, prog_name="roost", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("roost: aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        ctx: click.Context | None = getattr(exc, "ctx", None)  # usage errors carry theirs
        command = ctx.command.name if ctx is not None else None
        hint = (
            f" (see roost {command} --help)"
            if command and command != "cli"
            else " (see roost --help)"
        )
        click.echo(f"roost: {exc.format_message()}{hint}", err=True)
        sys.exit(exc.exit_code)
    except RoostError as exc:
        click.echo(f"roost: {exc}", err=True)
        sys.exit(exc.code)
    except KeyboardInterrupt:
        sys.exit(130)
