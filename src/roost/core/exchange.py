"""The workspace exchange format of `roost export` / `roost import`: versioned JSON that carries
every field of every record, so a round trip loses nothing; and the check of a file before an
import writes anything. Pure: the store reads and writes the rows (store/exchange.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from roost.core import workspace as ws
from roost.core.errors import RoostError
from roost.core.model import Agent
from roost.core.names import name_problem

FORMAT = "roost-workspace"
VERSION = 1
AGENT_FIELDS = tuple(f.name for f in dataclasses.fields(Agent))


@dataclass(frozen=True, slots=True)
class Taken:
    """What the database already holds, which an import must not reuse."""

    ids: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    tabs: frozenset[str] = frozenset()  # tab names
    sessions: frozenset[str] = frozenset()  # provider session ids, lineage included


def refused(message: str) -> RoostError:
    return RoostError(f"import refused, nothing changed: {message}", code=2)


def validate(data: Any, taken: Taken, providers: Collection[str]) -> None:
    """Raise a clear error for the first thing wrong with `data` (parsed JSON)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise refused(f"not a roost workspace export (format must be {FORMAT!r})")
    if data.get("version") != VERSION:
        raise refused(f"unsupported export version {data.get('version')!r} "
                      f"(this roost reads {VERSION})")
    for key, kind in (("tabs", list), ("agents", list), ("pins", list), ("settings", dict)):
        if not isinstance(data.get(key), kind):
            raise refused(f"{key!r} must be a {kind.__name__}")
    ids = _check_agents(data["agents"], taken, providers)
    tiled, tab_ids = _check_tabs(data["tabs"], ids, taken)
    _check_placements(data["agents"], ids, tiled, tab_ids)
    for pin in data["pins"]:
        if pin not in ids:
            raise refused(f"pin {pin!r} is not an agent of this file")
    if len(set(data["pins"])) != len(data["pins"]):
        raise refused("an agent is pinned twice")


def _check_agents(agents: list[Any], taken: Taken, providers: Collection[str]) -> set[str]:
    """Each record on its own, and against the database; returns the file's agent ids."""
    ids: set[str] = set()
    names: set[str] = set()
    sessions: set[str] = set()
    for i, a in enumerate(agents):
        where = f"agents[{i}]"
        if not isinstance(a, dict) or set(a) != set(AGENT_FIELDS) | {"session_history"}:
            raise refused(f"{where} must have exactly the fields {sorted(AGENT_FIELDS)} "
                          "and session_history")
        if not isinstance(a["id"], str) or not a["id"] or a["id"] in ids | taken.ids:
            raise refused(f"{where}: id {a['id']!r} is missing or already used")
        if not isinstance(a["name"], str) or (problem := name_problem(a["name"])):
            raise refused(f"{where}: bad name: "
                          f"{problem if isinstance(a['name'], str) else a['name']}")
        if a["name"] in names | taken.names:
            raise refused(f"{where}: agent name {a['name']!r} already exists")
        if a["provider"] not in providers:
            raise refused(f"{where}: unknown provider {a['provider']!r}")
        if a["placement"] not in (*ws.PLACEMENTS, None):
            raise refused(f"{where}: placement must be tile, detached, buried or null")
        if not isinstance(a["args"], list) or not all(isinstance(x, str) for x in a["args"]):
            raise refused(f"{where}: args must be a list of strings")
        history = a["session_history"]
        if not isinstance(history, list) or not all(isinstance(s, str) for s in history):
            raise refused(f"{where}: session_history must be a list of strings")
        for sid in history + ([a["provider_session_id"]] if a["provider_session_id"] else []):
            if sid in taken.sessions or (sid in sessions and sid not in history):
                raise refused(f"{where}: provider session {sid} already belongs to another agent")
        sessions.update(history)
        ids.add(a["id"])
        names.add(a["name"])
    return ids


def _check_tabs(tabs: list[Any], ids: set[str], taken: Taken) -> tuple[dict[str, str], set[str]]:
    """Each tab and its tree; returns which tab tiles each agent, and the file's tab ids."""
    tab_ids: set[str] = set()
    tiled: dict[str, str] = {}
    for i, t in enumerate(tabs):
        where = f"tabs[{i}]"
        if not isinstance(t, dict) or set(t) != {"id", "name", "position", "layout", "focus"}:
            raise refused(f"{where} must have id, name, position, layout, focus")
        if not isinstance(t["name"], str) or name_problem(t["name"]) or t["name"] in taken.tabs:
            raise refused(f"{where}: bad or existing tab name {t['name']!r}")
        if not isinstance(t["position"], int):
            raise refused(f"{where}: position must be an integer")
        try:
            ws.validate_tree(t["layout"], where + ".layout")
        except ws.LayoutError as exc:
            raise refused(str(exc)) from None
        for agent_id in ws.leaves(t["layout"]):
            if agent_id not in ids or agent_id in tiled:
                raise refused(f"{where}: tile {agent_id} is not an agent of this file, "
                              "or tiled twice")
            tiled[agent_id] = t["id"]
        if t["focus"] is not None and t["focus"] not in ws.leaves(t["layout"]):
            raise refused(f"{where}: focus must be one of its tiles")
        tab_ids.add(t["id"])
    return tiled, tab_ids


def _check_placements(agents: list[Any], ids: set[str], tiled: dict[str, str],
                      tab_ids: set[str]) -> None:
    """Placements agree with the tabs, and every link stays inside the file."""
    for i, a in enumerate(agents):
        where = f"agents[{i}] ({a['name']})"
        if (a["placement"] == ws.TILE) != (a["id"] in tiled):
            raise refused(f"{where}: placement tile must match the tabs' layouts")
        if a["placement"] == ws.TILE and a["tab_id"] != tiled[a["id"]]:
            raise refused(f"{where}: tab_id does not name the tab that tiles it")
        if a["tab_id"] is not None and a["tab_id"] not in tab_ids:
            raise refused(f"{where}: tab_id {a['tab_id']} is not a tab of this file")
        for link in ("linked_parent", "orchestration_parent", "orchestration_root",
                     "buried_sibling"):
            if a[link] is not None and a[link] not in ids:
                raise refused(f"{where}: {link} {a[link]} is not an agent of this file")
