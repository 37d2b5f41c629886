"""The `roost` command: thin Click wrappers over homes.py; every error is one line on stderr."""

from __future__ import annotations

import json
import os
import sys

import click

from roost.errors import RoostError

PROVIDERS = ("claude", "codex", "gemini", "aider", "command")


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="roost", prog_name="roost")
def cli() -> None:
    """roost gives AI coding agents a durable home in tmux.

    Each agent lives in a tmux session of its own on roost's private server and keeps its
    conversation across crashes, kills and reboots.

    \b
    Example:
      roost spawn fix-login --cwd ~/src/app --prompt "fix the login test"
      roost ls
      roost attach fix-login
    """


def _app(*names: str):  # noqa: ANN202 - imported lazily to keep `roost --help` fast
    """Check the names given first, so bad input never creates or opens anything."""
    from roost.app import open_app
    from roost.names import check_name

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
@click.option("--dangerous", is_flag=True, help="Skip the agent's permission prompts.")
@click.option("--prompt", default=None, help="The first message for the agent.")
@click.argument("argv", nargs=-1, type=click.UNPROCESSED)
def spawn(name: str, provider: str | None, cwd: str | None, home: str | None, dangerous: bool,
          prompt: str | None, argv: tuple[str, ...]) -> None:
    """Start agent NAME in its own home (or wake it, if it exists and is stopped).

    Everything after `--` is passed to the agent CLI; with --provider command it is the program.

    \b
    Examples:
      roost spawn api-fix --cwd ~/src/api --prompt "make the tests pass"
      roost spawn reviewer --provider codex --home team
      roost spawn logs --provider command -- tail -f /var/log/syslog
    """
    from roost import homes

    if home is not None:
        from roost.names import check_name

        check_name(home, "home name")
    app = _app(name)
    result = homes.spawn(app, name, provider=provider, cwd=cwd, home=home, dangerous=dangerous,
                         prompt=prompt, args=argv)
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
    from roost import homes, lsfast, present

    app = _app()
    homes.learn_session_ids(app, app.store.agents())
    rows = lsfast.agent_panes(app.tmux.list_pane_rows())
    click.echo(present.render(lsfast.collect(app.store.conn, rows), as_json), nl=False)


@cli.command()
@click.argument("name")
def attach(name: str) -> None:
    """Attach to agent NAME in its home, waking it first if it is stopped.

    Detach again with the tmux prefix then d (C-b d).

    \b
    Example:
      roost attach api-fix
    """
    from roost import homes

    app = _app(name)
    argv = homes.attach_plan(app, name)
    env = dict(app.tmux.env)  # without $TMUX: attaching from inside another tmux is intended
    app.close()
    sys.stdout.flush()
    os.execvpe(argv[0], argv, env)


@cli.command()
@click.argument("name")
def kill(name: str) -> None:
    """Stop agent NAME's whole process tree; its home and record stay.

    \b
    Example:
      roost kill api-fix && roost wake api-fix
    """
    from roost import homes

    stopped = homes.kill(_app(name), name)
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
    from roost import homes

    result = homes.wake(_app(name), name, fresh=fresh)
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
    from roost import homes

    homes.rm(_app(name), name)
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
    from roost import homes

    click.echo(homes.capture(_app(name), name, lines), nl=False)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print findings as JSON.")
def doctor(as_json: bool) -> None:
    """Check tmux, the socket, the store, and drift between store and tmux.

    Exits 1 when it finds a problem; each finding says what to do about it.

    \b
    Example:
      roost doctor
    """
    from roost import doctor as doc

    report = doc.run()
    click.echo(json.dumps(report.as_json(), indent=2) if as_json else report.text(), nl=False)
    if not report.ok:
        sys.exit(1)


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
