"""`roost ls`'s fast path: one SELECT, one `tmux list-panes -a`, at most one chained
`capture-pane` call, and the hook logs' last lines, run through the status pipeline
(ops/observe.py's `statuses`). Built to start fast: it imports only os, sys, time, sqlite3 and
roost's import-light modules (no Click, no dataclasses, no typing, no subprocess), because people
and scripts run `roost ls` all the time.

It only reads. It hands over to the full CLI (returns None) whenever there is something to write
or fix: a missing, damaged or older database, session ids to learn, unread hook events, a
status that changed since it was stored, or a pane whose exit status tmux has not collected yet.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time

from roost.core import observation, present
from roost.ops import learn, observe
from roost.store import schema
from roost.store import status as listing
from roost.system import locate
from roost.tmux import format as panefmt


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
        conn = sqlite3.connect(db, isolation_level=None, timeout=30.0)
        conn.execute("PRAGMA busy_timeout = 30000")
        if conn.execute("PRAGMA user_version").fetchone()[0] != schema.SCHEMA_VERSION:
            return None
        records = listing.records(conn)
        if any(learn.awaits_session_id(r) for r in records):
            return None
        text = _tmux(name, ["list-panes", "-a", "-F", panefmt.FORMAT])
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
        found = observe.statuses(seen, home, lambda ids: _capture(name, ids),
                                 observe.pattern_overrides(_config(home)), time.time())
        if observation.changes(found):
            return None  # the full CLI records the change (status_since, the event log)
    except (sqlite3.DatabaseError, OSError, ValueError, _HandOver):
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


def _capture(socket: str, pane_ids: list[str]) -> dict[str, str]:
    screens: dict[str, str] = {}
    for batch in panefmt.capture_batches(pane_ids, panefmt.MARKER):
        captured = _tmux(socket, panefmt.capture_args(batch, panefmt.MARKER))
        if captured is None:
            raise _HandOver
        screens.update(panefmt.split_captures(captured, panefmt.MARKER))
    return screens


def _tmux(socket: str, args: list[str]) -> str | None:
    """A tmux client call through posix_spawn (the subprocess module costs ~10 ms to import).
    "" when no server runs; None on anything unexpected (tmux missing, an error)."""
    argv = ["tmux", "-u", "-L", socket, "-f", "/dev/null", *args]
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        pid = os.posix_spawnp("tmux", argv, locate.tmux_client_env(os.environ), file_actions=[
            (os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2)])
    except OSError:
        for fd in (out_r, out_w, err_r, err_w):
            os.close(fd)
        return None
    os.close(out_w)
    os.close(err_w)
    with os.fdopen(out_r, "rb") as out:
        data = out.read()  # tmux writes little to stderr, so reading stdout first cannot block
    with os.fdopen(err_r, "rb") as err:
        error = err.read().decode(errors="replace")
    _, wait_status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(wait_status) == 0:
        return data.decode(errors="replace")
    return "" if any(s in error for s in panefmt.NO_SERVER) else None
