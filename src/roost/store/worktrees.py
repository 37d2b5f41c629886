"""The worktrees table: which agent works in which git worktree (repository, branch, path).

A row is a pointer, not the truth about the worktree: whether it may be removed is asked of git
each time (worktrees/operations.py). Functions taking a connection run inside the caller's
`store.write()` transaction.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Row:
    path: str
    agent_id: str | None
    agent_name: str
    repo: str
    common_dir: str
    branch: str
    base: str | None
    created_at: str


_COLUMNS = "path, agent_id, agent_name, repo, common_dir, branch, base, created_at"


def insert(c: sqlite3.Connection, row: Row) -> None:
    """Record the agent's worktree (a row kept from an earlier agent at that path is replaced:
    the worktree was adopted)."""
    c.execute(
        f"INSERT OR REPLACE INTO worktrees ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            row.path,
            row.agent_id,
            row.agent_name,
            row.repo,
            row.common_dir,
            row.branch,
            row.base,
            row.created_at,
        ),
    )


def of_agent(c: sqlite3.Connection, agent_id: str) -> Row | None:
    found = c.execute(f"SELECT {_COLUMNS} FROM worktrees WHERE agent_id = ?", (agent_id,))
    row = found.fetchone()
    return Row(*row) if row else None


def at_path(c: sqlite3.Connection, path: str) -> Row | None:
    row = c.execute(f"SELECT {_COLUMNS} FROM worktrees WHERE path = ?", (path,)).fetchone()
    return Row(*row) if row else None


def by_agent(c: sqlite3.Connection) -> dict[str, Row]:
    """Every agent's worktree, by agent id (ls --json, doctor)."""
    rows = c.execute(f"SELECT {_COLUMNS} FROM worktrees WHERE agent_id IS NOT NULL")
    return {r[1]: Row(*r) for r in rows}


def repos(c: sqlite3.Connection) -> list[str]:
    """Every repository roost made a worktree in that still has a row (prune asks their git)."""
    return [r[0] for r in c.execute("SELECT DISTINCT repo FROM worktrees ORDER BY repo")]


def detach(c: sqlite3.Connection, agent_id: str) -> None:
    """The agent goes, its worktree stays (rm --keep-worktree)."""
    c.execute("UPDATE worktrees SET agent_id = NULL WHERE agent_id = ?", (agent_id,))


def forget(c: sqlite3.Connection, path: str) -> None:
    c.execute("DELETE FROM worktrees WHERE path = ?", (path,))


def exported(c: sqlite3.Connection) -> list[dict[str, str | None]]:
    """The agents' worktrees for `roost export` (kept ones, with no agent, stay behind)."""
    rows = c.execute(f"SELECT {_COLUMNS} FROM worktrees WHERE agent_id IS NOT NULL ORDER BY path")
    return [
        {"agent_id": r.agent_id, "repo": r.repo, "branch": r.branch, "path": r.path, "base": r.base}
        for r in (Row(*row) for row in rows)
    ]


# ---- port leases: ROOST_PORT and the next 9 for each worktree agent ---------------------------
def leased_ports(c: sqlite3.Connection) -> set[int]:
    """The first ports of the blocks agents hold (a lease whose agent is gone is free)."""
    rows = c.execute("SELECT l.port FROM port_leases l JOIN agents a ON a.id = l.agent_id")
    return {r[0] for r in rows}


def lease_port(c: sqlite3.Connection, agent_id: str, port: int) -> None:
    c.execute("DELETE FROM port_leases WHERE agent_id = ? OR port = ?", (agent_id, port))
    c.execute("INSERT INTO port_leases (port, agent_id) VALUES (?, ?)", (port, agent_id))


def port_of(c: sqlite3.Connection, agent_id: str) -> int | None:
    row = c.execute("SELECT port FROM port_leases WHERE agent_id = ?", (agent_id,)).fetchone()
    return int(row[0]) if row else None


def release_port(c: sqlite3.Connection, agent_id: str) -> None:
    c.execute("DELETE FROM port_leases WHERE agent_id = ?", (agent_id,))


# ---- consent to a repository's setup script, per content hash ---------------------------------
def consented(c: sqlite3.Connection, repo: str, sha256: str) -> bool:
    found = c.execute(
        "SELECT 1 FROM setup_consents WHERE repo = ? AND sha256 = ?", (repo, sha256)
    ).fetchone()
    return found is not None


def consent(c: sqlite3.Connection, repo: str, sha256: str, at: str) -> None:
    c.execute(
        "INSERT OR IGNORE INTO setup_consents (repo, sha256, at) VALUES (?, ?, ?)",
        (repo, sha256, at),
    )
