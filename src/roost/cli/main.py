"""The `roost` command: thin Click wrappers over lifecycle.py; every error is one line on stderr."""

from __future__ import annotations

import json
import os
import sys

import click

from roost.core.errors import RoostError

PROVIDERS = ("claude", "codex", "gemini", "aider", "command")


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
             invoke_without_command=True)
@click.version_option(package_name="roost", prog_name="roost")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """roost gives AI coding agents a durable home in tmux. With no command: the TUI.

    Each agent lives in a tmux session of its own on roost's private server and keeps its
    conversation across crashes, kills and reboots.

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
@click.argument("tab_name", metavar="TAB")
def open_cmd(tab_name: str) -> None:
    """Open TAB in plain tmux: one pane per tile, each attached to that agent's home.

    \b
    Example:
      roost open main
    """
    from roost.ops import tabview

    app = _app(tab_name)
    argv = tabview.open_tab(app, tab_name)
    env = dict(app.tmux.env)
    app.close()
    os.execvpe(argv[0], argv, env)


def _app(*names: str):  # noqa: ANN202 - imported lazily to keep `roost --help` fast
    """Check the names given first, so bad input never creates or opens anything."""
    from roost.ops.context import open_app
    from roost.core.names import check_name

    for name in names:
        check_name(name)
    return open_app()


@cli.command(context_settings={"ignore_unknown_options": True})
@click.argument("name")
@click.option("--provider", type=click.Choice(PROVIDERS), default=None,
              help="Which agent CLI to run [default: claude].")
@click.option("--cwd", type=str, default=None, help="Working directory [default: the current one].")
@click.option("--home", "home", default=None, metavar="TEAM",
              help="Put the agent's window in the shared home session TEAM.")
@click.option("--dangerous/--no-dangerous", default=None,
              help="Skip the agent's permission prompts [default: the workspace's mode].")
@click.option("--prompt", default=None, help="The first message for the agent.")
@click.option("--tab", default=None, help="The tab whose tile it becomes [default: main].")
@click.option("--split", type=click.Choice(["v", "h"]), default="v", show_default=True,
              help="Split the tab's focused tile: v side by side, h one above the other.")
@click.option("--detached", is_flag=True,
              help="Park it instead of tiling it: running now, hibernated at the next restore.")
@click.option("--parent", default=None, metavar="P", help="Link it under agent P.")
@click.option("--orchestrated-by", "orchestrated_by", default=None, metavar="P",
              help="Agent P created it (orchestration parent; the root is inherited).")
@click.option("--restart", type=click.Choice(["never", "on-failure"]), default="never",
              show_default=True, help="Restart it when it exits with a failure (with backoff).")
@click.argument("argv", nargs=-1, type=click.UNPROCESSED)
def spawn(name: str, provider: str | None, cwd: str | None, home: str | None,
          dangerous: bool | None,
          prompt: str | None, tab: str | None, split: str, detached: bool, parent: str | None,
          orchestrated_by: str | None, restart: str, argv: tuple[str, ...]) -> None:
    """Start agent NAME in its own home (or wake it, if it exists and is stopped).

    Everything after `--` is passed to the agent CLI; with --provider command it is the program.

    \b
    Examples:
      roost spawn api-fix --cwd ~/src/api --prompt "make the tests pass"
      roost spawn reviewer --provider codex --home team --tab review --split h
      roost spawn helper --detached --orchestrated-by api-fix
      roost spawn logs --provider command -- tail -f /var/log/syslog
    """
    from roost.ops import lifecycle

    if home is not None:
        from roost.core.names import check_name

        check_name(home, "home name")
    app = _app(name)
    place = lifecycle.Place(tab=tab, split=split, detached=detached, parent=parent,
                        orchestrated_by=orchestrated_by)
    result = lifecycle.spawn(app, name, provider=provider, cwd=cwd, home=home, dangerous=dangerous,
                         prompt=prompt, args=argv, place=place, restart=restart)
    a = result.agent
    verb = "spawned" if a.launches == 1 else "woke"
    click.echo(f"{verb} {a.name} ({a.provider}, pid {result.pid}) in home {a.home}; "
               f"attach: roost attach {a.name}")


@cli.command(name="ls")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array for scripts.")
def ls_cmd(as_json: bool) -> None:
    """List every agent and whether it runs.

    \b
    Examples:
      roost ls
      roost ls --json | jq '.[] | select(.state == "stopped") | .name'
    """
    from roost.ops import observe
    from roost.core import present

    click.echo(present.render(observe.refresh(_app()), as_json), nl=False)


@cli.command()
@click.argument("name")
def attach(name: str) -> None:
    """Attach to agent NAME in its home, waking it first if it is stopped.

    Detach again with the tmux prefix then d (C-b d).

    \b
    Example:
      roost attach api-fix
    """
    from roost.ops import lifecycle

    app = _app(name)
    argv = lifecycle.attach_plan(app, name)
    env = dict(app.tmux.env)  # without $TMUX: attaching from inside another tmux is intended
    app.close()
    sys.stdout.flush()
    os.execvpe(argv[0], argv, env)


@cli.command()
@click.argument("name")
@click.option("--tree", is_flag=True, help="Also kill every descendant (linked or orchestrated).")
def kill(name: str, tree: bool) -> None:
    """Stop agent NAME's whole process tree; its home and record stay.

    \b
    Examples:
      roost kill api-fix && roost wake api-fix
      roost kill lead --tree
    """
    from roost.ops import lifecycle
    from roost.ops import workspace as wsops

    app = _app(name)
    if tree:
        click.echo(f"killed {', '.join(wsops.kill_tree(app, name))}")
        return
    stopped = lifecycle.kill(app, name)
    click.echo(f"stopped {name} ({len(stopped)} processes); wake: roost wake {name}"
               if stopped else f"{name} was not running")


@cli.command()
@click.argument("name")
@click.option("--fresh", is_flag=True,
              help="Start a new conversation instead of resuming the recorded one.")
def wake(name: str, fresh: bool) -> None:
    """Start agent NAME again in its home, resuming its conversation in its cwd.

    \b
    Example:
      roost wake api-fix
    """
    from roost.ops import lifecycle

    result = lifecycle.wake(_app(name), name, fresh=fresh)
    if result.started:
        click.echo(f"woke {name} (pid {result.pid}) in home {result.agent.home}")
    else:
        click.echo(f"{name} is already running (pid {result.pid})")


@cli.command()
@click.argument("name")
def rm(name: str) -> None:
    """Forget agent NAME: stop it, remove its window or home, and its record.

    \b
    Example:
      roost rm api-fix
    """
    from roost.ops import lifecycle

    lifecycle.rm(_app(name), name)
    click.echo(f"removed {name}")


@cli.command()
@click.argument("name")
@click.option("--lines", "-n", type=int, default=50, show_default=True,
              help="How many of the last lines to print (at most 10000).")
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
    click.echo(f"tab {name} created")


@tab.command(name="rename")
@click.argument("old")
@click.argument("new")
def tab_rename(old: str, new: str) -> None:
    """Rename tab OLD to NEW.

    \b
    Example:
      roost tab rename review code-review
    """
    from roost.ops import workspace as wsops

    wsops.tab_rename(_app(), old, new)
    click.echo(f"tab {old} is now {new}")


@tab.command(name="close")
@click.argument("name")
def tab_close(name: str) -> None:
    """Close tab NAME; its tiles are parked and keep running.

    \b
    Example:
      roost tab close review
    """
    from roost.ops import workspace as wsops

    parked = wsops.tab_close(_app(), name)
    click.echo(f"tab {name} closed" + (f"; parked {', '.join(parked)}" if parked else ""))


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
    if as_json:
        click.echo(json.dumps([{"name": r.name, "tiles": r.tiles, "focus": r.focus}
                               for r in rows]))
        return
    for r in rows:
        click.echo(f"{r.name}: {' | '.join(r.tiles) or '(empty)'}")


@cli.command()
@click.argument("name")
@click.option("--tree", is_flag=True, help="Also park every descendant.")
def park(name: str, tree: bool) -> None:
    """Take agent NAME off screen: it keeps running, and hibernates at the next restore.

    \b
    Example:
      roost park api-fix
    """
    from roost.ops import workspace as wsops

    click.echo(f"parked {', '.join(wsops.park(_app(name), name, tree))}")


@cli.command()
@click.argument("name")
@click.option("--tab", "tab_name", required=True, help="The tab to put it in (made if missing).")
@click.option("--split", type=click.Choice(["v", "h"]), default="v", show_default=True,
              help="Split the tab's focused tile: v side by side, h one above the other.")
def place(name: str, tab_name: str, split: str) -> None:
    """Put a parked or buried agent NAME on screen as a tile of TAB, waking it.

    \b
    Example:
      roost place api-fix --tab main --split h
    """
    from roost.ops import workspace as wsops

    result = wsops.place(_app(name), name, tab_name, split)
    click.echo(f"{name} is a tile of {tab_name} (pid {result.pid})")


@cli.command()
@click.argument("name")
def bury(name: str) -> None:
    """Close agent NAME's tile and keep it for revival; its process stops.

    \b
    Example:
      roost bury old-experiment && roost unbury old-experiment
    """
    from roost.ops import workspace as wsops

    wsops.bury(_app(name), name)
    click.echo(f"buried {name}; revive: roost unbury {name}")


@cli.command()
@click.argument("name")
def unbury(name: str) -> None:
    """Revive buried agent NAME where it was (or parked, if its tab is gone).

    \b
    Example:
      roost unbury old-experiment
    """
    from roost.ops import workspace as wsops

    tab_name = wsops.unbury(_app(name), name)
    click.echo(f"{name} is back in tab {tab_name}" if tab_name else
               f"{name} is parked (its tab is gone); roost place {name} --tab TAB")


@cli.command()
@click.argument("name")
def pin(name: str) -> None:
    """Pin agent NAME to the top of lists (it does not wake it).

    \b
    Example:
      roost pin api-fix
    """
    from roost.ops import workspace as wsops

    click.echo(f"pinned {name}" if wsops.pin(_app(name), name) else f"{name} was pinned already")


@cli.command()
@click.argument("name")
def unpin(name: str) -> None:
    """Unpin agent NAME.

    \b
    Example:
      roost unpin api-fix
    """
    from roost.ops import workspace as wsops

    click.echo(f"unpinned {name}" if wsops.unpin(_app(name), name) else f"{name} was not pinned")


@cli.command()
@click.argument("child")
@click.option("--parent", default=None, metavar="P", help="The parent agent.")
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
    click.echo(f"{child} unlinked" if clear else f"{child} is linked under {parent}")


@cli.command()
@click.argument("name")
def hibernate(name: str) -> None:
    """Stop agent NAME's process now and release its home; keep everything else.

    \b
    Example:
      roost hibernate api-fix && roost wake api-fix
    """
    from roost.ops import lifecycle

    lifecycle.hibernate(_app(name), name)
    click.echo(f"{name} hibernates; roost wake {name} brings it back")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--concurrency", type=int, default=None,
              help="At most this many agents start at once [default: 3, or restore.concurrency].")
@click.option("--stagger", type=float, default=None,
              help="Seconds between two starts [default: 0.25, or restore.stagger].")
def restore(as_json: bool, concurrency: int | None, stagger: float | None) -> None:
    """Bring the workspace back: start the tiles' agents, hibernate the rest.

    Parked and buried agents get no process and no home; they wake when used.

    \b
    Example:
      roost restore --concurrency 2
    """
    from roost.ops.restore import restore as run

    report = run(_app(), concurrency, stagger)
    click.echo(json.dumps(report.as_json()) if as_json else report.text(), nl=as_json)
    if report.failed:
        sys.exit(1)


@cli.command()
@click.option("--dangerous/--no-dangerous", default=None,
              help="Switch the workspace's mode before restarting.")
def reload(dangerous: bool | None) -> None:
    """Restart the live agents (tiles that run), in a new mode if asked; never starts others.

    \b
    Example:
      roost reload --dangerous
    """
    from roost.ops import workspace as wsops

    names = wsops.reload(_app(), dangerous)
    click.echo(f"restarted {', '.join(names)}" if names else "no live agent runs: nothing restarted")


@cli.command()
@click.option("--older-than", "older_than", default=None, metavar="DURATION",
              help="Also remove parked or buried agents idle this long (30m, 12h, 7d, 2w).")
@click.option("--dry-run", is_flag=True, help="Only list what would be removed.")
def gc(older_than: str | None, dry_run: bool) -> None:
    """Remove stale records (and idle parked or buried agents); never a pinned or live one.

    \b
    Example:
      roost gc --older-than 14d --dry-run
    """
    from roost.ops import workspace as wsops

    age = wsops.parse_duration(older_than) if older_than else None
    found = wsops.gc(_app(), age, dry_run)
    verb = "would remove" if dry_run else "removed"
    for agent, why in found:
        click.echo(f"{verb} {agent.name}: {why}")
    if not found:
        click.echo("nothing to remove")


@cli.command(name="export")
def export_cmd() -> None:
    """Print the whole workspace as versioned JSON.

    \b
    Example:
      roost export > workspace.json
    """
    from roost.ops import transfer

    click.echo(json.dumps(transfer.export(_app()), indent=2, sort_keys=True))


@cli.command(name="import")
@click.argument("file", type=click.File("r"))
def import_cmd(file) -> None:  # noqa: ANN001 - click.File
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
    count = transfer.import_(_app(), data)
    click.echo(f"imported {count} agents; roost restore starts the tiles")


# ---- status, send, supervision ---------------------------------------------------------------
@cli.command()
@click.argument("name")
@click.argument("text", required=False)
@click.option("--wait", is_flag=True, help="Wait until the agent is idle again; print its reply.")
@click.option("--timeout", type=float, default=600.0, show_default=True,
              help="Seconds --wait waits for the reply.")
def send(name: str, text: str | None, wait: bool, timeout: float) -> None:
    """Send TEXT (or standard input) to agent NAME as its next message, and confirm it arrived.

    Wakes a stopped or hibernated agent first. Exits 1 when the text was not delivered.

    \b
    Examples:
      roost send api-fix "run the tests again"
      git diff | roost send reviewer --wait
    """
    from roost.ops import send as sending

    if text is None:
        text = sys.stdin.read()
    result = sending.send(_app(name), name, text, wait=wait, reply_timeout=timeout)
    if not result.delivered:
        raise RoostError(f"not delivered to {name}: {result.how}")
    if result.timed_out:
        raise RoostError(f"timed out after {timeout:g} s waiting for {name}'s reply (the "
                         f"message was delivered; roost capture {name} shows where it is)")
    if result.failure is not None:
        raise RoostError(f"{name}'s turn failed: {result.failure} (the message was delivered)")
    if wait and result.reply is not None:
        click.echo(result.reply)
    elif not wait:
        click.echo(f"delivered to {name} (confirmed by {result.how})")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object per change.")
@click.option("--interval", type=float, default=1.0, show_default=True,
              help="Seconds between two looks.")
def watch(as_json: bool, interval: float) -> None:
    """Print every agent's status changes as they happen, until interrupted (Ctrl-C).

    \b
    Example:
      roost watch --json | jq -c 'select(.status == "waiting")'
    """
    import time

    from roost.ops import observe

    app = _app()
    seen: dict[str, str] = {}
    while True:
        for o in observe.refresh(app):
            key = f"{o.status}:{o.exit_code}"
            if seen.get(o.agent.id) != key:
                if as_json:
                    click.echo(json.dumps({"name": o.agent.name, "status": o.status,
                                           "previous": seen.get(o.agent.id, "").split(":")[0]
                                           or None, "source": o.status_source,
                                           "exit_code": o.exit_code,
                                           "at": o.status_since,
                                           "reason": o.status_reason}))
                else:
                    why = f": {o.status_reason}" if o.status_reason else ""
                    click.echo(f"{o.status_since or ''}  {o.agent.name}: "
                               f"{o.status} ({o.status_source}){why}")
                seen[o.agent.id] = key
        sys.stdout.flush()
        time.sleep(interval)


@cli.command()
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
@click.option("--limit", type=int, default=200, show_default=True, help="The newest this many.")
def events(name: str | None, as_json: bool, limit: int) -> None:
    """Show the event log of agent NAME (or of all agents).

    \b
    Example:
      roost events api-fix --json
    """
    app = _app(*([name] if name else []))
    agent_id = app.store.require(name).id if name else None
    found = app.store.events(agent_id, limit)
    if as_json:
        click.echo(json.dumps(found))
        return
    for e in found:
        extra = " ".join(f"{k}={v}" for k, v in e.items() if k not in ("id", "agent", "at", "kind"))
        click.echo(f"{e['at']}  {e['agent']}  {e['kind']}  {extra}".rstrip())


@cli.command()
@click.argument("name")
@click.argument("policy", type=click.Choice(["never", "on-failure"]))
def policy(name: str, policy: str) -> None:
    """Set agent NAME's restart policy: never, or on-failure (1 s, 2 s, 4 s backoff; more than
    3 failed starts within 60 s and it stays failed until you wake it).

    \b
    Example:
      roost policy api-fix on-failure
    """
    app = _app(name)
    app.store.update(app.store.require(name).id, restart_policy=policy)
    click.echo(f"{name}: restart {policy}")


@cli.command(name="_supervise", hidden=True)
@click.argument("pane_id")
def supervise_cmd(pane_id: str) -> None:
    """Run by tmux's pane-died hook."""
    from roost.ops import supervise

    supervise.on_pane_died(_app(), pane_id)


def main(argv: list[str] | None = None) -> None:
    try:
        cli.main(args=argv, prog_name="roost", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("roost: aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        hint = f" (see roost {exc.ctx.command.name} --help)" if getattr(exc, "ctx", None) and \
            exc.ctx.command and exc.ctx.command.name != "cli" else " (see roost --help)"
        click.echo(f"roost: {exc.format_message()}{hint}", err=True)
        sys.exit(exc.exit_code)
    except RoostError as exc:
        click.echo(f"roost: {exc}", err=True)
        sys.exit(exc.code)
    except KeyboardInterrupt:
        sys.exit(130)
