"""The `roost` command's entry point: `roost ls` takes a fast path that skips Click."""

import sys


def main() -> None:
    args = sys.argv[1:]
    try:
        code = _fast(args)
    except KeyboardInterrupt:  # as the full CLI: Ctrl-C is exit 130, not a traceback
        sys.exit(130)
    if code is not None:
        sys.exit(code)
    from roost.system import terminal

    terminal.guard()  # every other program's bytes reach a terminal as text
    from roost.cli.main import main as cli_main

    cli_main()


def _fast(args: list[str]) -> int | None:
    """The exit code of a command answered without Click; None: the full CLI answers."""
    if any(a.startswith("--host") or ":" in a for a in args):
        from roost.cli import remote  # a remote host's roost runs it (docs/HOSTS.md)

        code = remote.dispatch(args)
        if code is not None:
            return code
    if args[:1] == ["ls"] and sorted(args[1:]) in (["--all"], ["--all", "--json"]):
        from roost.cli import fastall

        return fastall.fast_all(as_json="--json" in args)
    if args == ["_hostls"]:  # a local roost's `ls --all` asking this machine (hosts/operations.py)
        from roost.cli import fastall

        return fastall.host_answer()
    if args[:1] in (["_notify"], ["_supervise"]):  # run by hooks, often: no Click
        from roost.cli import hooks

        return hooks.answer(args)
    if args in (["ls"], ["ls", "--json"]):
        from roost.cli import fast as lsfast

        return lsfast.fast(as_json=len(args) == 2)
    return None
