"""How agents look in `roost ls`: a table for people, a stable JSON shape for scripts."""

from __future__ import annotations

from roost.model import AgentView


def agent_json(v: AgentView) -> dict:
    a = v.agent
    return {
        "name": a.name,
        "id": a.id,
        "provider": a.provider,
        "provider_session_id": a.provider_session_id,
        "cwd": a.cwd,
        "home": a.home,
        "state": v.state,
        "pid": v.pid,
        "dangerous": a.dangerous,
        "created_at": a.created_at,
        "started_at": a.started_at,
        "exit_code": v.pane.dead_status if v.pane is not None and v.pane.dead else a.last_exit,
        "args": list(a.args),
    }


def table(found: list[AgentView]) -> str:
    if not found:
        return "no agents yet: roost spawn NAME --cwd DIR\n"
    rows = [("NAME", "STATE", "PROVIDER", "PID", "HOME", "CWD")]
    for v in found:
        state = v.state
        if v.state == "stopped" and v.pane is not None and v.pane.dead_status is not None:
            state = f"stopped ({v.pane.dead_status})"
        rows.append((v.agent.name, state, v.agent.provider, str(v.pid or "-"), v.agent.home,
                     v.agent.cwd))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return "".join(
        "  ".join(cell.ljust(w) for cell, w in zip(r[:-1], widths)) + "  " + r[-1] + "\n"
        for r in rows)
