"""The rows of `roost export` and `roost import`: the whole database as plain values, and back.

The format and its validation are core/exchange.py. An import runs inside the caller's
`store.write()` transaction: it reads what is taken, validates, and writes, all under one lock,
so bad input (or a concurrent spawn) changes nothing.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from roost.core import workspace as ws
from roost.core.exchange import ADDED_FIELDS, Taken, settled
from roost.store import events, resumes
from roost.store import usage as usage
from roost.store.db import AGENT_FIELDS, Store, add_to_history, add_to_lineage, insert_row


def taken(conn: sqlite3.Connection) -> Taken:
    def column(sql: str) -> frozenset[str]:
        return frozenset(r[0] for r in conn.execute(sql))

    return Taken(
        ids=column("SELECT id FROM agents"),
        names=column("SELECT name FROM agents"),
        tabs=column("SELECT name FROM tabs"),
        sessions=column("SELECT provider_session_id FROM provider_sessions"),
    )


def export_tables(store: Store) -> dict[str, Any]:
    """settings, tabs, agents (with their session lineage), pins and the on-limit policies and
    budgets, as JSON-ready values."""
    conn = store.conn
    agents = []
    for agent in store.agents():
        row: dict[str, Any] = {f: getattr(agent, f) for f in AGENT_FIELDS}
        # arguments awaiting approval travel as its arguments: an import without
        # --allow-dangerous keeps them aside again, one with it is the person's approval
        waiting = agent.proposed_args
        row["args"] = list(agent.args) if waiting is None else json.loads(waiting)
        row["session_history"] = store.session_history(agent.id)
        agents.append(row)
    tabs = [
        {
            "id": r[0],
            "name": r[1],
            "position": r[2],
            "layout": json.loads(r[3]) if r[3] else None,
            "focus": r[4],
        }
        for r in conn.execute(
            "SELECT id, name, position, layout, focus FROM tabs ORDER BY position, name"
        )
    ]
    pins = [r[0] for r in conn.execute("SELECT agent_id FROM pins ORDER BY position")]
    settings = dict(conn.execute("SELECT key, value FROM settings ORDER BY key").fetchall())
    kept = {a["id"] for a in agents} | {t["id"] for t in tabs}
    on_limit = [
        {"scope": scope, "target": target, "policy": policy}
        for (scope, target), policy in sorted(resumes.policies(conn).items())
        if target in kept  # a forgotten agent's or tab's policy goes no further
    ]
    policies = {"on_limit": on_limit, "budgets": usage.exported_budgets(conn)}
    return {
        "settings": settings,
        "tabs": tabs,
        "agents": agents,
        "pins": pins,
        "policies": policies,
    }


# The database refused an imported record (a constraint validation missed): raised at the end of
# the import's transaction at the latest (foreign keys are checked at commit).
RecordRefused = sqlite3.IntegrityError


def insert_tables(c: sqlite3.Connection, data: Mapping[str, Any], seen_at: str) -> None:
    """Write a validated export (core.exchange.validate) inside the caller's transaction."""
    c.execute("PRAGMA defer_foreign_keys = ON")  # links may point forward in the file
    for t in data["tabs"]:
        c.execute(
            "INSERT INTO tabs (id, name, position, layout, focus) VALUES (?, ?, ?, ?, ?)",
            (
                t["id"],
                t["name"],
                t["position"],
                json.dumps(t["layout"]) if t["layout"] else None,
                t["focus"],
            ),
        )
    tiled = {leaf for t in data["tabs"] for leaf in ws.leaves(t["layout"])}
    for a in data["agents"]:
        insert_row(c, {**ADDED_FIELDS, **settled(a, tiled)})  # older exports lack newer fields
        previous = None
        for sid in a["session_history"]:
            add_to_lineage(c, a["id"], sid, seen_at)
            add_to_history(c, a["id"], sid, previous, "imported", seen_at)
            previous = sid
    for position, agent_id in enumerate(data["pins"]):
        c.execute("INSERT INTO pins (agent_id, position) VALUES (?, ?)", (agent_id, position))
    for key, value in data["settings"].items():
        c.execute("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", (key, value))
    policies = data.get("policies") or {}
    for row in policies.get("on_limit", []):
        resumes.set_policy(c, row["scope"], row["target"], row["policy"])
    for row in policies.get("budgets", []):
        usage.insert_budget(c, row)


# ---- an import's arguments awaiting the person's approval (issue 35) ----------------------------
def propose(c: sqlite3.Connection, agent_id: str, args: list[str], at: str) -> None:
    """Keep `args` aside for the agent until the person approves them (`roost approve`)."""
    c.execute(
        "INSERT INTO approvals (agent_id, args, proposed_at, origin) VALUES (?, ?, ?, 'import')",
        (agent_id, json.dumps(args), at),
    )


def proposal(conn: sqlite3.Connection, agent_id: str) -> list[str] | None:
    row = conn.execute("SELECT args FROM approvals WHERE agent_id = ?", (agent_id,)).fetchone()
    return None if row is None else list(json.loads(row[0]))


def approve(c: sqlite3.Connection, agent_id: str, name: str, args: list[str], at: str) -> bool:
    """Make `args` the agent's own, with an `approved` event, if they are still what awaits
    approval (what the person was shown); False, changing nothing, if they are not."""
    if proposal(c, agent_id) != args:
        return False
    c.execute("UPDATE agents SET args = ? WHERE id = ?", (json.dumps(args), agent_id))
    c.execute("DELETE FROM approvals WHERE agent_id = ?", (agent_id,))
    events.append(c, agent_id, name, at, "approved", {"args": args, "origin": "import"})
    return True
