"""The status pipeline's values and its pure steps. Every view of the agents (`roost ls` and its
fast path, `ls --json`, `watch`, the TUI, the refresh that records statuses) goes through them:

1. `join`: each stored record (store/status.py) with its pane (the one `list-panes -a`);
2. `screens_needed`: the live panes whose status needs their screen;
3. `classify`: the status from the hook event, the screen and the process facts;
4. `changes`: what differs from the stored status, which the refresh records.

The I/O between the steps (hook logs, captures, writes) is ops/observe.py's. `roost ls` runs it
on its fast path.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from roost.core import state, status
from roost.core.pane import agent_panes
from roost.limits import rules as limits

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from datetime import tzinfo

    from roost.core.model import Agent
    from roost.core.pane import Pane
    from roost.core.state import State
    from roost.limits.rules import Limit

    # The status the hook log gives, when the event that gave it fired, and an error's reason.
    Hook = tuple[str, float, str | None]


@dataclass(frozen=True, slots=True, repr=False)
class Observation:
    """An agent's record (core/model.py's Agent) joined with its pane (None when tmux has none):
    whether its process runs, its pid and last exit code, and its status (with its reason, the
    CLI's words, for an error). Until `classify` has run, the status is the stored one."""

    agent: Agent
    pane: Pane | None
    alive: bool  # a live process in its pane
    state: State  # state.derive's: running, stopped, hibernated or failed
    pid: int | None
    exit_code: int | None  # of its dead pane, else the last one recorded
    status: str | None
    status_source: str | None
    status_since: str | None
    status_reason: str | None = None  # read afresh at each look; never stored
    limit: Limit | None = None  # a "limited" status's kind and reset time, read afresh too

    def __repr__(self) -> str:
        return (
            f"Observation({self.agent.name!r}, {self.state}, {self.status} "
            f"({self.status_source}), pid {self.pid}, exit {self.exit_code})"
        )


def join(records: Iterable[Agent], panes: Iterable[Pane]) -> list[Observation]:
    """Each record with its pane (core/pane.py's rule picks it when several carry its id)."""
    by_id = agent_panes(panes)
    return [sighted(record, by_id.get(record.id)) for record in records]


def sighted(agent: Agent, pane: Pane | None) -> Observation:
    alive = pane is not None and not pane.dead
    died = pane.dead_status if pane is not None else None
    return Observation(
        agent,
        pane,
        alive,
        state.derive(alive, pane is not None, agent.intent, agent.placement, agent.last_error),
        pane.live_pid if pane is not None else None,
        # a running agent has no exit code (the recorded one is a past run's)
        None if alive else died if died is not None else agent.last_exit,
        agent.status,
        agent.status_source,
        agent.status_since,
    )


def screens_needed(
    seen: Iterable[Observation], hooks: Mapping[str, Hook], has_hooks: Callable[[str], bool]
) -> list[str]:
    """The pane ids to capture: live agents whose status may need their screen (`hooks` holds
    the last hook status of those that have one; `has_hooks` tells a provider that reports by
    hooks)."""
    needed = []
    for o in seen:
        if o.alive and o.pane is not None:
            hook = hooks.get(o.agent.id)
            if status.needs_screen(
                has_hooks(o.agent.provider), hook[1] if hook else None, o.pane.activity
            ):
                needed.append(o.pane.pane_id)
    return needed


def classify(
    o: Observation,
    hook: Hook | None,
    screen: str | None,
    patterns: dict[str, list[str]],
    now: float,
    grace: float = status.STARTING_GRACE,
    typed: bool = False,
    local: tzinfo | None = None,
    in_flight: Callable[[], bool] | None = None,
) -> Observation:
    """The observation with its status now: from its last hook status, its screen when it was
    captured, and its provider's screen patterns (`grace`, `typed`, `in_flight`:
    status.classify's). An error or a dialog that tells of a usage limit reads `limited`
    (limits/rules.py), its reset time read as the next such moment after the hook event or the
    screen's last output, in the zone the CLI names, else `local`."""
    pane = o.pane
    found, source, reason = status.classify(
        alive=o.alive,
        has_window=pane is not None,
        base_state=o.state,
        roost_stopped=o.agent.intent == "stopped",
        hook=hook,
        screen=screen,
        activity=pane.activity if pane is not None else None,
        started_at=epoch(o.agent.started_at) if o.alive else None,
        patterns=patterns,
        now=now,
        title=pane.title if pane is not None else "",
        grace=grace,
        typed=typed,
        spawning=pane is None and spawning(o.agent, now),
        in_flight=in_flight,
    )
    limit = None
    if found in (status.ERROR, status.WAITING):
        shown = hook[1] if source == "hook" and hook is not None else None
        if shown is None:
            shown = pane.activity if pane is not None and pane.activity else now
        limit = limits.from_status(found, reason, screen, shown, local)
        if limit is not None and limit.resets_at is not None and limit.resets_at <= now:
            # Reset: the failed turn is history and the input takes text again (a dialog
            # still open stays `waiting`).
            found, reason, limit = (
                (status.IDLE, None, None) if found == status.ERROR else (found, reason, None)
            )
        elif limit is not None:
            found, reason = status.LIMITED, status.one_line(limit.words)
    if (found, source, reason, limit) == (o.status, o.status_source, o.status_reason, o.limit):
        return o  # as it was: most agents at most looks (a record built a thousand times less)
    return Observation(
        o.agent,
        pane,
        o.alive,
        o.state,
        o.pid,
        o.exit_code,
        found,
        source,
        o.status_since,
        reason,
        limit,
    )


def changes(observations: Iterable[Observation]) -> list[Observation]:
    """Those whose status (or its source) is not the stored one: what a refresh records."""
    return [
        o
        for o in observations
        if (o.status, o.status_source) != (o.agent.status, o.agent.status_source)
    ]


def status_event(o: Observation) -> dict[str, object]:
    """The event log's detail of a status change."""
    detail: dict[str, object] = {
        "status": o.status,
        "previous": o.agent.status,
        "source": o.status_source,
    }
    if o.status == status.EXITED:
        detail["exit_code"] = o.exit_code
    if o.status_reason:
        detail["reason"] = o.status_reason
    return detail


def recorded(o: Observation, since: str) -> Observation:
    """The observation once its status change is stored, at `since`."""
    return Observation(
        o.agent,
        o.pane,
        o.alive,
        o.state,
        o.pid,
        o.exit_code,
        o.status,
        o.status_source,
        since,
        o.status_reason,
        o.limit,
    )


def covering(stops: Mapping[str, tuple[str, int]], agent_id: str, launches: int) -> str | None:
    """The intent (stopped or hibernated) of the stop among `stops` (agent id -> (intent, the
    launch it stops): store/intents.active) that stops the agent's launch `launches`: an exit
    of that launch is that stop's. None when no stop covers it (none under way, or one of an
    earlier launch: this one's exit is its own)."""
    stop = stops.get(agent_id)
    return stop[0] if stop is not None and stop[1] == launches else None


def attributed(o: Observation, stop: str | None) -> Observation:
    """The observation with an exit that a stop roost made caused put down to that stop: `stop`
    is the intent of the stop under way, recorded before its signal, that covers the agent's
    current launch (`covering`), or None. An exit of that launch (a dead or gone
    pane, or a CLI that reports its own end) reads as the stop leaves it, `stopped` or
    `hibernated`, not `exited`: no crash to tell anyone of, nothing to restart. A start that
    failed since (a wake refused: its conversation is gone) is newer news than the stop, and
    stays `failed`.
    """
    if stop is None or o.status == state.FAILED or (o.alive and o.status != status.EXITED):
        return o
    intended: State = state.HIBERNATED if stop == state.HIBERNATED else state.STOPPED
    # the sources the next look gives once the stop is stored (status.classify), so it
    # records no second change
    source = "store" if intended == state.HIBERNATED else "process"
    return Observation(
        o.agent,
        o.pane,
        o.alive,
        o.state if o.alive else intended,
        o.pid,
        o.exit_code,
        intended,
        source,
        o.status_since,
    )


def spawning(agent: Agent, now: float) -> bool:
    """Stored by a spawn a moment ago and never launched: its window is still being made."""
    if agent.launches or agent.last_error:
        return False  # first: `roost ls` parses no date for a thousand launched agents
    created = epoch(agent.created_at)
    return created is not None and now - created < status.STARTING_GRACE


def in_step(records: Iterable[Agent], before: Mapping[str, tuple[str, int]]) -> set[str]:
    """The ids of the records a pane listing can speak for: `before` holds each agent's (intent,
    launches) read before the listing was taken. An agent stored, launched or stopped since
    then is not judged by it (the next look does), so a spawn under way never reads as dead."""
    return {r.id for r in records if before.get(r.id) == (r.intent, r.launches)}


def epoch(iso: str | None) -> float | None:
    if not iso:
        return None
    return datetime.fromisoformat(iso).timestamp()
