"""Supervision without a daemon: tmux's pane-died hook runs `roost _supervise PANE` in the
background. This shell gathers the facts (the pane, the agent, its exit history, the screen the
program left), asks core.supervision what to do, and does it: log the exit, mark a conversation
the CLI could not resume, restart after the backoff, or mark a crash loop `failed`, which only
the user clears (a wake).
"""

from __future__ import annotations

from datetime import datetime

from roost.core import supervision as sv
from roost.core.errors import HeldStopped, RoostError
from roost.core.model import RESTART_POLICIES, Agent
from roost.core.observation import covering
from roost.core.reconcile import agent_panes
from roost.core.service import SESSION as SERVICE_SESSION
from roost.ops.context import App
from roost.providers import traits
from roost.store import intents
from roost.system import locks

HISTORY = 50  # events read back for the crash-loop window: far more than it can hold


def on_pane_died(app: App, pane_id: str) -> str:
    """What happened, as a word (for tests and the log)."""
    pane = next((p for p in app.tmux.list_panes() if p.pane_id == pane_id), None)
    if pane is not None and pane.session_name == SERVICE_SESSION:
        from roost.ops import service

        return service.on_died(app, pane)
    agent = app.store.get_by_id(pane.agent_id) if pane is not None and pane.agent_id else None
    if pane is None or agent is None:
        return "ignored"
    # A kill, hibernate or rm of this agent may be under way: wait for it, then look again, so
    # its outcome (the store's intent) decides, not the window tag it set first.
    with locks.hold(app.paths.locks, agent.name):
        pane = next((p for p in app.tmux.list_panes() if p.pane_id == pane_id), None)
        agent = app.store.get_by_id(agent.id)
        state = "" if pane is None else app.tmux.window_option(pane.window_id, "@roost_state")
        skipped = sv.triage(pane, agent, state, stopping(app, agent))
        if skipped is not None or pane is None or agent is None:
            return skipped or "ignored"
        if state == "stopped":  # a stale tag (a kill cut off): the keeper should say "exited"
            app.tmux.set_window_option(pane.window_id, "@roost_state", "running")
            app.tmux.refresh_keeper(pane.session_id)
    code = pane.dead_status
    history = exits(app, agent)
    app.store.log(agent, "exited", exit_code=code)
    app.store.update(agent.id, last_exit=code)
    screen = app.tmux.capture(pane.pane_id, 200)  # the message may sit above many blank rows
    policy = sv.Policy(agent.restart_policy)
    decision = sv.decide(
        history, policy, code, screen, app.clock.now(), traits.of(agent.provider).conversation_gone
    )
    if decision.action == "unresumable":
        app.store.update(
            agent.id,
            last_error=(
                f"unresumable: the {agent.provider} conversation "
                f"{agent.provider_session_id} was not "
                f"found; `roost wake {agent.name} --fresh` starts a new one"
            ),
        )
        app.store.log(agent, "unresumable", session_id=agent.provider_session_id)
        return "unresumable"
    if decision.action == "failed":
        app.store.update(
            agent.id,
            last_error=(
                f"crash loop: {decision.failures} failed starts within {policy.window:.0f} s "
                f"(last exit {code}); `roost wake {agent.name}` clears it"
            ),
        )
        app.store.log(agent, "failed", failures=decision.failures)
        return "failed"
    if decision.action == "exited":
        return "exited"
    # imported only for a restart, before the wait: the hook's other outcomes skip its imports
    from roost.ops import lifecycle

    app.clock.sleep(decision.delay)
    with locks.hold(app.paths.locks, agent.name):
        current = app.store.get_by_id(agent.id)
        pane_now = agent_panes(app.tmux.list_panes()).get(agent.id) if current else None
        if current is None or not sv.still_wanted(current, pane_now, stopping(app, current)):
            return "left"  # the user acted meanwhile
    try:  # its next exit comes back here; a kill between the check and the wake wins
        lifecycle.wake(app, current.name, hold=False, unless_stopped=True)
    except HeldStopped:
        return "left"
    app.store.log(current, "restarted", after_failures=decision.failures)
    return "restarted"


def stopping(app: App, agent: Agent | None) -> bool:
    """Whether a stop roost recorded before its signal (store/intents.py) covers the agent's
    current launch: its exit is that stop's, not one to log, alert or restart."""
    if agent is None:
        return False
    stops = intents.active(app.store.conn, app.store.now_iso())
    return covering(stops, agent.id, agent.launches) is not None


def exits(app: App, agent: Agent) -> list[sv.Exit]:
    """The agent's recent exits from its event log, oldest first."""
    return [
        sv.Exit(datetime.fromisoformat(e.at), e.number("exit_code"))
        for e in app.store.events(agent.id, limit=HISTORY)
        if e.kind == "exited"
    ]


def set_restart_policy(app: App, name: str, policy: str) -> None:
    """`roost policy NAME POLICY`: what this supervisor does at the agent's next failed exit."""
    if policy not in RESTART_POLICIES:
        raise RoostError(f"the restart policy must be one of {', '.join(RESTART_POLICIES)}", code=2)
    app.store.update(app.store.require(name).id, restart_policy=policy)
