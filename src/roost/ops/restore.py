"""`roost restore`: a pure plan (workspace.plan_restore), executed through a start queue.

The queue caps how many agents start at once and staggers the starts, so restoring a big
workspace never launches every agent CLI in the same second. One failed start neither stops the
others nor changes intent: the agent stays a tile and shows `failed` with its reason.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from roost.store import workspace as wsdb
from roost.core import workspace as ws
from roost.ops.context import App, open_app
from roost.core.errors import RoostError
from roost.core.reconcile import agent_panes

DEFAULT_CONCURRENCY = 3
DEFAULT_STAGGER = 0.25  # seconds between two starts


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


def run_queue(jobs: Sequence[str], start: Callable[[str], None], concurrency: int,
              stagger: float, sleep: Callable[[float], None] = time.sleep
              ) -> tuple[list[str], dict[str, str], int]:
    """Start each job with at most `concurrency` at once and `stagger` seconds between launches.
    Returns (started, failed name -> reason, peak concurrency)."""
    stats = QueueStats()
    started: list[str] = []
    failed: dict[str, str] = {}

    def one(name: str) -> None:
        stats.enter()
        try:
            start(name)
            started.append(name)
        except Exception as exc:  # noqa: BLE001 - one failure must not stop the rest
            failed[name] = str(exc) or exc.__class__.__name__
        finally:
            stats.leave()

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        for i, name in enumerate(jobs):
            if i and stagger:
                sleep(stagger)
            pool.submit(one, name)
    return started, failed, stats.peak


def limits(app: App, concurrency: int | None, stagger: float | None) -> tuple[int, float]:
    conf = app.settings.get("restore", {})
    c = concurrency if concurrency is not None else int(conf.get("concurrency", DEFAULT_CONCURRENCY))
    s = stagger if stagger is not None else float(conf.get("stagger", DEFAULT_STAGGER))
    if c < 1 or s < 0:
        raise RoostError("--concurrency must be at least 1 and --stagger not negative", code=2)
    return c, s


def start_all(app: App, names: Sequence[str], concurrency: int | None = None,
              stagger: float | None = None) -> tuple[list[str], dict[str, str], int]:
    """Wake `names` through the queue; each worker has its own store connection."""
    from roost.ops import lifecycle

    cap, gap = limits(app, concurrency, stagger)
    local = threading.local()

    def start(name: str) -> None:
        if not hasattr(local, "app"):
            local.app = open_app(app.environ)
        lifecycle.wake(local.app, name)

    return run_queue(names, start, cap, gap)


@dataclass(frozen=True, slots=True)
class Report:
    live: int
    started: list[str]
    already_running: list[str]
    hibernated: list[str]
    failed: dict[str, str]
    peak: int
    seconds: float

    def as_json(self) -> dict:
        return {"live_expected": self.live, "started": len(self.started),
                "already_running": len(self.already_running),
                "hibernated": len(self.hibernated), "failed": len(self.failed),
                "seconds": round(self.seconds, 3), "peak_concurrent_starts": self.peak,
                "started_agents": self.started, "failed_agents": self.failed}

    def text(self) -> str:
        lines = [f"restored in {self.seconds:.1f}s: {self.live} live expected, "
                 f"{len(self.started)} started, {len(self.already_running)} already running, "
                 f"{len(self.hibernated)} hibernated, {len(self.failed)} failed"]
        lines += [f"  failed {name}: {why}" for name, why in sorted(self.failed.items())]
        return "\n".join(lines) + "\n"


def restore(app: App, concurrency: int | None = None, stagger: float | None = None) -> Report:
    from roost.system.telemetry import tracer

    began = time.monotonic()
    with tracer().start_as_current_span("roost.restore") as span:
        workspace = wsdb.load(app.store.conn)
        running = [a for a, p in agent_panes(app.tmux.list_panes()).items() if not p.dead]
        plan = ws.plan_restore(workspace, running)
        names = app.store.names_by_id()
        # an agent removed meanwhile (a concurrent `roost rm`) is simply not there to start
        named = lambda ids: [names[a] for a in ids if a in names]  # noqa: E731
        started, failed, peak = start_all(app, named(plan.start), concurrency, stagger)
        report = Report(live=len(plan.start) + len(plan.running), started=started,
                        already_running=named(plan.running), hibernated=named(plan.hibernate),
                        failed=failed, peak=peak, seconds=time.monotonic() - began)
        span.set_attributes({"roost.live_expected": report.live,
                             "roost.started": len(report.started),
                             "roost.already_running": len(report.already_running),
                             "roost.hibernated": len(report.hibernated),
                             "roost.failed": len(report.failed),
                             "roost.peak_concurrent_starts": peak,
                             "roost.seconds": report.seconds})
    return report
