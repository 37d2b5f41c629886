"""What roost learns from the agent CLIs' own files: codex and gemini session ids (they choose
their own), and claude's hook events (its current session id, transcript, whether a
conversation exists)."""

from __future__ import annotations

from roost.providers import hooks
from roost.providers import base as prov
from roost.ops.context import App
from roost.core.model import Agent
from roost.store.db import SessionIdTaken, now_iso


def _learnable(agents: list[Agent]) -> list[Agent]:
    return [a for a in agents
            if not a.provider_session_id and a.launches and a.provider in ("codex", "gemini")]


def learn_session_ids(app: App, agents: list[Agent]) -> None:
    """Providers that choose their own session id (codex, gemini) leave it in their files."""
    for agent in _learnable(agents):
        for candidate in prov.get(agent.provider).discover_session_id(agent, app.environ):
            try:
                app.store.set_provider_session_id(agent.id, candidate)
                break
            except SessionIdTaken:
                continue  # another agent in the same cwd owns it; try the next one


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
