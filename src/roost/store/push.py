"""The push room's rows (issue 40, push/): paired devices, their Web Push subscriptions, one-time
pairing codes and notification capabilities. Secrets are kept as digests only (push/rules.py
`digest`). Functions taking a connection run inside the caller's `store.write()` transaction,
or read outside one.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from roost.push.rules import Capability, Subscription


@dataclass(frozen=True, slots=True)
class Device:
    id: str
    name: str
    paired_at: str
    last_seen: str | None
    revoked_at: str | None
    subscribed: bool
    viewing: str | None
    viewing_at: str | None


@dataclass(frozen=True, slots=True)
class Target:
    """A subscribed, live device: where its pushes go."""

    device_id: str
    subscription: Subscription
    viewing: str | None
    viewing_at: str | None


_DEVICE = (
    "SELECT d.id, d.name, d.paired_at, d.last_seen, d.revoked_at, s.device_id IS NOT NULL, "
    "d.viewing, d.viewing_at FROM push_devices d "
    "LEFT JOIN push_subscriptions s ON s.device_id = d.id"
)


# ---- pairing codes ------------------------------------------------------------------------------
def add_pairing(c: sqlite3.Connection, code_hash: str, expires_at: str) -> None:
    c.execute(
        "INSERT INTO push_pairings (code_hash, expires_at) VALUES (?, ?)", (code_hash, expires_at)
    )


def take_pairing(c: sqlite3.Connection, code_hash: str, now: str) -> str | None:
    """Use the code once: its expiry if it was unused (now marked used), else None."""
    row = c.execute(
        "SELECT expires_at FROM push_pairings WHERE code_hash = ? AND used_at IS NULL",
        (code_hash,),
    ).fetchone()
    if row is None:
        return None
    c.execute("UPDATE push_pairings SET used_at = ? WHERE code_hash = ?", (now, code_hash))
    return str(row[0])


# ---- devices ------------------------------------------------------------------------------------
def add_device(c: sqlite3.Connection, device_id: str, name: str, secret_hash: str, at: str) -> None:
    c.execute(
        "INSERT INTO push_devices (id, name, key_hash, paired_at, last_seen) "
        "VALUES (?, ?, ?, ?, ?)",
        (device_id, name, secret_hash, at, at),
    )


def device_secret(conn: sqlite3.Connection, device_id: str) -> tuple[str, str | None] | None:
    """(secret hash, revoked at) of a device, None if unknown."""
    row = conn.execute(
        "SELECT key_hash, revoked_at FROM push_devices WHERE id = ?", (device_id,)
    ).fetchone()
    return (str(row[0]), row[1]) if row else None


def last_seen(conn: sqlite3.Connection, device_id: str) -> str | None:
    row = conn.execute("SELECT last_seen FROM push_devices WHERE id = ?", (device_id,)).fetchone()
    return row[0] if row else None


def seen(c: sqlite3.Connection, device_id: str, at: str) -> None:
    c.execute("UPDATE push_devices SET last_seen = ? WHERE id = ?", (at, device_id))


def devices(conn: sqlite3.Connection) -> list[Device]:
    rows = conn.execute(_DEVICE + " ORDER BY d.paired_at, d.id").fetchall()
    return [Device(r[0], r[1], r[2], r[3], r[4], bool(r[5]), r[6], r[7]) for r in rows]


def revoke(c: sqlite3.Connection, device_id: str, at: str) -> bool:
    """Revoke the device (its subscription goes with it); False if unknown or revoked already."""
    done = c.execute(
        "UPDATE push_devices SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
        (at, device_id),
    ).rowcount
    c.execute("DELETE FROM push_subscriptions WHERE device_id = ?", (device_id,))
    return bool(done)


def viewing(c: sqlite3.Connection, device_id: str, agent_id: str | None, at: str) -> None:
    c.execute(
        "UPDATE push_devices SET viewing = ?, viewing_at = ?, last_seen = ? WHERE id = ?",
        (agent_id, at, at, device_id),
    )


# ---- subscriptions ------------------------------------------------------------------------------
def subscribe(c: sqlite3.Connection, device_id: str, sub: Subscription, at: str) -> None:
    c.execute(
        "INSERT OR REPLACE INTO push_subscriptions (device_id, endpoint, p256dh, auth, at) "
        "VALUES (?, ?, ?, ?, ?)",
        (device_id, sub.endpoint, sub.p256dh, sub.auth, at),
    )


def unsubscribe(c: sqlite3.Connection, device_id: str, endpoint: str) -> None:
    """Forget a subscription the push service refused (only that one: the device may have
    subscribed anew meanwhile)."""
    c.execute(
        "DELETE FROM push_subscriptions WHERE device_id = ? AND endpoint = ?",
        (device_id, endpoint),
    )


def has_subscriptions(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM push_subscriptions LIMIT 1").fetchone() is not None


def targets(conn: sqlite3.Connection, device_id: str | None = None) -> list[Target]:
    """The subscribed devices not revoked (or that one)."""
    sql = (
        "SELECT d.id, s.endpoint, s.p256dh, s.auth, d.viewing, d.viewing_at "
        "FROM push_subscriptions s JOIN push_devices d ON d.id = s.device_id "
        "WHERE d.revoked_at IS NULL"
    )
    rows = (
        conn.execute(sql + " AND d.id = ?", (device_id,)).fetchall()
        if device_id is not None
        else conn.execute(sql + " ORDER BY d.id").fetchall()
    )
    return [Target(r[0], Subscription(r[1], r[2], r[3]), r[4], r[5]) for r in rows]


# ---- capabilities -------------------------------------------------------------------------------
def add_capability(c: sqlite3.Connection, cap_hash: str, cap: Capability) -> None:
    c.execute(
        "INSERT INTO push_capabilities "
        "(hash, device_id, agent_id, agent, fingerprint, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
        (cap_hash, cap.device_id, cap.agent_id, cap.agent, cap.fingerprint, cap.expires_at),
    )


def capability(conn: sqlite3.Connection, cap_hash: str) -> Capability | None:
    row = conn.execute(
        "SELECT device_id, agent_id, agent, fingerprint, expires_at, used_at "
        "FROM push_capabilities WHERE hash = ?",
        (cap_hash,),
    ).fetchone()
    return Capability(*row) if row else None


def use_capability(c: sqlite3.Connection, cap_hash: str, at: str) -> bool:
    """Mark it used (before its answer is pressed); False when another request used it first."""
    return bool(
        c.execute(
            "UPDATE push_capabilities SET used_at = ? WHERE hash = ? AND used_at IS NULL",
            (at, cap_hash),
        ).rowcount
    )


def forget_expired(c: sqlite3.Connection, now: str) -> None:
    """Drop capabilities and pairing codes past their expiry (they are refused anyway)."""
    c.execute("DELETE FROM push_capabilities WHERE expires_at < ?", (now,))
    c.execute("DELETE FROM push_pairings WHERE expires_at < ?", (now,))


# ---- hosts' streams -----------------------------------------------------------------------------
def host_cursor(conn: sqlite3.Connection, host: str) -> int | None:
    """The last seq of `host`'s event stream read for its agents' alerts (None: never read)."""
    row = conn.execute("SELECT seq FROM push_host_cursors WHERE host = ?", (host,)).fetchone()
    return int(row[0]) if row else None


def set_host_cursor(c: sqlite3.Connection, host: str, seq: int) -> None:
    c.execute(
        "INSERT INTO push_host_cursors (host, seq) VALUES (?, ?) "
        "ON CONFLICT (host) DO UPDATE SET seq = excluded.seq",
        (host, seq),
    )
