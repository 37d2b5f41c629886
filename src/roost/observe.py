"""The full status refresh: read new hook events, ask tmux once (plus one chained capture for the
agents whose status needs their screen), classify, and record what changed.

Cost with N agents: two tmux calls at most, whatever N is; a hook log is read from its last offset.
"""

from __future__ import annotations

import json
import time

from roost import hooks, lsfast
from roost.app import App
from roost.homes import learn_session_ids
from roost.model import Agent
from roost.store import SessionIdTaken, now_iso


def apply_hook_log(app: App, agent: Agent) -> None:
    """Fold new hook events into the record: the current provider session id (it changes on
    /clear and compaction; the old ones stay as lineage), the transcript path, whether a
    conversation exists."""
    if agent.provider != "claude":
        return
    path = hooks.log_path(str(app.paths.home), agent.id)
    events, offset = hooks.read_since(path, agent.hook_offset)
    if offset == agent.hook_offset:
        return
    session_id, transcript, seen = agent.provider_session_id, agent.transcript_path, \
        agent.conversation_seen
    for _at, event, payload in events:
        sid = payload.get("session_id")
        if event == "SessionStart" and isinstance(sid, str) and sid and sid != session_id:
            try:
                app.store.set_provider_session_id(agent.id, sid)
                app.store.log(agent, "session", session_id=sid, previous=session_id,
                              source=payload.get("source"))
                session_id = sid
            except SessionIdTaken:
                app.store.log(agent, "session-refused", session_id=sid)
        if isinstance(payload.get("transcript_path"), str) and sid == session_id:
            transcript = payload["transcript_path"]
        if event == "UserPromptSubmit":
            seen = True
    app.store.update(agent.id, hook_offset=offset, transcript_path=transcript,
                     conversation_seen=seen, last_active_at=now_iso())


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
