"""`roost ls`: one SELECT, one `tmux list-panes -a`, at most one chained `capture-pane` call, and
the hook logs' last lines, joined. Built to start fast: it imports only os, sys, time, sqlite3 and
roost's import-light modules (no Click, no dataclasses, no subprocess), because people and scripts
run `roost ls` all the time.

The fast path only reads. It hands over to the full CLI (returns None) whenever there is
something to write or fix: a missing, damaged or older database, codex or gemini ids to learn,
unread hook events, a status that changed since it was stored, or a pane whose exit status tmux
has not collected yet. Both paths use `collect`, `add_status` and `render`.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time

from roost.providers import hooks, traits
from roost.system import locate
from roost.tmux import format as panefmt
from roost.core import present
from roost.store import schema
from roost.core import state
from roost.core import status

_QUERY = """
SELECT a.id, a.name, a.provider, a.provider_session_id, a.cwd, a.home, a.args, a.dangerous,
       a.created_at, a.started_at, a.last_exit, a.intent, a.placement, t.name,
       p.agent_id IS NOT NULL, lp.name, op.name, oroot.name, a.last_active_at, a.last_error,
       a.status, a.status_source, a.status_since, a.hook_offset, a.restart_policy
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
            "last_error", "stored_status", "stored_source", "status_since", "hook_offset",
            "restart_policy")
_LEARNABLE = ("SELECT 1 FROM agents WHERE provider_session_id IS NULL AND launches > 0 "
              "AND provider IN ('codex', 'gemini') LIMIT 1")
MARKER = "\x1e"  # a control character: never the start of a line of screen text


def collect(conn: sqlite3.Connection, panes: dict[str, dict[str, str]]) -> list[dict]:
    """Every agent as a plain dict, joined with its pane row (by @roost_id)."""
    items = []
    for row in conn.execute(_QUERY):
        item = dict(zip(_COLUMNS, row))
        pane = panes.get(item["id"])
        alive = pane is not None and pane["pane_dead"] != "1"
        item["pane"] = pane
        item["alive"] = alive
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


def hook_status(item: dict, roost_home: str) -> tuple[str, float] | None:
    """The status the agent's last hook event gives, and when it fired."""
    if not traits.of(item["provider"]).hooks:
        return None
    return hooks.last_status(roost_home, item["id"])


def screens_needed(items: list[dict], hook_by_id: dict[str, tuple[str, float] | None]) -> list[str]:
    needed = []
    for item in items:
        if not item["alive"]:
            continue
        hook = hook_by_id.get(item["id"])
        activity = _float(item["pane"].get("window_activity"))
        if status.needs_screen(traits.of(item["provider"]).hooks, hook[1] if hook else None,
                               activity):
            needed.append(item["pane"]["pane_id"])
    return needed


def add_status(items: list[dict], hook_by_id: dict[str, tuple[str, float] | None],
               screens: dict[str, str], overrides: dict | None, now: float) -> None:
    """Set each item's status and source, and whether it differs from the stored one."""
    patterns: dict[str, dict[str, list[str]]] = {}
    for item in items:
        pane = item["pane"]
        if item["provider"] not in patterns:
            patterns[item["provider"]] = status.patterns_for(
                traits.of(item["provider"]).patterns, (overrides or {}).get(item["provider"]))
        found, source = status.classify(
            alive=item["alive"], has_window=pane is not None, base_state=item["state"],
            roost_stopped=item["intent"] == "stopped",
            hook=hook_by_id.get(item["id"]),
            screen=screens.get(pane["pane_id"]) if pane else None,
            activity=_float(pane.get("window_activity")) if pane else None,
            started_at=_epoch(item["started_at"]) if item["alive"] else None,
            patterns=patterns[item["provider"]], now=now)
        item["status"], item["status_source"] = found, source
        item["status_changed"] = (found, source) != (item["stored_status"], item["stored_source"])


def status_overrides(roost_home: str) -> dict | None:
    path = os.path.join(roost_home, "config.toml")
    if not os.path.exists(path):
        return None
    import tomllib

    with open(path, "rb") as fh:
        return tomllib.load(fh).get("status", {}).get("patterns")


def fast(as_json: bool) -> int | None:
    """Print `roost ls`; None when the full CLI must take over."""
    name = locate.socket_name()
    home = locate.roost_home()
    db = os.path.join(home, "roost.db")
    if name is None or not os.path.exists(db):
        return None
    try:
        conn = sqlite3.connect(db, isolation_level=None, timeout=30.0)
        conn.execute("PRAGMA busy_timeout = 30000")
        if conn.execute("PRAGMA user_version").fetchone()[0] != schema.SCHEMA_VERSION:
            return None
        if conn.execute(_LEARNABLE).fetchone():
            return None
        text = _tmux(name, ["list-panes", "-a", "-F", panefmt.FORMAT])
        if text is None:
            return None
        rows = panefmt.rows(text)
        if any(r["pane_dead"] == "1" and panefmt.exit_status(r) is None for r in rows):
            return None
        items = collect(conn, agent_panes(rows))
        # Unread hook events (session id changes to record) can only come from an agent that has
        # a pane; one without (hibernated, home gone) wrote its last event long ago.
        if any(traits.of(i["provider"]).hooks and i["pane"] is not None and
               hooks.size(hooks.log_path(home, i["id"])) != i["hook_offset"] for i in items):
            return None
        hook_by_id = {i["id"]: hook_status(i, home) for i in items if i["alive"]}
        needed = screens_needed(items, hook_by_id)
        screens: dict[str, str] = {}
        for batch in panefmt.capture_batches(needed, MARKER):
            captured = _tmux(name, panefmt.capture_args(batch, MARKER))
            if captured is None:
                return None
            screens.update(panefmt.split_captures(captured, MARKER))
        add_status(items, hook_by_id, screens, status_overrides(home), time.time())
        if any(i["status_changed"] for i in items):
            return None  # the full CLI records the change (status_since, the event log)
    except (sqlite3.DatabaseError, OSError, ValueError):
        return None
    sys.stdout.write(present.render(items, as_json))
    return 0


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text else None
    except ValueError:
        return None


def _epoch(iso: str | None) -> float | None:
    if not iso:
        return None
    from datetime import datetime

    return datetime.fromisoformat(iso).timestamp()


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
