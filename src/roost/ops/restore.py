"""`roost restore`: a pure plan (workspace.plan_restore), executed through a start queue.

The queue caps how many agents start at once and staggers the starts, so restoring a big
workspace never launches every agent CLI in the same second. One failed start neither stops the
others nor changes intent: the agent stays a tile and shows `failed` with its reason. Each start
is told as it settles (resumed, started, failed with its CLI's words, not started and why), for
`roost restore`'s progress lines.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from roost.core import restoring, starts
from roost.core import workspace as ws
from roost.core.errors import NeedsPerson, RoostError
from roost.core.model import INTENT_STOPPED, Agent
from roost.core.reconcile import agent_panes
from roost.core.restoring import Report, Settled
from roost.ops.context import App
from roost.store import workspace as wsdb

__all__ = [
    "NotStarted",
    "Outcome",
    "Report",
    "Settled",
    "restore",
    "run_queue",
    "start_all",
]


@dataclass
class QueueStats:
    peak: int = 0
    _now: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def enter(self) -> None:
        with self._lock:
            self._now += 1
            self.peak = max(self.peak, self._now)

    def leave(self) -> None:
        with self._lock:
            self._now -= 1


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a queue of starts did. A start that found its agent running (another roost started
    it meanwhile: a concurrent restore, a wake) is counted there, never as started."""

    started: list[str]
    already_running: list[str]
    failed: dict[str, str]  # name -> reason
    peak: int  # the most starts that ran at once
    skipped: dict[str, str] = field(default_factory=dict)  # name -> why it was not started
    advice: list[str] = field(default_factory=list)  # what to do about the skipped ones
    resumed: dict[str, str | None] = field(default_factory=dict)  # name -> its session id


class NotStarted(Exception):
    """A start the queue should not make after all (its message says why)."""


def run_queue(
    jobs: Sequence[str],
    start: Callable[[str], bool],
    concurrency: int,
    stagger: float,
    sleep: Callable[[float], None],
    told: Callable[[Settled], None] | None = None,
) -> Outcome:
    """Start each job with at most `concurrency` at once and `stagger` seconds between launches;
    `start` says whether it started the job (False: it found it already running), or raises
    NotStarted. `told` hears of each job that did not start, as it is decided; a started one is
    told by whoever watches it (start_all)."""
    tell = told or (lambda _settled: None)
    stats = QueueStats()
    started: list[str] = []
    already: list[str] = []
    failed: dict[str, str] = {}
    skipped: dict[str, str] = {}

    def one(name: str) -> None:
        stats.enter()
        try:
            if start(name):
                started.append(name)
            else:
                already.append(name)
                tell(Settled(name, restoring.ALREADY_RUNNING))
        except NotStarted as exc:
            skipped[name] = str(exc)
            tell(Settled(name, restoring.NOT_STARTED, skipped[name]))
        except Exception as exc:  # noqa: BLE001 - one failure must not stop the rest
            failed[name] = str(exc) or exc.__class__.__name__
            tell(Settled(name, restoring.FAILED, failed[name]))
        finally:
            stats.leave()

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        for i, name in enumerate(jobs):
            if i and stagger:
                sleep(stagger)
            pool.submit(one, name)
    return Outcome(started, already, failed, stats.peak, skipped)


def start_all(
    app: App,
    names: Sequence[str],
    concurrency: int | None = None,
    stagger: float | None = None,
    told: Callable[[Settled], None] | None = None,
) -> Outcome:
    """Wake `names` through the queue; each worker has its own store connection. The starts
    are watched together (ops.holding): one that dies at once is failed with its CLI's last
    words. Until a start of a provider held, that provider's agents start one at a time, each
    watched until it held or died (a canary: a shared login that fails, fails on one agent at a
    time, and after repeated identical authentication failures the provider's other agents are
    not started: core.starts); once one held, they start at the queue's pace. What no start
    gets past is not started, with why: an agent that needs approval (roost approve), a missing
    executable, a conversation that cannot be resumed (wake's NeedsPerson), a limited account,
    a provider whose login failed. `told` hears of each agent as its start settles, in that
    order."""
    from roost.ops import holding, lifecycle

    cap, gap = restoring.limits(app.settings.restore, concurrency, stagger)
    local = threading.local()
    woken: dict[str, lifecycle.WakeResult] = {}  # agent id -> its start, before it is watched
    tell = told or (lambda _settled: None)

    def settled(agent: Agent, died: holding.Died | None) -> None:
        if died is not None:
            tell(Settled(agent.name, restoring.FAILED, died.reason))
            return
        result = woken[agent.id]
        outcome = restoring.RESUMED if result.resumed else restoring.STARTED
        tell(Settled(agent.name, outcome, result.agent.provider_session_id))

    watch = holding.Watch(app, told=settled)
    canaries: dict[str, threading.Lock] = {}
    canaries_lock = threading.Lock()

    def worker_app() -> App:
        if not hasattr(local, "app"):
            local.app = app.with_own_store()
        return local.app  # type: ignore[no-any-return]

    def stopped() -> dict[str, str]:
        return starts.stopped_providers([(d.agent.provider, d.words) for d in watch.died()])

    held = _limited_accounts(app)
    spaced = _AccountSpacing(app, app.settings.restore.account_gap)

    def launch(name: str, provider: str) -> bool:
        if provider in held:
            raise NotStarted(held[provider])
        spaced.wait(provider)
        watch.look()
        words = stopped().get(provider)
        if words is not None:
            raise NotStarted(starts.not_started_reason(provider))
        try:
            result = lifecycle.wake(worker_app(), name, hold=False)
        except NeedsPerson as refused:  # decided under the agent's lock, before any start
            raise NotStarted(refused.why) from refused
        if result.started:
            woken[result.agent.id] = result
            watch.add(result.agent)
        return result.started

    def start(name: str) -> bool:
        agent = worker_app().store.get(name)
        provider = agent.provider if agent is not None else ""
        if watch.held_any(provider):
            return launch(name, provider)
        with canaries_lock:
            canary = canaries.setdefault(provider, threading.Lock())
        with canary:
            started = launch(name, provider)
            if not watch.held_any(provider):
                watch.wait({s.agent.id for s in watch.starting() if s.agent.provider == provider})
            return started

    done = run_queue(names, start, cap, gap, app.clock.sleep, tell)
    died = {d.agent.name: d.reason for d in watch.settle().values()}
    started = [n for n in done.started if n not in died]
    return Outcome(
        started,
        done.already_running,
        {**done.failed, **died},
        done.peak,
        done.skipped,
        [*starts.advice(stopped()), *sorted(set(held.values()))] if done.skipped else [],
        {r.agent.name: r.agent.provider_session_id for r in woken.values() if r.resumed},
    )


class _AccountSpacing:
    """Starts of one account at least `gap` seconds apart (issue 23, part 3): each start takes
    the account's next free moment and sleeps until it (on the App's clock)."""

    def __init__(self, app: App, gap: float) -> None:
        self.app, self.gap = app, gap
        self.next_free: dict[str, float] = {}
        self.lock = threading.Lock()

    def wait(self, provider: str) -> None:
        from roost.ops.resume import account

        key = account(self.app, provider)
        with self.lock:
            now = self.app.clock.monotonic()
            slot = max(now, self.next_free.get(key, now))
            self.next_free[key] = slot + self.gap
        if slot > now:
            self.app.clock.sleep(slot - now)


def _limited_accounts(app: App) -> dict[str, str]:
    """{provider: why its agents are not started}: the accounts whose usage limit holds now
    (store/limits.py), so a restore does not start agents only to see them refuse work."""
    from roost.core import present
    from roost.limits import rules as limits
    from roost.store import limits as stored
    from roost.system.clock import local_zone

    now = app.clock.now().timestamp()
    zone = local_zone(app.environ)
    return {
        provider: f"{provider}'s account is limited until "
        f"{present.reset_time(limit.resets_at, now, zone)} (seen on {name}: {limit.words}); "
        "roost restore after that starts its agents"
        for provider, (name, limit, _seen) in limits.by_account(
            stored.seen(app.store.conn), now
        ).items()
    }


def _stop_sleepers(app: App, names: Sequence[str]) -> None:
    """The agents restore leaves hibernated (parked or buried, without a window) must not run
    unseen while `ls` says hibernated: what they left running through a server's death (deaf
    to its hangup) is stopped, as a tile's is before it starts again. One look at the
    processes; only an agent that has some is looked at closer (ops.lifecycle)."""
    from roost.ops import lifecycle

    if not names:
        return
    with_processes = {facts.agent_id for _proc, facts in app.procs.tagged(str(app.paths.home))}
    by_name = {a.name: a.id for a in app.store.agents()}
    for name in names:
        if by_name.get(name) in with_processes:
            try:
                lifecycle.stop_leftovers(app, name)
            except RoostError:
                continue  # running under another server of this home: not a leftover


class _Progress:
    """Numbers each settled start, one at a time, and tells its line (core.restoring)."""

    def __init__(self, total: int, tell: Callable[[str], None]) -> None:
        self.total, self.tell = total, tell
        self.done = 0
        self.lock = threading.Lock()

    def __call__(self, settled: Settled) -> None:
        with self.lock:  # the queue's workers settle at once: lines whole, and in order
            self.done += 1
            self.tell(restoring.progress_line(settled, self.done, self.total))


def restore(
    app: App,
    concurrency: int | None = None,
    stagger: float | None = None,
    tell: Callable[[str], None] | None = None,
) -> Report:
    """Bring the workspace back. `tell` hears the progress: what the restore is about to do,
    then a line for each agent as its start settles (roost restore writes them on stderr)."""
    from roost.system.telemetry import tracer

    began = app.clock.monotonic()
    with tracer().start_as_current_span("roost.restore") as span:
        workspace = wsdb.load(app.store.conn)
        running = [a for a, p in agent_panes(app.tmux.list_panes()).items() if not p.dead]
        stopped = [a.id for a in app.store.agents() if a.intent == INTENT_STOPPED]
        plan = ws.plan_restore(workspace, running, stopped)
        names = app.store.names_by_id()
        to_start = restoring.named(plan.start, names)
        told = None
        if tell is not None:
            cap, _gap = restoring.limits(app.settings.restore, concurrency, stagger)
            tell(
                restoring.plan_line(
                    len(to_start),
                    len(restoring.named(plan.hibernate, names)),
                    len(restoring.named(plan.running, names)),
                    cap,
                )
            )
            told = _Progress(len(to_start), tell)
        _stop_sleepers(app, restoring.named(plan.hibernate, names))
        done = start_all(app, to_start, concurrency, stagger, told)
        report = restoring.report(
            plan,
            names,
            done.started,
            done.failed,
            done.peak,
            app.clock.monotonic() - began,
            found_running=done.already_running,
            skipped=done.skipped,
            advice=done.advice,
            resumed=done.resumed,
        )
        span.set_attributes(
            {
                "roost.live_expected": report.live,
                "roost.started": len(report.started),
                "roost.already_running": len(report.already_running),
                "roost.hibernated": len(report.hibernated),
                "roost.failed": len(report.failed),
                "roost.not_started": len(report.skipped),
                "roost.resumed": len(report.resumed),
                "roost.peak_concurrent_starts": report.peak,
                "roost.seconds": report.seconds,
            }
        )
    from roost.ops import resume

    # Issue 23: a resume at a limit's reset that fell due while nothing ran (the service, the
    # tmux server, the machine) is made now, once; the later ones are the service's.
    resume.run_due(app)
    return report
