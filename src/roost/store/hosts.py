"""The hosts table: remote roosts this one drives over OpenSSH (docs/HOSTS.md). A row is how to
reach a host, never what runs there: the remote roost's own store is the truth about its agents.
Functions taking a connection run inside the caller's `store.write()` transaction."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Host:
    name: str
    dest: str
    roost: str
    env: dict[str, str] = field(default_factory=dict)
    added_at: str = ""


_COLUMNS = "name, dest, roost, env, added_at"


def _host(row: tuple[str, str, str, str, str]) -> Host:
    name, dest, roost, env, added_at = row
    return Host(name, dest, roost, json.loads(env), added_at)


def insert(c: sqlite3.Connection, host: Host) -> bool:
    """Store `host`; False when one of that name exists (nothing changed)."""
    found = c.execute(
        f"INSERT OR IGNORE INTO hosts ({_COLUMNS}) VALUES (?, ?, ?, ?, ?)",
        (host.name, host.dest, host.roost, json.dumps(host.env, sort_keys=True), host.added_at),
    )
    return found.rowcount == 1


def delete(c: sqlite3.Connection, name: str) -> bool:
    return c.execute("DELETE FROM hosts WHERE name = ?", (name,)).rowcount == 1


def read(db: str, name: str | None = None) -> list[Host]:
    """Every host (or the one named), read-only on a connection of its own: what every reader
    of hosts asks, with an App or without one (`roost --host`, `ls --all`). None stored yet, or
    a store from before hosts: []."""
    import os
    import pathlib

    if not os.path.exists(db):
        return []
    where, args = ("WHERE name = ?", (name,)) if name is not None else ("", ())
    try:
        conn = sqlite3.connect(pathlib.Path(db).as_uri() + "?mode=ro", uri=True, timeout=2.0)
        try:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM hosts {where} ORDER BY name", args)
            return [_host(r) for r in rows]
        finally:
            conn.close()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return []
        raise
