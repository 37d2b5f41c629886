"""The `roost` command's entry point: `roost ls` takes a fast path that skips Click."""

import sys


def main() -> None:
    args = sys.argv[1:]
    if any(a.startswith("--host") or ":" in a for a in args):
        from roost.cli import remote  # a remote host's roost runs it (docs/HOSTS.md)

        code = remote.dispatch(args)
        if code is not None:
            sys.exit(code)
    if args[:1] == ["ls"] and sorted(args[1:]) in (["--all"], ["--all", "--json"]):
        from roost.cli import fastall

        code = fastall.fast_all(as_json="--json" in args)
        if code is not None:
            sys.exit(code)
    if args in (["ls"], ["ls", "--json"]):
        from roost.cli import fast as lsfast

        code = lsfast.fast(as_json=len(args) == 2)
        if code is not None:
            sys.exit(code)
    from roost.cli.main import main as cli_main

    cli_main()
