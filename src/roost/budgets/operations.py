"""Budgets (issue 23 part 5): a token or cost budget per agent or per orchestration tree, and
the machine's live-agent budget (`[budget] max_live`).

`enforce` runs at each turn's end in the roost service (COMPONENT; every launch, `watch` and
the TUI start the service) and when `roost policy --budget` sets a budget: it reads what the
session files gained (usage/operations.py), then parks (hibernates) each
agent whose budget is reached, but only once its turn is over (status `idle`, as just
observed) and only after a turn it took since its launch: a working agent is parked at a later
pass, after its turn, and a woken one gets its turn first (its start's idle is no turn's end).
Its parent hears of it (the notices of ops/notify.py), the person gets an alert
(alerts/operations.py delivers it), and `roost wake` says why it was parked. Beyond `max_live`
running agents, the idle longest are hibernated, never one a person is attached to or one not
idle; they wake on use as today."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence

from roost.budgets import rules as rule
from roost.core import notify as notice_rule
from roost.core.clock import Clock
from roost.core.errors import RoostError
from roost.core.model import Agent
from roost.core.observation import Observation
from roost.core.status import Status
from roost.ops.context import App
from roost.ops.service import Component
from roost.store import alerts as outbox
from roost.store import events as event_log
from roost.store import orchestration as queue
from roost.store import usage as rows
from roost.store.events import StatusChange
from roost.usage import operations as usage
from roost.usage.rules import summed

PARKED = "parked"  # the notice's and the alert's word


def set_budget(app: App, name: str, given: str, tree: bool) -> str:
    """Set agent NAME's budget (`tree`: its orchestration tree's); what it now is, in words."""
    tokens, dollars = rule.parse(given)
    agent = app.store.require(name)
    with app.store.write() as c:
        rows.set_budget(c, agent.id, tree, tokens, dollars)
    whose = f"{name}'s orchestration tree" if tree else name
    return f"{whose}: budget {rule.shown(tokens, dollars)}"


def spent(app: App, agents: Sequence[Agent]) -> rule.Spent:
    """What the agents used in all, by the stored totals."""
    tokens, cost, unpriced = summed(usage.report(app, agents, None))
    return rule.Spent(tokens.total, None if unpriced else cost)


def reasons(app: App, everyone: Sequence[Agent]) -> dict[str, str]:
    """Agent id -> why its budget (or its tree's) is reached, for every agent with one."""
    by_id = {a.id: a for a in everyone}
    found: dict[str, str] = {}
    for agent_id, tokens, dollars, tree_tokens, tree_dollars in rows.budgets(app.store.conn):
        agent = by_id.get(agent_id)
        if agent is None:
            continue
        own = rule.reached(spent(app, [agent]), tokens, dollars)
        if own:
            found.setdefault(agent.id, own)
        if tree_tokens is None and tree_dollars is None:
            continue
        members = usage.tree_of(app, agent)
        why = rule.reached(spent(app, members), tree_tokens, tree_dollars, f"{agent.name}'s tree")
        if why:
            for member in members:
                found.setdefault(member.id, why)
    return found


def enforce(app: App) -> list[str]:
    """One pass of every budget; the names of the agents it hibernated."""
    from roost.ops import observe

    budgets, max_live = rows.budgets(app.store.conn), app.settings.budget.max_live
    if not budgets and max_live is None:
        return []  # nothing to enforce: no file read, no tmux call
    found = observe.current(app)  # statuses as they are now: never park a turn under way
    running = [o for o in found if o.state == "running"]
    usage.scan(app, [o.agent for o in running])
    why = reasons(app, [o.agent for o in found]) if budgets else {}
    parked = [
        park(app, o, why[o.agent.id])
        for o in running
        if o.agent.id in why and o.status == Status.IDLE and _turn_since_launch(app, o.agent)
    ]
    done = [name for name in parked if name]
    if max_live is not None:
        left = [o for o in running if o.agent.name not in done]
        done += hibernate_over(app, left, max_live)
    return done


def _turn_since_launch(app: App, agent: Agent) -> bool:
    """Whether the agent took a prompt since it was last launched (budgets/rules.began_turn)."""
    events = event_log.since_launch(app.store.conn, agent.id, ("sent", "status"))
    try:
        return rule.began_turn(events)
    finally:
        events.close()  # its statement ends here, not whenever the reader is collected


def park(app: App, o: Observation, why: str) -> str | None:
    """Hibernate the agent for its budget, and say so to its parent and to the person."""
    from roost.ops import lifecycle

    agent = o.agent
    try:
        lifecycle.hibernate(app, agent.name, only_running=True, why="budget")
    except RoostError:
        return None  # gone or parked meanwhile (another pass), or refused: said by that one
    at = app.store.now_iso()
    text = notice_rule.text(agent.name, PARKED, f"{why}; `roost wake {agent.name}` resumes it")
    with app.store.write() as c:
        rows.set_parked(c, [agent.id], why)
        event_log.append(c, agent.id, agent.name, at, "budget", {"reason": why})
        event_id = event_log.last_id(c)
        title = f"roost: {agent.name} was parked: budget reached"
        outbox.enqueue(c, event_id, agent.id, agent.name, "budget", title, why, at)
        event_log.append(
            c, agent.id, agent.name, at, "alert", {"edge": "budget", "title": title, "body": why}
        )
        if agent.orchestration_parent:
            queue.enqueue(c, agent.orchestration_parent, agent.id, agent.name, PARKED, text, at)
    if agent.orchestration_parent:
        from roost.ops import notify

        notify.deliver_to(app, agent.orchestration_parent)  # a busy parent keeps it queued
    return agent.name


def hibernate_over(app: App, running: Sequence[Observation], max_live: int) -> list[str]:
    """Hibernate the idle longest beyond `max_live` running agents (budgets/rules.py's choice)."""
    from roost.alerts.operations import looked_at
    from roost.ops import lifecycle

    if len(running) <= max_live:
        return []
    panes = app.tmux.list_panes()
    by_pane = {p.pane_id: p.session_id for p in panes}
    sessions = {by_pane.get(pane) for pane, _tty in app.tmux.clients()}  # attached sessions
    seen = looked_at(app)
    live = [
        rule.Live(
            o.agent.name,
            o.status,
            o.status_since or "",
            o.agent.id in seen or (o.pane is not None and o.pane.session_id in sessions),
        )
        for o in running
    ]
    done = []
    for name in rule.over_max_live(live, max_live):
        try:
            lifecycle.hibernate(app, name, only_running=True, why="max-live")
        except RoostError:
            continue
        agent = app.store.require(name)
        with app.store.write() as c:
            event_log.append(
                c, agent.id, name, app.store.now_iso(), "max-live", {"max_live": max_live}
            )
        done.append(name)
    return done


def take_parked(app: App, name: str) -> str | None:
    """Why the budget parked agent NAME (forgotten now: it is being woken), or None."""
    agent = app.store.get(name)
    if agent is None:
        return None
    why = rows.parked(app.store.conn, agent.id)
    if why is not None:
        with app.store.write() as c:
            rows.set_parked(c, [agent.id], None)
    return why


# ---- the service component: usage read, budgets checked, at each turn's end -----------
# A CLI may write its record of the turn's last answer after its Stop hook (Claude Code 2.1.332
# was seen to, under load): each agent whose turn ended is read again AGAIN seconds later.
AGAIN = 3.0


class _Later:
    """Agents to read again, and when (the service's monotonic clock); a condition wakes the
    component's thread only when one is due or the service stops: an idle service does nothing."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.due: dict[str, float] = {}
        self.stopping = False

    def add(self, agent_ids: Iterable[str], at: float) -> None:
        with self.cond:
            self.due.update(dict.fromkeys(agent_ids, at))
            self.cond.notify()

    def take(self, clock: Clock) -> set[str] | None:
        """The agents due now, once one is (None: the service stops)."""
        with self.cond:
            while not self.stopping:
                now = clock.monotonic()
                ready = {a for a, at in self.due.items() if at <= now}
                if ready:
                    for a in ready:
                        del self.due[a]
                    return ready
                self.cond.wait(min(self.due.values()) - now if self.due else None)
            return None

    def stop(self) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify()


_later = _Later()


def _turns_ended(app: App, agent_ids: set[str]) -> None:
    usage.scan(app, [a for a in app.store.agents() if a.id in agent_ids])
    enforce(app)


def _on_status(app: App, changes: Sequence[StatusChange]) -> None:
    """At each turn's end: read what the agent's session file gained (so `ls --json` and the
    TUI show it without reading files), then enforce the budgets; and again AGAIN s later."""
    ended = {c.agent_id for c in changes if c.status == Status.IDLE}
    if ended:
        _turns_ended(app, ended)
        _later.add(ended, app.clock.monotonic() + AGAIN)


def _start(app: App) -> Callable[[], None]:
    """The second looks run in a thread of their own (service.in_thread)."""
    from roost.ops.service import in_thread, say

    _later.stopping = False

    def work(mine: App) -> None:
        while (due := _later.take(mine.clock)) is not None:
            try:
                _turns_ended(mine, due)
            except Exception as exc:  # noqa: BLE001 - the next turn's end reads again
                say(f"budget: a second look failed: {type(exc).__name__}: {exc}")

    return in_thread(app, "budget", work, _later.stop)


def _on_settings(app: App) -> None:
    """config.toml changed (a new `max_live`, say): enforce it now, not at the next turn's end."""
    enforce(app)


COMPONENT = Component(name="budget", start=_start, on_status=_on_status, on_settings=_on_settings)
