"""Any command on a host (docs/HOSTS.md): `roost --host NAME …`, or `NAME:AGENT` wherever an
agent's name is taken. The entry point hands such a line here before Click runs; the host's
roost runs it and its output and exit code come back. Import-light on purpose: a relay costs
a config read, one SELECT and ssh (Click is loaded only to find a `NAME:AGENT` argument)."""

from __future__ import annotations

import sys

from roost.core.errors import RoostError

# The interactive ones: a terminal on the remote (`ssh -tt`), a person answering.
INTERACTIVE = ("attach", "tui", "open")


def remote_args(args: list[str]) -> tuple[str, list[str]] | None:
    """(host, the remote roost's arguments) when `args` name a host: `--host NAME …`,
    `--host=NAME …`, or a command whose agent argument is `HOST:AGENT`; else None."""
    if args[:1] == ["--host"]:
        if len(args) < 2:
            raise RoostError("--host needs a host's name (roost host ls)", code=2)
        return args[1], args[2:]
    if args and args[0].startswith("--host="):
        return args[0].removeprefix("--host="), args[1:]
    return _targeted(args)


def _targeted(args: list[str]) -> tuple[str, list[str]] | None:
    """`HOST:AGENT` as the command's agent argument: Click parses the line (without running
    it) to find which word that is, so a message with a colon is never taken for one."""
    import click

    from roost.cli.main import cli
    from roost.hosts.rules import split_target

    if not args or args[0].startswith("-"):
        return None
    command = cli.get_command(click.Context(cli), args[0])
    first = next(
        (p for p in (command.params if command else []) if isinstance(p, click.Argument)), None
    )
    if command is None or first is None or first.name not in ("name", "child"):
        return None
    try:
        ctx = command.make_context(args[0], list(args[1:]), resilient_parsing=True)
    except click.ClickException:
        return None
    word = ctx.params.get(first.name or "")
    target = split_target(word) if isinstance(word, str) else None
    if target is None or not isinstance(word, str):
        return None
    rest = list(args[1:])
    rest[rest.index(word)] = target[1]
    return target[0], [args[0], *rest]


def dispatch(args: list[str]) -> int | None:
    """Run `args` on the host they name, relaying its output and exit code; None when they
    name no host (the local roost runs them)."""
    try:
        found = remote_args(args)
        if found is None:
            return None
        return _on_host(*found)
    except RoostError as exc:
        sys.stderr.write(f"roost: {exc}\n")
        return exc.code
    except KeyboardInterrupt:
        return 130


def _on_host(name: str, args: list[str]) -> int:
    """The light path: a config read and one SELECT here, then the host's roost."""
    from roost.hosts import operations as hosts
    from roost.system import terminal

    terminal.guard()  # what the host writes reaches this terminal as text
    reach = hosts.reach()
    host = hosts.get(reach, name)
    if not args or args[0] in INTERACTIVE:
        if args[:1] == ["attach"] and not sys.stdin.isatty():
            from roost.core.present import needs_terminal

            raise RoostError(needs_terminal(f"{name}:{args[1]}" if args[1:] else name), code=2)
        return _interactive(host.name, hosts.attach_argv(reach, host, args))
    found = hosts.run(reach, host, args, stream=True)
    sys.stderr.write(found.err)
    return found.code or 0


def _interactive(host: str, argv: list[str]) -> int:
    """`ssh -tt` on this terminal, as a child rather than in roost's place: ssh's own failure
    (255, a host it cannot reach or that dropped the line) becomes roost's one line and code,
    like every other command's (ssh's stderr is kept until then; its prompts use the tty)."""
    from roost.hosts import rules as sshargs
    from roost.system import programs
    from roost.system.ssh import SSH_FAILED, Unreachable

    code, said = programs.on_terminal_keeping_stderr(argv)
    if code == SSH_FAILED:
        raise Unreachable(host, sshargs.ssh_reason(said))
    sys.stderr.write(said)
    return code
