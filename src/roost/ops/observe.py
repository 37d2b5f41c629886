"""The status pipeline's I/O, around core/observation.py's pure steps: read the last hook event of
the agents that report by hooks, capture the screens that are needed (one chained tmux call),
classify, and record what changed (with its event).

`refresh` is the full pipeline, used by `roost ls` (when the fast path hands over), `watch`, the
TUI and `send`. `statuses` is its read-only part, which `roost ls`'s fast path (cli/fast.py) runs
with its own tmux calls; so this module stays import-light at the top.

Cost with N agents: one `list-panes -a`, plus one chained capture of the agents whose status
needs their screen: two tmux calls, whatever N is, up to ~300 such screens (tmux limits one
command list to ~16 KiB; beyond that the capture takes a call per ~300). A hook log is read from
its last offset.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from roost.core import observation, status
from roost.ops.learn import apply_hook_log, learn_session_ids
from roost.providers import hooks, records, traits
from roost.store import status as listing
from roost.tmux.format import MARKER

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
    from datetime import tzinfo

    from roost.core.model import Agent
    from roost.core.observation import Observation
    from roost.core.pane import Pane
    from roost.ops.context import App

    # Screens of many panes (by pane id) in one go; a pane that died meanwhile has none.
    Capture = Callable[[list[str]], Mapping[str, str]]


def statuses(
    seen: Sequence[Observation],
    roost_home: str,
    capture: Capture,
    overrides: Mapping[str, Mapping[str, Sequence[str]]],
    now: float,
    local: tzinfo | None = None,
) -> list[Observation]:
    """Every agent with its status now, read-only: `seen` is observation.join's answer,
    `overrides` the `[status.patterns]` table of config.toml, `local` the zone of a usage
    limit's reset time that names none (None: this process's)."""
    if local is None:
        local = datetime.fromtimestamp(now).astimezone().tzinfo  # this process's zone
    hooked: dict[str, tuple[str, float, str | None]] = {}
    for o in seen:
        if o.alive and traits.of(o.agent.provider).hooks:
            hook = hooks.last_status(roost_home, o.agent.id, o.agent.launch_token)
            if hook is not None:
                hooked[o.agent.id] = hook
    needed = observation.screens_needed(seen, hooked, lambda p: traits.of(p).hooks)
    screens = capture(needed)
    # Per provider, once: a thousand agents share five (`roost ls` runs this for every agent).
    patterns: dict[str, dict[str, list[str]]] = {}
    graces: dict[str, float] = {}
    found = []
    for o in seen:
        provider = o.agent.provider
        if provider not in patterns:
            patterns[provider] = status.patterns_for(
                traits.of(provider).patterns, overrides.get(provider)
            )
            graces[provider] = start_grace(provider)
        screen = screens.get(o.pane.pane_id) if o.pane is not None else None
        found.append(
            observation.classify(
                o,
                hooked.get(o.agent.id),
                screen,
                patterns[provider],
                now,
                graces[provider],
                screen is not None and typed(screen, provider),
                local,
                _in_flight(o.agent, roost_home) if o.alive else None,  # asked of a live one only
            )
        )
    return found


def start_grace(provider: str) -> float:
    """How long a start with no other signal reads "starting": until it shows it is ready, at
    most as long as a start may take to hold (ops/holding.py)."""
    return max(status.STARTING_GRACE, status.start_window(traits.of(provider).start_time))


def settling(seen: Iterable[Observation], now: float) -> dict[str, float]:
    """The live panes whose status may change with time alone, and when (status.settles_at):
    what the service's monitor looks at again then, since no event will tell it."""
    due = {}
    for o in seen:
        if o.pane is None or not o.alive or o.status is None:
            continue
        at = status.settles_at(
            o.status,
            o.status_source,
            observation.epoch(o.agent.started_at),
            o.pane.activity,
            start_grace(o.agent.provider),
            now,
        )
        if at is not None:
            due[o.pane.pane_id] = at
    return due


def _in_flight(agent: Agent, roost_home: str) -> Callable[[], bool] | None:
    """Whether the agent's CLI record ends with a prompt it took and has not answered
    (providers/records.py), for a provider whose record can say so: asked only of a still
    screen that no pattern reads."""
    reader = records.READERS.get(agent.provider)
    if reader is None:
        return None
    return lambda: reader(roost_home, agent.id)


def typed(screen: str, provider: str) -> bool:
    """A draft sits on the CLI's input line: it is up, whether or not its idle prompt shows."""
    line = traits.INPUT_LINES.get(provider)
    return (
        line is not None
        and status.draft(screen, line.markers, line.window, line.placeholders) is not None
    )


def patterns_of(app: App, provider: str) -> dict[str, list[str]]:
    """A provider's screen patterns, with config.toml's `[status.patterns.<provider>]`."""
    return status.patterns_for(traits.of(provider).patterns, app.settings.patterns.get(provider))


def current(app: App) -> list[Observation]:
    """`refresh`; where the store takes no write (a read-only or full filesystem), what is seen
    now without learning or recording anything: a command that only shows must still show."""
    from roost.store.failure import StoreUnwritable

    if not app.store.read_only:
        try:
            return refresh(app)
        except StoreUnwritable:
            pass
    return _look(app, app.tmux.list_panes())


def _look(
    app: App,
    panes: list[Pane],
    before: Mapping[str, tuple[str, int]] | None = None,
    only: Collection[str] | None = None,
) -> list[Observation]:
    """Every agent as stored, joined with its pane, with its status now. `before`: each agent's
    (intent, launches) read before `panes` were listed; an agent stored, launched or stopped
    since keeps its stored status until the next look (observation.in_step). `only`: judge
    only the agents in these panes (the service's monitor: the panes tmux said changed); the
    others keep their stored status, and no other screen is captured."""
    # The stops under way, read after the panes were listed and before the records: a stop
    # whose effect those panes show is either still here or stored complete in the records.
    stop_of = _stops(app)
    records = listing.records(app.store.conn)
    seen = observation.join(records, panes)
    steady = {o.agent.id for o in seen} if before is None else observation.in_step(records, before)
    if only is not None:
        steady &= {o.agent.id for o in seen if o.pane is not None and o.pane.pane_id in only}
    judged = iter(
        statuses(
            [o for o in seen if o.agent.id in steady],
            str(app.paths.home),
            lambda ids: app.tmux.capture_many(ids, MARKER),
            app.settings.patterns,
            app.clock.now().timestamp(),
            _zone(app),
        )
    )
    return [
        observation.attributed(next(judged), stop_of(o.agent)) if o.agent.id in steady else o
        for o in seen
    ]


def _stops(app: App) -> Callable[[Agent], str | None]:
    """The stops roost recorded before their signal whose deadline has not passed, read now:
    for an agent, the intent of the one that stops its current launch, or None
    (store/intents.py)."""
    from roost.store import intents  # the full path only: `roost ls`'s fast path never records

    stops = intents.active(app.store.conn, app.store.now_iso())
    return lambda agent: observation.covering(stops, agent.id, agent.launches)


def _zone(app: App) -> tzinfo:
    from roost.system.clock import local_zone  # here: roost ls's fast path never needs it

    return local_zone(app.environ)


def one(app: App, name: str) -> Observation | None:
    """Agent NAME as a refresh of every agent sees it now (its change recorded); None: no such
    agent. One refresh costs the same tmux calls at any number of agents."""
    return next((o for o in refresh(app) if o.agent.name == name), None)


def refresh(app: App, only: Collection[str] | None = None) -> list[Observation]:
    """Learn what the agents' files say, observe every agent, and record the status changes.
    `only`: the pane ids that changed (see _look); None: every agent. A change another writer
    beat (a launch storing `starting` after this look read the record) is judged again, once,
    against the new record: its CLI's output may be over, and no event would bring it back."""
    found, lost = _refresh_once(app, only)
    again = {o.pane.pane_id for o in found if o.agent.id in lost and o.pane is not None}
    if not again:
        return found
    redone = {o.agent.id: o for o in _refresh_once(app, again)[0] if o.agent.id in lost}
    return [redone.get(o.agent.id, o) for o in found]


def _refresh_once(app: App, only: Collection[str] | None) -> tuple[list[Observation], set[str]]:
    agents = app.store.agents()
    before = {a.id: (a.intent, a.launches) for a in agents}  # what the listing below speaks for
    panes = app.tmux.list_panes()
    judged = agents if only is None else _in_panes(agents, panes, only)
    learn_session_ids(app, judged, panes)
    for agent in judged:
        apply_hook_log(app, agent)
    return record(app, _look(app, panes, before, only))


def _in_panes(agents: list[Agent], panes: list[Pane], only: Collection[str]) -> list[Agent]:
    """The agents in the panes `only` names: a refresh of what changed reads their files and
    processes alone (at 200 agents, looking at every codex's open files and every claude's hook
    log for each changed pane made an exit take seconds to show). The others wait for their own
    pane's change or the monitor's safety net."""
    inside = {p.agent_id for p in panes if p.agent_id and p.pane_id in only}
    return [a for a in agents if a.id in inside]


def record(app: App, found: list[Observation]) -> tuple[list[Observation], set[str]]:
    """Store the status changes (and their events) in one transaction, with what each of the
    App's reactions (context.OnStatus, assembled in ops/root.py) does of the changes stored;
    `found` with the changed ones now stored, and the ids of the changes not stored (their
    record changed since it was read)."""
    changed = observation.changes(found)
    if not changed:
        return found, set()
    read = [(r, r.read(app, changed) if r.read else None) for r in app.on_status]  # no lock held
    at = app.store.now_iso()
    with app.store.write() as c:
        stored = listing.record_changes(c, changed, at)  # not what another look recorded
        if stored:
            for reaction, its_read in read:
                reaction.recorded(app, c, stored, at, its_read)
    lost = {o.agent.id for o in changed}
    ids = {o.agent.id for o in stored}
    return [observation.recorded(o, at) if o.agent.id in ids else o for o in found], lost - ids
