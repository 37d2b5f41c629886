"""How agents look in `roost ls`: a table for people, a stable JSON shape for scripts.
Import-light (json only when asked for): it runs on `roost ls`'s fast path."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: the typing module is not imported at run time
if TYPE_CHECKING:
    from roost.core.observation import Observation

# The JSON contract: fields are only ever added, never renamed.
JSON_FIELDS = ("name", "id", "provider", "provider_session_id", "cwd", "home", "state", "pid",
               "dangerous", "created_at", "started_at", "exit_code", "args", "placement", "tab",
               "pinned", "linked_parent", "orchestration_parent", "orchestration_root",
               "last_active_at", "last_error", "status", "status_source", "status_since",
               "restart_policy")


def agent_json(o: Observation) -> dict[str, object]:
    """One agent for scripts: JSON_FIELDS, in that order."""
    import json

    a = o.agent
    return {
        "name": a.name, "id": a.id, "provider": a.provider,
        "provider_session_id": a.provider_session_id, "cwd": a.cwd, "home": a.home,
        "state": o.state, "pid": o.pid, "dangerous": a.dangerous, "created_at": a.created_at,
        "started_at": a.started_at, "exit_code": o.exit_code, "args": json.loads(a.args_json),
        "placement": a.placement, "tab": a.tab, "pinned": a.pinned,
        "linked_parent": a.linked_parent, "orchestration_parent": a.orchestration_parent,
        "orchestration_root": a.orchestration_root, "last_active_at": a.last_active_at,
        "last_error": a.last_error, "status": o.status, "status_source": o.status_source,
        "status_since": o.status_since, "restart_policy": a.restart_policy,
    }


def place(o: Observation) -> str:
    placement = o.agent.placement
    if placement == "tile":
        return f"tab {o.agent.tab}"
    if placement == "detached":
        return "parked"
    return placement or "-"


def status_text(o: Observation) -> str:
    if o.status in ("exited", "stopped") and o.exit_code is not None:
        return f"{o.status} ({o.exit_code})"
    return o.status or "unknown"


def tree_order(found: list[Observation]) -> list[tuple[Observation, int]]:
    """Agents with their depth, each orchestration child right under its parent (creation
    order among siblings); an agent whose parent is gone is a root."""
    names = {o.agent.name for o in found}
    children: dict[str | None, list[Observation]] = {}
    for o in found:
        parent = o.agent.orchestration_parent
        children.setdefault(parent if parent in names else None, []).append(o)
    ordered: list[tuple[Observation, int]] = []
    seen: set[str] = set()

    def walk(o: Observation, depth: int) -> None:
        if o.agent.name in seen:
            return
        seen.add(o.agent.name)
        ordered.append((o, depth))
        for child in children.get(o.agent.name, []):
            walk(child, depth + 1)

    for root in children.get(None, []):
        walk(root, 0)
    for o in found:  # a cycle has no root: still listed
        walk(o, 0)
    return ordered


def table(found: list[Observation], tree: bool = False) -> str:
    if not found:
        return "no agents yet: roost spawn NAME --cwd DIR\n"
    rows = [("NAME", "STATUS", "PROVIDER", "PLACE", "PID", "HOME", "CWD")]
    for o, depth in tree_order(found) if tree else [(o, 0) for o in found]:
        a = o.agent
        name = "  " * depth + ("└ " if depth else "") + ("* " if a.pinned else "") + a.name
        rows.append((name, status_text(o), a.provider, place(o), str(o.pid or "-"), a.home,
                     a.cwd))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return "".join(
        "  ".join(cell.ljust(w) for cell, w in zip(r[:-1], widths)) + "  " + r[-1] + "\n"
        for r in rows)


def render(found: list[Observation], as_json: bool, tree: bool = False) -> str:
    if as_json:
        import json

        ordered = [o for o, _ in tree_order(found)] if tree else found
        return json.dumps([agent_json(o) for o in ordered]) + "\n"
    return table(found, tree)
