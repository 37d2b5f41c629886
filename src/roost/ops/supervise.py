"""Supervision without a daemon: tmux's pane-died hook runs `roost _supervise PANE` in the
background. It logs the exit, spots a conversation the CLI could not resume, and applies the
agent's restart policy: `on-failure` restarts after 1 s, 2 s, 4 s...; more than MAX_FAILURES
failed starts within WINDOW seconds put the agent in `failed`, which only the user clears (a wake).
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

from roost.ops import lifecycle
from roost.system import locks
from roost.ops.context import App
from roost.core.model import INTENT_HIBERNATED, INTENT_STOPPED, Agent
from roost.core.reconcile import agent_panes
from roost.providers import traits

MAX_FAILURES = 3
WINDOW = 60.0


def recent_failures(app: App, agent: Agent, now: datetime) -> int:
    since = (now - timedelta(seconds=WINDOW)).isoformat(timespec="milliseconds")
    return sum(1 for e in app.store.events(agent.id, limit=50)
               if e["kind"] == "exited" and e.get("exit_code") not in (0, None) and e["at"] >= since)


def backoff(failures: int) -> float:
    """1 s, 2 s, 4 s... for the 1st, 2nd, 3rd failure."""
    return float(2 ** max(0, failures - 1))


def on_pane_died(app: App, pane_id: str, sleep=time.sleep) -> str:  # noqa: ANN001 - injectable
    """What happened, as a word (for tests and the log)."""
    pane = next((p for p in app.tmux.list_panes() if p.pane_id == pane_id), None)
    if pane is None or not pane.agent_id or not pane.dead:
        return "ignored"
    agent = app.store.get_by_id(pane.agent_id)
    if agent is None:
        return "ignored"
    if _window_state(app, pane.window_id) == "stopped":
        return "killed"  # roost kill/hibernate/rm: they log themselves
    code = pane.dead_status
    app.store.log(agent, "exited", exit_code=code)
    app.store.update(agent.id, last_exit=code)
    screen = app.tmux.capture(pane.pane_id, 200)  # the message may sit above many blank rows
    # what the CLI prints when the conversation it was asked to resume does not exist
    if any(marker in screen for marker in traits.of(agent.provider).conversation_gone):
        app.store.update(agent.id, last_error=(
            f"unresumable: the {agent.provider} conversation {agent.provider_session_id} was not "
            f"found; `roost wake {agent.name} --fresh` starts a new one"))
        app.store.log(agent, "unresumable", session_id=agent.provider_session_id)
        return "unresumable"
    if agent.restart_policy != "on-failure" or code == 0:
        return "exited"
    failures = recent_failures(app, agent, datetime.now(timezone.utc))
    if failures > MAX_FAILURES:
        app.store.update(agent.id, last_error=(
            f"crash loop: {failures} failed starts within {WINDOW:.0f} s (last exit {code}); "
            f"`roost wake {agent.name}` clears it"))
        app.store.log(agent, "failed", failures=failures)
        return "failed"
    sleep(backoff(failures))
    with locks.hold(app.paths.locks, agent.name):
        agent = app.store.get_by_id(agent.id)
        current = agent_panes(app.tmux.list_panes()).get(agent.id) if agent else None
        if agent is None or agent.intent in (INTENT_STOPPED, INTENT_HIBERNATED) or \
                (current is not None and not current.dead):
            return "left"  # the user acted meanwhile
    lifecycle.wake(app, agent.name)
    app.store.log(agent, "restarted", after_failures=failures)
    return "restarted"


def _window_state(app: App, window_id: str) -> str:
    try:
        return app.tmux.run("display-message", "-p", "-t", window_id, "#{@roost_state}").strip()
    except Exception:  # noqa: BLE001 - a window that vanished: treat as not stopped by roost
        return ""
