"""The hidden commands hooks run, answered without Click: `roost _supervise PANE` (tmux's
pane-died hook, at every agent's exit) and `roost _notify` (a Claude Code hook, at each turn's
end in a tree of agents). They run often and nobody types them, so their start is kept to what
they use: not the CLI's parser and its commands' imports (docs/BENCHMARKS.md)."""

from __future__ import annotations

import sys
from collections.abc import Callable

from roost.core.errors import RoostError


def answer(args: list[str]) -> int | None:
    """The exit code of a hook's command; None: not one (the full CLI answers, and refuses)."""
    if args == ["_notify"]:
        return _run(_notify)
    if len(args) == 2 and args[0] == "_supervise" and not args[1].startswith("-"):
        pane_id = args[1]
        return _run(lambda: _supervise(pane_id))
    return None


def _notify() -> None:
    from roost.ops import notify
    from roost.ops.root import open_app

    notify.deliver(open_app())


def _supervise(pane_id: str) -> None:
    from roost.ops import notify, supervise
    from roost.ops.root import open_app

    app = open_app()
    supervise.on_pane_died(app, pane_id)
    notify.deliver(app)  # an exited child's parent hears of it


def _run(command: Callable[[], None]) -> int:
    try:
        command()
    except RoostError as exc:  # as the full CLI says it
        print(f"roost: {exc}", file=sys.stderr)
        return exc.code
    return 0
