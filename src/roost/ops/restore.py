"""`roost restore`: a pure plan (workspace.plan_restore), executed through a start queue.

The queue caps how many agents start at once and staggers the starts, so restoring a big
workspace never launches every agent CLI in the same second. One failed start neither stops the
others nor changes intent: the agent stays a tile and shows `failed` with its reason.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from roost.core import restoring, starts
from roost.core import workspace as ws
from roost.core.errors import RoostError
from roost.core.model import INTENT_STOPPED
from roost.core.reconcile import agent_panes
from roost.core.restoring import DEFAULT_CONCURRENCY, DEFAULT_STAGGER, Report
from roost.ops.context import App
from roost.store import workspace as wsdb

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_STAGGER",
    "NotStarted",
    "Outcome",
    "Report",
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


class NotStarted(Exception):
    """A start the queue should not make after all (its message says why)."""


def run_queue(
    jobs: Sequence[str],
    start: Callable[[str], bool],
    concurrency: int,
    stagger: float,
    sleep: Callable[[float], None],
) -> Outcome:
    """Start each job with at most `concurrency` at once and `stagger` seconds between launches;
    `start` says whether it started the job (False: it found it already running), or raises
    NotStarted."""
    stats = QueueStats()
    started: list[str] = []
    already: list[str] = []
    failed: dict[str, str] = {}
    skipped: dict[str, str] = {}

    def one(name: str) -> None:
        stats.enter()
        try:
            (started if start(name) else already).append(name)
        except NotStarted as exc:
            skipped[name] = str(exc)
        except Exception as exc:  # noqa: BLE001 - one failure must not stop the rest
            failed[name] = str(exc) or exc.__class__.__name__
        finally:
            stats.leave()

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        for i, name in enumerate(jobs):
            if i and stagger:
                sleep(stagger)
            pool.submit(one, name)
    return Outcome(started, already, failed, stats.peak, skipped)


def start_all(
    app: App, names: Sequence[str], concurrency: int | None = None, stagger: float | None = None
) -> Outcome:
    """Wake `names` through the queue; each worker has its own store connection. The starts
    are watched together (ops.holding): one that dies at once is failed with its CLI's last
    words. Until a start of a provider held, that provider's agents start one at a time, each
    watched until it held or died (a canary: a shared login that fails, fails on one agent at a
    time, and after repeated identical authentication failures the provider's other agents are
    not started: core.starts); once one held, they start at the queue's pace."""
    from roost.ops import holding, lifecycle

    cap, gap = restoring.limits(app.settings.get("restore", {}), concurrency, stagger)
    local = threading.local()
    watch = holding.Watch(app)
    canaries: dict[str, threading.Lock] = {}
    canaries_lock = threading.Lock()

    def worker_app() -> App:
        if not hasattr(local, "app"):
            local.app = app.with_own_store()
        return local.app  # type: ignore[no-any-return]

    def stopped() -> dict[str, str]:
        return starts.stopped_providers([(d.agent.provider, d.words) for d in watch.died()])

    held = _limited_accounts(app)
    spaced = _AccountSpacing(app, restoring.account_gap(app.settings.get("restore", {})))

    def launch(name: str, provider: str) -> bool:
        if provider in held:
            raise NotStarted(held[provider])
        spaced.wait(provider)
        watch.look()
        words = stopped().get(provider)
        if words is not None:
            raise NotStarted(starts.not_started_reason(provider))
        result = lifecycle.wake(worker_app(), name, hold=False)
        if result.started:
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

    done = run_queue(names, start, cap, gap, app.clock.sleep)
    died = {d.agent.name: d.reason for d in watch.settle().values()}
    return Outcome(
        [n for n in done.started if n not in died],
        done.already_running,
        {**done.failed, **died},
        done.peak,
        done.skipped,
        [*starts.advice(stopped()), *sorted(set(held.values()))] if done.skipped else [],
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
    from roost.core import limits, present
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


def restore(app: App, concurrency: int | None = None, stagger: float | None = None) -> Report:
    from roost.system.telemetry import tracer

    began = app.clock.monotonic()
    with tracer().start_as_current_span("roost.restore") as span:
        workspace = wsdb.load(app.store.conn)
        running = [a for a, p in agent_panes(app.tmux.list_panes()).items() if not p.dead]
        stopped = [a.id for a in app.store.agents() if a.intent == INTENT_STOPPED]
        plan = ws.plan_restore(workspace, running, stopped)
        names = app.store.names_by_id()
        _stop_sleepers(app, restoring.named(plan.hibernate, names))
        done = start_all(app, restoring.named(plan.start, names), concurrency, stagger)
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
        )
        span.set_attributes(
            {
                "roost.live_expected": report.live,
                "roost.started": len(report.started),
                "roost.already_running": len(report.already_running),
                "roost.hibernated": len(report.hibernated),
                "roost.failed": len(report.failed),
                "roost.not_started": len(report.skipped),
                "roost.peak_concurrent_starts": report.peak,
                "roost.seconds": report.seconds,
            }
        )
    from roost.ops import resume

    # Issue 23: a resume at a limit's reset that fell due while nothing ran (the service, the
    # tmux server, the machine) is made now, once; the later ones are the service's.
    resume.run_due(app)
    return report
