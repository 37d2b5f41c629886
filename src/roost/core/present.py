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
               "restart_policy", "status_reason")
TABLE_REASON = 48  # characters of an error's reason in the table (the JSON has all of it)


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
        "status_reason": o.status_reason,
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
    if o.status_reason:
        reason = o.status_reason
        if len(reason) > TABLE_REASON:
            reason = reason[:TABLE_REASON - 1] + "…"
        return f"{o.status}: {reason}"
    return o.status or "unknown"


def table(found: list[Observation]) -> str:
    if not found:
        return "no agents yet: roost spawn NAME --cwd DIR\n"
    rows = [("NAME", "STATUS", "PROVIDER", "PLACE", "PID", "HOME", "CWD")]
    for o in found:
        a = o.agent
        name = ("* " if a.pinned else "") + a.name
        rows.append((name, status_text(o), a.provider, place(o), str(o.pid or "-"), a.home,
                     a.cwd))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return "".join(
        "  ".join(cell.ljust(w) for cell, w in zip(r[:-1], widths)) + "  " + r[-1] + "\n"
        for r in rows)


def render(found: list[Observation], as_json: bool) -> str:
    if as_json:
        import json

        return json.dumps([agent_json(o) for o in found]) + "\n"
    return table(found)
