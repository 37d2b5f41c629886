"""The status pipeline's values and its pure steps. Every view of the agents (`roost ls` and its
fast path, `ls --json`, `watch`, the TUI, the refresh that records statuses) goes through them:

1. `join`: each stored record (store/status.py) with its pane (the one `list-panes -a`);
2. `screens_needed`: the live panes whose status needs their screen;
3. `classify`: the status from the hook event, the screen and the process facts;
4. `changes`: what differs from the stored status, which the refresh records.

The I/O between the steps (hook logs, captures, writes) is ops/observe.py's. Import-light (no
dataclasses, no typing at run time): `roost ls` runs it on its fast path.
"""

from __future__ import annotations

from roost.core import state, status
from roost.core.pane import agent_panes

TYPE_CHECKING = False  # not typing's: the typing module is not imported at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from roost.core.pane import Pane

    # The status the hook log gives, when the event that gave it fired, and an error's reason.
    Hook = tuple[str, float, str | None]


class Record:
    """An agent as the store keeps it, with the names of its tab and of the agents it is linked
    to: the columns of store/status.py's listing, in its order."""

    __slots__ = (
        "args_json",
        "created_at",
        "cwd",
        "dangerous",
        "history_json",
        "home",
        "hook_offset",
        "id",
        "intent",
        "last_active_at",
        "last_error",
        "last_exit",
        "launch_token",
        "launches",
        "linked_parent",
        "name",
        "orchestration_parent",
        "orchestration_root",
        "pinned",
        "placement",
        "provider",
        "provider_session_id",
        "restart_policy",
        "started_at",
        "status",
        "status_since",
        "status_source",
        "tab",
    )

    def __init__(self, id: str, name: str, provider: str, cwd: str, home: str,
                 args_json: str = "[]", dangerous: bool | int = False,
                 provider_session_id: str | None = None, created_at: str = "",
                 started_at: str | None = None, launches: int = 0, last_exit: int | None = None,
                 intent: str = "stopped", placement: str | None = None, tab: str | None = None,
                 pinned: bool | int = False, linked_parent: str | None = None,
                 orchestration_parent: str | None = None, orchestration_root: str | None = None,
                 last_active_at: str | None = None, last_error: str | None = None,
                 status: str | None = None, status_source: str | None = None,
                 status_since: str | None = None, hook_offset: int = 0,
                 restart_policy: str = "never", history_json: str = "[]",
                 launch_token: str | None = None) -> None:
        self.id = id
        self.name = name
        self.provider = provider
        self.cwd = cwd
        self.home = home
        self.args_json = args_json  # the extra argv, as the JSON text the store keeps
        self.dangerous = bool(dangerous)
        self.provider_session_id = provider_session_id
        self.created_at = created_at
        self.started_at = started_at
        self.launches = launches
        self.last_exit = last_exit
        self.intent = intent
        self.placement = placement
        self.tab = tab  # the name of its tab
        self.pinned = bool(pinned)
        self.linked_parent = linked_parent  # names, not ids: what people and scripts read
        self.orchestration_parent = orchestration_parent
        self.orchestration_root = orchestration_root
        self.last_active_at = last_active_at
        self.last_error = last_error
        self.status = status  # the status last recorded, its source, and since when
        self.status_source = status_source
        self.status_since = status_since
        self.hook_offset = hook_offset
        self.restart_policy = restart_policy
        self.history_json = history_json  # its session id's changes, as the JSON text read
        # its current launch's token (None: launched before tokens): whose hook lines count
        self.launch_token = launch_token

    def __repr__(self) -> str:
        return f"Record({self.name!r}, {self.provider}, id {self.id})"


class Observation:
    """An agent's record joined with its pane (None when tmux has none): whether its process
    runs, its pid and last exit code, and its status (with its reason, the CLI's words, for an
    error). Until `classify` has run, the status is the stored one."""

    __slots__ = (
        "agent",
        "alive",
        "exit_code",
        "pane",
        "pid",
        "state",
        "status",
        "status_reason",
        "status_since",
        "status_source",
    )

    def __init__(self, agent: Record, pane: Pane | None, alive: bool, state: str,
                 pid: int | None, exit_code: int | None, status: str | None,
                 status_source: str | None, status_since: str | None,
                 status_reason: str | None = None) -> None:
        self.agent = agent
        self.pane = pane
        self.alive = alive  # a live process in its pane
        self.state = state  # state.derive's: running, stopped, hibernated or failed
        self.pid = pid
        self.exit_code = exit_code  # of its dead pane, else the last one recorded
        self.status = status
        self.status_source = status_source
        self.status_since = status_since
        self.status_reason = status_reason  # read afresh at each look; never stored

    def __repr__(self) -> str:
        return f"Observation({self.agent.name!r}, {self.state}, {self.status} " \
               f"({self.status_source}), pid {self.pid}, exit {self.exit_code})"


def join(records: Iterable[Record], panes: Iterable[Pane]) -> list[Observation]:
    """Each record with its pane (core/pane.py's rule picks it when several carry its id)."""
    by_id = agent_panes(panes)
    return [sighted(record, by_id.get(record.id)) for record in records]


def sighted(agent: Record, pane: Pane | None) -> Observation:
    alive = pane is not None and not pane.dead
    died = pane.dead_status if pane is not None else None
    return Observation(
        agent, pane, alive,
        state.derive(alive, pane is not None, agent.intent, agent.placement, agent.last_error),
        pane.live_pid if pane is not None else None,
        # a running agent has no exit code (the recorded one is a past run's)
        None if alive else died if died is not None else agent.last_exit,
        agent.status, agent.status_source, agent.status_since)


def screens_needed(seen: Iterable[Observation], hooks: Mapping[str, Hook],
                   has_hooks: Callable[[str], bool]) -> list[str]:
    """The pane ids to capture: live agents whose status may need their screen (`hooks` holds
    the last hook status of those that have one; `has_hooks` tells a provider that reports by
    hooks)."""
    needed = []
    for o in seen:
        if o.alive and o.pane is not None:
            hook = hooks.get(o.agent.id)
            if status.needs_screen(has_hooks(o.agent.provider), hook[1] if hook else None,
                                   o.pane.activity):
                needed.append(o.pane.pane_id)
    return needed


def classify(o: Observation, hook: Hook | None, screen: str | None,
             patterns: dict[str, list[str]], now: float,
             grace: float = status.STARTING_GRACE, typed: bool = False) -> Observation:
    """The observation with its status now: from its last hook status, its screen when it was
    captured, and its provider's screen patterns (`grace` and `typed`: status.classify's)."""
    pane = o.pane
    found, source, reason = status.classify(
        alive=o.alive, has_window=pane is not None, base_state=o.state,
        roost_stopped=o.agent.intent == "stopped", hook=hook, screen=screen,
        activity=pane.activity if pane is not None else None,
        started_at=epoch(o.agent.started_at) if o.alive else None, patterns=patterns, now=now,
        title=pane.title if pane is not None else "", grace=grace, typed=typed,
        spawning=pane is None and spawning(o.agent, now))
    return Observation(o.agent, pane, o.alive, o.state, o.pid, o.exit_code, found, source,
                       o.status_since, reason)


def changes(observations: Iterable[Observation]) -> list[Observation]:
    """Those whose status (or its source) is not the stored one: what a refresh records."""
    return [o for o in observations
            if (o.status, o.status_source) != (o.agent.status, o.agent.status_source)]


def status_event(o: Observation) -> dict[str, object]:
    """The event log's detail of a status change."""
    detail: dict[str, object] = {"status": o.status, "previous": o.agent.status,
                                 "source": o.status_source}
    if o.status == "exited":
        detail["exit_code"] = o.exit_code
    if o.status_reason:
        detail["reason"] = o.status_reason
    return detail


def recorded(o: Observation, since: str) -> Observation:
    """The observation once its status change is stored, at `since`."""
    return Observation(o.agent, o.pane, o.alive, o.state, o.pid, o.exit_code, o.status,
                       o.status_source, since, o.status_reason)


def spawning(agent: Record, now: float) -> bool:
    """Stored by a spawn a moment ago and never launched: its window is still being made."""
    created = epoch(agent.created_at)
    return (agent.launches == 0 and not agent.last_error and created is not None
            and now - created < status.STARTING_GRACE)


def in_step(records: Iterable[Record], before: Mapping[str, tuple[str, int]]) -> set[str]:
    """The ids of the records a pane listing can speak for: `before` holds each agent's (intent,
    launches) read before the listing was taken. An agent stored, launched or stopped since
    then is not judged by it (the next look does), so a spawn under way never reads as dead."""
    return {r.id for r in records if before.get(r.id) == (r.intent, r.launches)}


def epoch(iso: str | None) -> float | None:
    if not iso:
        return None
    from datetime import datetime  # already loaded with sqlite3; a name lookup here

    return datetime.fromisoformat(iso).timestamp()
