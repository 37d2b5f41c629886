"""What roost learns from the agent CLIs' own files: the session ids of CLIs that choose their own
(found in their files), and the hook events of CLIs that report by hooks (the current session id,
the transcript, whether a conversation exists).

Import-light at the top (the store, the provider classes and the App only inside the functions
that write): `roost ls`'s fast path asks `awaits_session_id` and `unread_hook_events` to know
whether there is something to learn first.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from roost.core import lineage
from roost.core.observation import epoch
from roost.core.pane import agent_panes
from roost.providers import hooks, traits
from roost.tmux.protocol import TmuxError, TmuxTimeout

if TYPE_CHECKING:
    from collections.abc import Sequence

    from roost.core.model import Agent
    from roost.core.pane import Pane
    from roost.ops.context import App
    from roost.providers.base import Sighting


SCREEN_LINES = 50  # of a dead pane: what a CLI printed on its way out
CLOCK_STEP = 1.0  # seconds a hook line may be stamped before its launch without a warning


def awaits_session_id(agent: Agent) -> bool:
    """Its CLI chooses its own session id, it was started, and roost has not found the id yet."""
    return (
        traits.of(agent.provider).session_id == traits.DISCOVERED
        and not agent.provider_session_id
        and agent.launches > 0
    )


def unread_hook_events(roost_home: str, agent: Agent) -> bool:
    """Its hook log holds events the record has not taken in yet (apply_hook_log would)."""
    return (
        traits.of(agent.provider).hooks
        and hooks.size(hooks.log_path(roost_home, agent.id)) != agent.hook_offset
    )


def launch_token(app: App, agent_id: str) -> str | None:
    """The agent's current launch token (None: launched before tokens): which hook lines are
    its process's, for every reader of its hook log (hooks.read_since)."""
    launch = app.store.launch(agent_id)
    return launch[0] if launch is not None else None


def stop_message(app: App, agent_id: str, offset: int = 0, this_turn: bool = False) -> str | None:
    """The last Stop hook's `last_assistant_message` in the agent's current launch's log lines
    past byte `offset`: its last answer. `this_turn`: only if no prompt came after it (a turn
    under way, or one that said nothing, has none)."""
    log = hooks.log_path(str(app.paths.home), agent_id)
    events, _ = hooks.read_since(log, offset, launch_token(app, agent_id))
    for _, event, payload in reversed(events):
        message = payload.get("last_assistant_message")
        if event == "Stop" and isinstance(message, str):
            return message
        if this_turn and event == "UserPromptSubmit":
            return None
    return None


def learn_session_ids(app: App, agents: list[Agent], panes: Sequence[Pane] | None = None) -> None:
    """CLIs that choose their own session id: find it from what the agent's own process shows
    (the files its tree holds open while it runs, its pane's last screen once it exited) and
    record it. `panes` is tmux's listing when the caller has one (else it is asked for, only
    when some agent awaits its id)."""
    waiting = [a for a in agents if awaits_session_id(a)]
    if not waiting:
        return
    from roost.providers import base as prov
    from roost.store.db import SessionIdTaken

    by_id = agent_panes(app.tmux.list_panes() if panes is None else panes)
    for agent in waiting:
        seen = sighting(app, by_id.get(agent.id))
        for candidate in prov.get(agent.provider).discover_session_id(agent, app.environ, seen):
            try:
                app.store.set_provider_session_id(agent.id, candidate)
                break
            except SessionIdTaken:
                continue  # another agent owns it; try the next one


def sighting(app: App, pane: Pane | None) -> Sighting:
    """What an agent's pane shows of its process: the open files of the process tree that runs
    in it, or the screen it left when it exited."""
    from roost.providers.base import Sighting

    if pane is None:
        return Sighting()
    if pane.live_pid is not None:
        return Sighting(open_files=tuple(app.procs.open_files(pane.live_pid)))
    try:
        return Sighting(screen=app.tmux.capture(pane.pane_id, SCREEN_LINES))
    except TmuxTimeout:
        raise
    except TmuxError:
        return Sighting()  # the dead pane went meanwhile


def apply_hook_log(app: App, agent: Agent) -> None:
    """Fold new hook events into the record: the current provider session id (it changes on
    /clear and compaction; the old ones stay as lineage, with why they changed), the transcript
    path, whether a conversation exists. Only events of the agent's current process count
    (core/lineage.py); a new id offered by any other is logged as ignored, with the reason."""
    if not traits.of(agent.provider).hooks:
        return
    from roost.store.db import SessionIdTaken

    path = hooks.log_path(str(app.paths.home), agent.id)
    entries, offset = hooks.read_entries_since(path, agent.hook_offset)
    if offset == agent.hook_offset:
        return
    launch = app.store.launch(agent.id)
    token, launch_at = launch if launch is not None else (None, epoch(agent.started_at))
    session_id, transcript, seen = (
        agent.provider_session_id,
        agent.transcript_path,
        agent.conversation_seen,
    )
    agent_cwd = os.path.realpath(agent.cwd)  # the folder itself, as its CLI's getcwd says
    passed_over: dict[str, int] = {}  # why, for events that offered nothing to adopt
    behind = 0.0  # the most a line of this launch is stamped before it: a clock step
    for at, event, payload, line_token in entries:
        if event == hooks.LAUNCH:
            continue
        sid = payload.get("session_id")
        new_id = event == "SessionStart" and isinstance(sid, str) and sid and sid != session_id
        why = lineage.foreign(
            token=line_token,
            at=at,
            cwd=_real(payload.get("cwd")),
            launch_token=token,
            launch_at=launch_at,
            agent_cwd=agent_cwd,
        )
        if why is not None:
            if new_id:
                app.store.log(
                    agent,
                    "session-ignored",
                    session_id=sid,
                    source=payload.get("source"),
                    reason=why,
                )
            else:
                passed_over[why] = passed_over.get(why, 0) + 1
            continue
        behind = max(behind, lineage.clock_behind(at, launch_at))
        path_given = payload.get("transcript_path")
        if new_id and isinstance(sid, str):
            reason = str(payload.get("source") or "hook")
            try:
                app.store.set_provider_session_id(
                    agent.id,
                    sid,
                    reason,
                    transcript_path=path_given if isinstance(path_given, str) else None,
                )
                app.store.log(agent, "session", session_id=sid, previous=session_id, reason=reason)
                session_id, transcript = sid, path_given if isinstance(path_given, str) else None
            except SessionIdTaken:
                app.store.log(agent, "session-refused", session_id=sid)
        if isinstance(path_given, str) and sid == session_id:
            transcript = path_given
        if event == "UserPromptSubmit":
            seen = True
    if passed_over:
        app.store.log(
            agent,
            "hook-events-ignored",
            count=sum(passed_over.values()),
            reason="; ".join(passed_over),
        )
    if behind > CLOCK_STEP and token is not None:
        _warn_clock_step(app, agent, behind)
    app.store.update(
        agent.id,
        hook_offset=offset,
        transcript_path=transcript,
        conversation_seen=seen,
        last_active_at=app.store.now_iso(),
    )


def _real(cwd: object) -> object:
    """A cwd a hook line reports, with its symlinks and dots resolved (a path string, else as
    it is): where it really is decides whether it is the agent's, not how it is spelled."""
    return os.path.realpath(cwd) if isinstance(cwd, str) and cwd.startswith("/") else cwd


def _warn_clock_step(app: App, agent: Agent, behind: float) -> None:
    """Log once per launch that the agent's clock is behind roost's: its lines were taken (their
    launch token proves them), but times compared across the two clocks will be off."""
    for event in reversed(app.store.events(agent.id, limit=100)):
        if event.kind == "clock-step":
            return
        if event.kind == "started":
            break
    app.store.log(
        agent,
        "clock-step",
        behind=round(behind),
        reason="its hook lines are stamped before its launch: the agent's clock is "
        "behind roost's (taken all the same: their launch token proves them)",
    )
