"""`roost ls`: one SELECT and one `tmux list-panes -a`, joined. Built to start fast: it imports
only os, sys, sqlite3 and roost's import-light modules (no Click, no dataclasses, no subprocess),
because people and scripts run `roost ls` all the time. The full CLI uses the same `collect` and
`render`; the fast entry hands over to it (returns None) whenever there is more to do than
reading: a missing, damaged or older database (migrations and errors live there), codex or gemini
ids still to learn from their files, or a pane whose exit status tmux has not collected yet.
"""

from __future__ import annotations

import os
import sqlite3
import sys

from roost import locate, panefmt, present, schema, state

_QUERY = """
SELECT a.id, a.name, a.provider, a.provider_session_id, a.cwd, a.home, a.args, a.dangerous,
       a.created_at, a.started_at, a.last_exit, a.intent, a.placement, t.name,
       p.agent_id IS NOT NULL, lp.name, op.name, oroot.name, a.last_active_at, a.last_error
FROM agents a
LEFT JOIN tabs t ON t.id = a.tab_id
LEFT JOIN pins p ON p.agent_id = a.id
LEFT JOIN agents lp ON lp.id = a.linked_parent
LEFT JOIN agents op ON op.id = a.orchestration_parent
LEFT JOIN agents oroot ON oroot.id = a.orchestration_root
ORDER BY a.created_at, a.name
"""
_COLUMNS = ("id", "name", "provider", "provider_session_id", "cwd", "home", "args", "dangerous",
            "created_at", "started_at", "last_exit", "intent", "placement", "tab", "pinned",
            "linked_parent", "orchestration_parent", "orchestration_root", "last_active_at",
            "last_error")
_LEARNABLE = ("SELECT 1 FROM agents WHERE provider_session_id IS NULL AND launches > 0 "
              "AND provider IN ('codex', 'gemini') LIMIT 1")


def collect(conn: sqlite3.Connection, panes: dict[str, dict[str, str]]) -> list[dict]:
    """Every agent as a plain dict, joined with its pane row (by @roost_id)."""
    items = []
    for row in conn.execute(_QUERY):
        item = dict(zip(_COLUMNS, row))
        pane = panes.get(item["id"])
        alive = pane is not None and pane["pane_dead"] != "1"
        item["state"] = state.derive(alive, pane is not None, item["intent"], item["placement"],
                                     item["last_error"])
        item["pid"] = int(pane["pane_pid"]) if alive and pane else None
        dead_status = panefmt.exit_status(pane) if pane is not None else None
        item["exit_code"] = dead_status if dead_status is not None else item["last_exit"]
        items.append(item)
    return items


def agent_panes(rows: list[dict[str, str]]) -> dict[str, dict[str, str]]:
    """Each agent's pane row by roost id; a live pane wins over a dead one."""
    found: dict[str, dict[str, str]] = {}
    for row in rows:
        if row["roost_id"] and (row["roost_id"] not in found or row["pane_dead"] != "1"):
            found[row["roost_id"]] = row
    return found


def fast(as_json: bool) -> int | None:
    """Print `roost ls`; None when the full CLI must take over."""
    name = locate.socket_name()
    db = os.path.join(locate.roost_home(), "roost.db")
    if name is None or not os.path.exists(db):
        return None
    try:
        conn = sqlite3.connect(db, isolation_level=None, timeout=30.0)
        conn.execute("PRAGMA busy_timeout = 30000")
        if conn.execute("PRAGMA user_version").fetchone()[0] != schema.SCHEMA_VERSION:
            return None
        if conn.execute(_LEARNABLE).fetchone():
            return None
        text = _list_panes(name)
        if text is None:
            return None
        rows = panefmt.rows(text)
        if any(r["pane_dead"] == "1" and panefmt.exit_status(r) is None for r in rows):
            return None
        items = collect(conn, agent_panes(rows))
    except sqlite3.DatabaseError:
        return None
    sys.stdout.write(present.render(items, as_json))
    return 0


def _list_panes(socket: str) -> str | None:
    """`tmux list-panes -a` through posix_spawn (the subprocess module costs ~10 ms to import).
    "" when no server runs; None on anything unexpected (tmux missing, an error)."""
    argv = ["tmux", "-u", "-L", socket, "-f", "/dev/null", "list-panes", "-a", "-F",
            panefmt.FORMAT]
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
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) == 0:
        return data.decode(errors="replace")
    return "" if any(s in error for s in panefmt.NO_SERVER) else None
