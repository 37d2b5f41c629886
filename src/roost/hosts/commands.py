"""Remote hosts over OpenSSH (docs/HOSTS.md): `roost host add|ls|rm|check` and one view of the
fleet (`ls --all`, `watch --all`). Any command on a host is cli/remote.py's."""

from __future__ import annotations

import json
import sys
import threading
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from roost.hosts.operations import CheckReport
    from roost.ops.context import App


def _app(reading: bool = False) -> App:
    from roost.ops.root import open_app

    return open_app(reading=reading)


@click.group(name="host")
def host_group() -> None:
    """Remote hosts: other machines' roosts, driven over OpenSSH (docs/HOSTS.md).

    Each host keeps its own roost (its store, its tmux server); this one stores only how to
    reach it. Then `roost --host NAME COMMAND …` or `NAME:AGENT` runs any command there,
    and `roost ls --all` lists every host's agents.

    \b
    Example:
      roost host add build me@build.example --roost /home/me/.local/bin/roost
      roost host check build
      roost attach build:api-fix
    """


@host_group.command(name="add")
@click.argument("name")
@click.argument("dest")
@click.option(
    "--roost",
    "roost_path",
    default="roost",
    show_default=True,
    help="The remote roost's absolute path (a non-login shell's PATH lacks ~/.local/bin).",
)
@click.option(
    "--env",
    "env",
    multiple=True,
    metavar="NAME=VALUE",
    help="Set for the remote roost (e.g. ROOST_HOME=/srv/roost); repeatable.",
)
def host_add(name: str, dest: str, roost_path: str, env: tuple[str, ...]) -> None:
    """Remember host NAME, reached as ssh reaches DEST (user@host, an alias of ~/.ssh/config
    with its port and jump hosts). Nothing is copied there; `roost host check NAME` tries it."""
    from roost.hosts import operations as hosts
    from roost.hosts.rules import parse_env

    pairs = parse_env(env)
    app = _app()
    try:
        hosts.add(app, name, dest, roost_path, pairs)
    finally:
        app.close()
    click.echo(f"added host {name} ({dest}); check it: roost host check {name}")


@host_group.command(name="ls")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
def host_ls(as_json: bool) -> None:
    """List the hosts (nothing is asked of them: see host check)."""
    from roost.hosts import operations as hosts

    app = _app(reading=True)
    try:
        found = hosts.every(hosts.reach_of(app))
    finally:
        app.close()
    if as_json:
        rows = [{"name": h.name, "dest": h.dest, "roost": h.roost, "env": h.env} for h in found]
        click.echo(json.dumps(rows))
        return
    if not found:
        click.echo("no hosts yet: roost host add NAME DEST")
    for h in found:
        click.echo(f"{h.name}  {h.dest}  {h.roost}")


@host_group.command(name="rm")
@click.argument("name")
def host_rm(name: str) -> None:
    """Forget host NAME (its agents keep running there) and stop its ssh master."""
    from roost.hosts import operations as hosts

    app = _app()
    try:
        hosts.remove(app, name)
    finally:
        app.close()
    click.echo(f"removed host {name}")


@host_group.command(name="check")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object.")
def host_check(name: str, as_json: bool) -> None:
    """Is NAME reachable, is its roost compatible, what does its doctor say. Exits 1 when not."""
    from roost.hosts import operations as hosts

    app = _app(reading=True)
    try:
        report = hosts.check(app, name)
    finally:
        app.close()
    doctor = report.get("doctor")
    good = report.get("compatible") and doctor is not None and doctor["ok"]
    if as_json:
        click.echo(json.dumps(report))
    else:
        click.echo(_check_text(report))
    if not good:
        sys.exit(1)


def _check_text(report: CheckReport) -> str:
    name = report["host"]
    if not report["reachable"]:
        return f"{name}: unreachable: {report['problem']}"
    if not report.get("compatible"):
        return f"{name}: reachable; {report['problem']}"
    doctor = report["doctor"]
    lines = [f"{name}: reachable, roost {report['version']}"]
    lines += [f"  BAD  {p}" for p in doctor["problems"]]
    lines += [f"  WARN {w}" for w in doctor["warnings"]]
    lines.append("  doctor: all good" if doctor["ok"] else "  doctor: problems found")
    return "\n".join(lines)


# ---- one view of the fleet --------------------------------------------------------------------
def ls_all(as_json: bool) -> None:
    """`roost ls --all` when the entry's fast path handed it over (a config or store to
    explain: the App says what is wrong, as for every command) or Click runs it: the same
    listing (cli/fastall.py)."""
    from roost.cli import fastall
    from roost.hosts import operations as hosts

    app = _app(reading=True)
    try:
        reach = hosts.reach_of(app)
        found = hosts.every(reach)
    finally:
        app.close()
    code = fastall.ls_all(reach, found, as_json)
    if code:
        sys.exit(code)


def watch_all(notify: bool) -> None:
    """`roost watch --all --json`: every host's `roost watch --json` and ours, one JSON line
    per event with its `host`; each host's stream resumed by its last `seq` after a dropped
    connection (nothing missed, nothing twice). Until interrupted.

    `notify`: every `alert` event shown on this terminal, a host's titled `(on HOST)`. Shown
    only: each roost's service delivers its own alerts, a host's through the host's [notify]
    channels (docs/HOSTS.md)."""
    from roost.alerts.commands import WatchAlerts
    from roost.hosts import operations as hosts
    from roost.system import ssh

    app = _app(reading=True)
    reach = hosts.reach_of(app)
    found = hosts.every(reach)
    alerting = WatchAlerts(app, sys.stderr) if notify else None
    lock = threading.Lock()
    stop = threading.Event()
    mine = [sys.executable, "-P", "-m", "roost", "watch", "--json"]
    notifying = ["--notify"] if notify else []

    def follow(host: hosts.Host | None) -> None:
        seq: int | None = None
        pause = 1.0
        while not stop.is_set():
            args = ["watch", "--json", *(["--since", str(seq)] if seq is not None else [])]
            try:
                if host is None:  # this machine's own watch (its --notify shows ours here)
                    lines = ssh.lines([*mine, *args[2:], *notifying], own_stderr=True)
                else:
                    link = hosts.link(reach, host)
                    lines = link.lines(hosts.line(host, args))
                for text in lines:
                    event = _event(text)
                    if event is None:
                        continue
                    if isinstance(read := event.get("seq"), int):
                        seq = read
                    pause = 1.0
                    with lock:
                        click.echo(json.dumps({"host": host.name if host else None, **event}))
                        # a host's alert, a line of its stream as printed
                        if alerting and host is not None and event.get("kind") == "alert":
                            title = f"{event.get('title')} (on {host.name})"
                            alerting.show(title, str(event.get("body")))
                why = "its stream ended"
            except ssh.Unreachable as exc:
                why = str(exc)
            if stop.is_set():
                return
            with lock:
                where = host.name if host else "local"
                click.echo(f"roost: watch of {where}: {why}; again in {pause:g} s", err=True)
            stop.wait(pause)
            pause = min(pause * 2, 30.0)

    threads = [threading.Thread(target=follow, args=(h,), daemon=True) for h in [None, *found]]
    for t in threads:
        t.start()
    try:
        while any(t.is_alive() for t in threads):
            threads[0].join(0.5)
    except KeyboardInterrupt:
        stop.set()
    finally:
        ssh.stop_streams()
        app.close()


def _event(text: str) -> dict[str, object] | None:
    try:
        event = json.loads(text)
    except ValueError:
        return None
    return event if isinstance(event, dict) else None
