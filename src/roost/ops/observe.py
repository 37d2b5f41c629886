"""The full status refresh: read new hook events, ask tmux once (plus one chained capture for the
agents whose status needs their screen), classify, and record what changed.

Cost with N agents: one `list-panes -a`, plus one chained capture of the agents whose status
needs their screen: two tmux calls, whatever N is, up to ~300 such screens (tmux limits one
command list to ~16 KiB; beyond that the capture takes a call per ~300). A hook log is read from
its last offset.
"""

from __future__ import annotations

import json
import time

from roost.cli import fast as lsfast
from roost.ops.context import App
from roost.ops.learn import apply_hook_log, learn_session_ids
from roost.store.db import now_iso


def refresh(app: App) -> list[dict]:
    agents = app.store.agents()
    learn_session_ids(app, agents)
    for agent in agents:
        apply_hook_log(app, agent)
    rows = app.tmux.list_pane_rows()
    items = lsfast.collect(app.store.conn, lsfast.agent_panes(rows))
    home = str(app.paths.home)
    hook_by_id = {i["id"]: lsfast.hook_status(i, home) for i in items if i["alive"]}
    screens = app.tmux.capture_many(lsfast.screens_needed(items, hook_by_id), lsfast.MARKER)
    overrides = app.settings.get("status", {}).get("patterns")
    lsfast.add_status(items, hook_by_id, screens, overrides, time.time())
    changed = [i for i in items if i["status_changed"]]
    if changed:
        stamp = now_iso()
        with app.store.write() as c:
            for item in changed:
                c.execute("UPDATE agents SET status = ?, status_source = ?, status_since = ? "
                          "WHERE id = ?", (item["status"], item["status_source"], stamp, item["id"]))
                detail = {"status": item["status"], "previous": item["stored_status"],
                          "source": item["status_source"]}
                if item["status"] == "exited":
                    detail["exit_code"] = item["exit_code"]
                c.execute("INSERT INTO events (agent_id, agent_name, at, kind, detail) "
                          "VALUES (?, ?, ?, 'status', ?)",
                          (item["id"], item["name"], stamp, json.dumps(detail)))
                item["status_since"] = stamp
    return items
