"""The `roost` command's entry point: `roost ls` takes a fast path that skips Click."""

import sys


def main() -> None:
    args = sys.argv[1:]
    if args in (["ls"], ["ls", "--json"]):
        from roost.cli import fast as lsfast

        code = lsfast.fast(as_json=len(args) == 2)
        if code is not None:
            sys.exit(code)
    from roost.cli.main import main as cli_main

    cli_main()
