"""How agents look in `roost ls`: a table for people, a stable JSON shape for scripts.
Import-light (json only when asked for): it runs on `roost ls`'s fast path."""

from __future__ import annotations

# The JSON contract: fields are only ever added, never renamed.
JSON_FIELDS = ("name", "id", "provider", "provider_session_id", "cwd", "home", "state", "pid",
               "dangerous", "created_at", "started_at", "exit_code", "args", "placement", "tab",
               "pinned", "linked_parent", "orchestration_parent", "orchestration_root",
               "last_active_at", "last_error", "status", "status_source", "status_since",
               "restart_policy")


def agent_json(item: dict) -> dict:
    out = {k: item[k] for k in JSON_FIELDS if k not in ("args", "dangerous", "pinned")}
    import json

    out["args"] = json.loads(item["args"]) if isinstance(item["args"], str) else list(item["args"])
    out["dangerous"] = bool(item["dangerous"])
    out["pinned"] = bool(item["pinned"])
    return {k: out[k] for k in JSON_FIELDS}


def place(item: dict) -> str:
    if item["placement"] == "tile":
        return f"tab {item['tab']}"
    if item["placement"] == "detached":
        return "parked"
    return item["placement"] or "-"


def status_text(item: dict) -> str:
    if item["status"] in ("exited", "stopped") and item["exit_code"] is not None:
        return f"{item['status']} ({item['exit_code']})"
    return item["status"]


def table(items: list[dict]) -> str:
    if not items:
        return "no agents yet: roost spawn NAME --cwd DIR\n"
    rows = [("NAME", "STATUS", "PROVIDER", "PLACE", "PID", "HOME", "CWD")]
    for it in items:
        name = ("* " if it["pinned"] else "") + it["name"]
        rows.append((name, status_text(it), it["provider"], place(it), str(it["pid"] or "-"),
                     it["home"], it["cwd"]))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return "".join(
        "  ".join(cell.ljust(w) for cell, w in zip(r[:-1], widths)) + "  " + r[-1] + "\n"
        for r in rows)


def render(items: list[dict], as_json: bool) -> str:
    if as_json:
        import json

        return json.dumps([agent_json(i) for i in items]) + "\n"
    return table(items)
