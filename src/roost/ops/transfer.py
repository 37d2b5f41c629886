"""`roost export` / `roost import`: the whole workspace as versioned JSON, round-tripped exactly.

Import validates everything first and writes in one transaction, so bad input changes nothing.
"""

from __future__ import annotations

import json
from typing import Any

from roost.core import workspace as ws
from roost.ops.context import App
from roost.core.errors import RoostError
from roost.core.names import name_problem
from roost.providers.base import NAMES as PROVIDERS
from roost.store.db import AGENT_FIELDS, now_iso

FORMAT = "roost-workspace"
VERSION = 1
_AGENT_FIELDS = list(AGENT_FIELDS)  # every stored field, so nothing is lost on a round trip


def export(app: App) -> dict[str, Any]:
    conn = app.store.conn
    agents = []
    for agent in app.store.agents():
        row = {f: getattr(agent, f) for f in _AGENT_FIELDS}
        row["args"] = list(agent.args)
        row["session_history"] = app.store.session_history(agent.id)
        agents.append(row)
    tabs = [{"id": r[0], "name": r[1], "position": r[2],
             "layout": json.loads(r[3]) if r[3] else None, "focus": r[4]}
            for r in conn.execute("SELECT id, name, position, layout, focus FROM tabs "
                                  "ORDER BY position, name")]
    pins = [r[0] for r in conn.execute("SELECT agent_id FROM pins ORDER BY position")]
    settings = dict(conn.execute("SELECT key, value FROM settings ORDER BY key").fetchall())
    return {"format": FORMAT, "version": VERSION, "settings": settings, "tabs": tabs,
            "agents": agents, "pins": pins}


def _fail(message: str) -> RoostError:
    return RoostError(f"import refused, nothing changed: {message}", code=2)


def validate(data: Any, existing_ids: set[str], existing_names: set[str],
             existing_tabs: set[str], existing_sessions: set[str]) -> None:
    """Raise a clear error for the first thing wrong with `data`; pure, no I/O."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise _fail(f"not a roost workspace export (format must be {FORMAT!r})")
    if data.get("version") != VERSION:
        raise _fail(f"unsupported export version {data.get('version')!r} (this roost reads {VERSION})")
    for key, kind in (("tabs", list), ("agents", list), ("pins", list), ("settings", dict)):
        if not isinstance(data.get(key), kind):
            raise _fail(f"{key!r} must be a {kind.__name__}")
    ids: set[str] = set()
    names: set[str] = set()
    sessions: set[str] = set()
    for i, a in enumerate(data["agents"]):
        where = f"agents[{i}]"
        if not isinstance(a, dict) or set(a) != set(_AGENT_FIELDS) | {"session_history"}:
            raise _fail(f"{where} must have exactly the fields {sorted(_AGENT_FIELDS)} "
                        "and session_history")
        if not isinstance(a["id"], str) or not a["id"] or a["id"] in ids | existing_ids:
            raise _fail(f"{where}: id {a['id']!r} is missing or already used")
        if not isinstance(a["name"], str) or (problem := name_problem(a["name"])):
            raise _fail(f"{where}: bad name: {problem if isinstance(a['name'], str) else a['name']}")
        if a["name"] in names | existing_names:
            raise _fail(f"{where}: agent name {a['name']!r} already exists")
        if a["provider"] not in PROVIDERS:
            raise _fail(f"{where}: unknown provider {a['provider']!r}")
        if a["placement"] not in (*ws.PLACEMENTS, None):
            raise _fail(f"{where}: placement must be tile, detached, buried or null")
        if not isinstance(a["args"], list) or not all(isinstance(x, str) for x in a["args"]):
            raise _fail(f"{where}: args must be a list of strings")
        history = a["session_history"]
        if not isinstance(history, list) or not all(isinstance(s, str) for s in history):
            raise _fail(f"{where}: session_history must be a list of strings")
        for sid in history + ([a["provider_session_id"]] if a["provider_session_id"] else []):
            if sid in existing_sessions or (sid in sessions and sid not in history):
                raise _fail(f"{where}: provider session {sid} already belongs to another agent")
        sessions.update(history)
        ids.add(a["id"])
        names.add(a["name"])
    tab_ids: set[str] = set()
    tiled: dict[str, str] = {}
    for i, t in enumerate(data["tabs"]):
        where = f"tabs[{i}]"
        if not isinstance(t, dict) or set(t) != {"id", "name", "position", "layout", "focus"}:
            raise _fail(f"{where} must have id, name, position, layout, focus")
        if not isinstance(t["name"], str) or name_problem(t["name"]) or t["name"] in existing_tabs:
            raise _fail(f"{where}: bad or existing tab name {t['name']!r}")
        if not isinstance(t["position"], int):
            raise _fail(f"{where}: position must be an integer")
        try:
            ws.validate_tree(t["layout"], where + ".layout")
        except ws.LayoutError as exc:
            raise _fail(str(exc)) from None
        for agent_id in ws.leaves(t["layout"]):
            if agent_id not in ids or agent_id in tiled:
                raise _fail(f"{where}: tile {agent_id} is not an agent of this file, or tiled twice")
            tiled[agent_id] = t["id"]
        if t["focus"] is not None and t["focus"] not in ws.leaves(t["layout"]):
            raise _fail(f"{where}: focus must be one of its tiles")
        tab_ids.add(t["id"])
    for i, a in enumerate(data["agents"]):
        where = f"agents[{i}] ({a['name']})"
        if (a["placement"] == ws.TILE) != (a["id"] in tiled):
            raise _fail(f"{where}: placement tile must match the tabs' layouts")
        if a["placement"] == ws.TILE and a["tab_id"] != tiled[a["id"]]:
            raise _fail(f"{where}: tab_id does not name the tab that tiles it")
        if a["tab_id"] is not None and a["tab_id"] not in tab_ids:
            raise _fail(f"{where}: tab_id {a['tab_id']} is not a tab of this file")
        for link in ("linked_parent", "orchestration_parent", "orchestration_root",
                     "buried_sibling"):
            if a[link] is not None and a[link] not in ids:
                raise _fail(f"{where}: {link} {a[link]} is not an agent of this file")
    for pin in data["pins"]:
        if pin not in ids:
            raise _fail(f"pin {pin!r} is not an agent of this file")
    if len(set(data["pins"])) != len(data["pins"]):
        raise _fail("an agent is pinned twice")


def import_(app: App, data: Any) -> int:
    conn = app.store.conn
    existing_ids = {r[0] for r in conn.execute("SELECT id FROM agents")}
    existing_names = {r[0] for r in conn.execute("SELECT name FROM agents")}
    existing_tabs = {r[0] for r in conn.execute("SELECT name FROM tabs")}
    existing_sessions = {r[0] for r in conn.execute("SELECT provider_session_id FROM provider_sessions")}
    validate(data, existing_ids, existing_names, existing_tabs, existing_sessions)
    cols = ", ".join(_AGENT_FIELDS)
    marks = ", ".join("?" * len(_AGENT_FIELDS))
    now = now_iso()
    with app.store.write() as c:
        c.execute("PRAGMA defer_foreign_keys = ON")  # links may point forward in the file
        for t in data["tabs"]:
            c.execute("INSERT INTO tabs (id, name, position, layout, focus) VALUES (?,?,?,?,?)",
                      (t["id"], t["name"], t["position"],
                       json.dumps(t["layout"]) if t["layout"] else None, t["focus"]))
        for a in data["agents"]:
            values = [a[f] for f in _AGENT_FIELDS]
            values[_AGENT_FIELDS.index("args")] = json.dumps(a["args"])
            values[_AGENT_FIELDS.index("dangerous")] = int(bool(a["dangerous"]))
            c.execute(f"INSERT INTO agents ({cols}) VALUES ({marks})", values)
            for sid in a["session_history"]:  # rowid keeps their order
                c.execute("INSERT INTO provider_sessions VALUES (?, ?, ?)", (sid, a["id"], now))
        for position, agent_id in enumerate(data["pins"]):
            c.execute("INSERT INTO pins (agent_id, position) VALUES (?, ?)", (agent_id, position))
        for key, value in data["settings"].items():
            c.execute("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", (key, str(value)))
    return len(data["agents"])
