"""`roost ls`'s fast path: one SELECT, one `tmux list-panes -a`, at most one chained
`capture-pane` call, and the hook logs' last lines, run through the status pipeline
(ops/observe.py's `statuses`). Built to start fast: it imports only os, sys, time, sqlite3 (in
the store) and roost's import-light modules (no Click, no dataclasses, no typing, no
subprocess), because people and scripts run `roost ls` all the time.

It only reads. It hands over to the full CLI (returns None) whenever there is something to write
or fix: a missing, damaged or older database, session ids to learn, unread hook events, a
status that changed since it was stored, or a pane whose exit status tmux has not collected yet.
"""

from __future__ import annotations

import os
import sys
import time

from roost.core import observation, present, settings
from roost.ops import learn, observe
from roost.store import status as listing
from roost.system import locate
from roost.tmux import format as panefmt
from roost.tmux import timeout as tmux_timeout


class _HandOver(Exception):
    """Something unexpected: the full CLI takes over."""


def fast(as_json: bool) -> int | None:
    """Print `roost ls`; None when the full CLI must take over."""
    name = locate.socket_name()
    home = locate.roost_home()
    db = os.path.join(home, "roost.db")
    if name is None or not os.path.exists(db) or not locate.private_tree(home):
        return None
    try:
        config = _config(home)
        if settings.problems(config):
            return None  # the full CLI says what is wrong with it
        tmux = locate.tmux_binary(config)
        conn = listing.open_current(db)
        if conn is None:
            return None  # an older or damaged store: the full CLI says what to do
        records = listing.records(conn, history=as_json)
        if any(learn.awaits_session_id(r) for r in records):
            return None
        text = _tmux(tmux, name, ["list-panes", "-a", "-F", panefmt.FORMAT])
        if text is None:
            return None
        panes = panefmt.panes(text)
        if any(p.dead and p.dead_status is None for p in panes):
            return None
        seen = observation.join(records, panes)
        # Unread hook events (session id changes to record) can only come from an agent that has
        # a pane; one without (hibernated, home gone) wrote its last event long ago.
        if any(o.pane is not None and learn.unread_hook_events(home, o.agent) for o in seen):
            return None
        found = observe.statuses(seen, home, lambda ids: _capture(tmux, name, ids),
                                 observe.pattern_overrides(config), time.time())
        if observation.changes(found):
            return None  # the full CLI records the change (status_since, the event log)
    except TmuxSilent as silent:
        sys.stderr.write(f"roost: {silent}\n")
        return 5
    except (listing.Unreadable, OSError, ValueError, _HandOver):
        return None
    sys.stdout.write(present.render(found, as_json))
    return 0


def _config(roost_home: str) -> dict[str, object]:
    path = os.path.join(roost_home, "config.toml")
    if not os.path.exists(path):
        return {}
    import tomllib

    with open(path, "rb") as fh:
        return tomllib.load(fh)


def _capture(tmux: str, socket: str, pane_ids: list[str]) -> dict[str, str]:
    screens: dict[str, str] = {}
    for batch in panefmt.capture_batches(pane_ids, panefmt.MARKER):
        captured = _tmux(tmux, socket, panefmt.capture_args(batch, panefmt.MARKER))
        if captured is None:
            raise _HandOver
        screens.update(panefmt.split_captures(captured, panefmt.MARKER))
    return screens


class TmuxSilent(Exception):
    """tmux did not answer in time: a hung server must not hang `roost ls`."""


def _tmux(tmux: str, socket: str, args: list[str]) -> str | None:
    """A tmux client call through posix_spawn (the subprocess module costs ~10 ms to import),
    bounded by the same time limit as every other tmux call (tmux/timeout.py). "" when no
    server runs; None on anything unexpected (tmux missing, an error)."""
    argv = [tmux, "-u", "-L", socket, "-f", "/dev/null", *args]
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        pid = os.posix_spawnp(tmux, argv, locate.tmux_client_env(os.environ), setpgroup=0,
                              file_actions=[(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                                            (os.POSIX_SPAWN_DUP2, out_w, 1),
                                            (os.POSIX_SPAWN_DUP2, err_w, 2)])
    except OSError:
        for fd in (out_r, out_w, err_r, err_w):
            os.close(fd)
        return None
    os.close(out_w)
    os.close(err_w)
    limit = tmux_timeout.seconds(os.environ)  # ValueError: the full CLI says what is wrong
    try:
        data, error = _read_both(out_r, err_r, time.monotonic() + limit)
    except TmuxSilent:
        os.killpg(pid, 9)  # the client and anything it started (its own process group)
        os.waitpid(pid, 0)
        raise TmuxSilent(f"tmux did not answer within {limit:g} s ({args[0]} on server "
                         f"{socket}); {tmux_timeout.ENV} sets the limit") from None
    finally:
        os.close(out_r)
        os.close(err_r)
    _, wait_status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(wait_status) == 0:
        return data.decode(errors="replace")
    return "" if any(s in error.decode(errors="replace") for s in panefmt.NO_SERVER) else None


def _read_both(out_fd: int, err_fd: int, deadline: float) -> tuple[bytes, bytes]:
    """Everything tmux writes to stdout and stderr until it closes them, or TmuxSilent."""
    import select

    chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    open_fds = [out_fd, err_fd]
    while open_fds:
        left = deadline - time.monotonic()
        ready = select.select(open_fds, [], [], max(0.0, left))[0] if left > 0 else []
        if not ready:
            raise TmuxSilent
        for fd in ready:
            chunk = os.read(fd, 65536)
            if chunk:
                chunks[fd].append(chunk)
            else:
                open_fds.remove(fd)
    return b"".join(chunks[out_fd]), b"".join(chunks[err_fd])
