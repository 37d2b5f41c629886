"""The TUI's refresh cost with 10 and 200 live agents: tmux calls and CPU per second.

One world grows from 10 to 200 live agents, spawned in-process through `lifecycle.spawn` (the tiles
one by one, the parked ones from --spawners threads, each with its own `open_app()`): per 10
agents 1 fake codex (status from its screen), 2 fake claude (status from their hooks) and 7
`--provider command -- sleep 1000` (no hooks: their screens are captured at every refresh, the
worst case for the chained capture). Agents 0-7 are tiles of two tabs (main, review), 2 and 9
are pinned, every other agent is parked. The bench waits until every agent is idle.

At each N the real `RoostApp` runs headless (`run_test(size=(160, 50))`) on the real
`LiveSource` with `refresh_every=1.0`; after a warm-up (the list shows all N agents and an agent
is selected) it is watched for --seconds, the selection moving one agent up or down every
--press-every seconds (`pilot.press`). Over that window:

- tmux client calls per second: `Tmux.run` and `Tmux.version` are counted on the class (LiveSource
  opens a fresh App, so a fresh Tmux, per call), by what asked (snapshot, preview, events) and
  by tmux command;
- CPU per second of this process (`time.process_time`: the TUI, its worker threads, the bench's
  pilot), of its child tmux clients (`RUSAGE_CHILDREN`) and of the tmux server (psutil);
- `LiveSource.snapshot()` wall time as the app's workers run it, `render_rows` and
  `apply_snapshot` on the UI thread as the app calls them, and the event loop's lag (a 20 ms
  sleeper's overshoot);
- after each key press, the time until the details panel and until the preview were given the
  newly selected agent (the app's show_details / _show_preview wrapped on the instance; the
  preview is tmux round trips on a worker thread);
- the RowHighlighted events that reach the app beyond the key presses (each starts a preview);
- the statuses of every applied snapshot (all N agents must read idle).

Then, outside the window: a burst of --burst key presses as fast as the pilot sends them
(previews and tmux calls), `render_rows` timed --renders times in an app of its own showing the
last snapshot through a fixed source (no tmux, no busy worker), and `LiveSource().snapshot()`
--snapshots times on the main thread with no UI running (and its parts `open_app` and
`observe.refresh`). Before an app exits its intervals are stopped and its workers awaited: a
preview worker started during shutdown fails in `selected()` (NoMatches) and the app re-raises.

Target: tmux calls per second at the largest N <= 1.2 x those at the smallest, and every
snapshot all idle (exit 1 if not).

    .venv/bin/python bench/bench_tui.py [--agents 10,200] [--seconds 15] [--press-every 1.5]
        [--spawners 4] [--burst 10] [--renders 20] [--snapshots 10] [--json]
"""

from __future__ import annotations

import asyncio
import resource
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import psutil

from roost.core.events import Event
from roost.ops import lifecycle, observe
from roost.ops import workspace as wsops
from roost.ops.root import open_app
from roost.tmux.client import Tmux
from roost.tui.app import RoostApp
from roost.tui.demo import StaticSource
from roost.tui.live import LiveSource

from _common import World, environ, finish, ms, parser, summary, table, world

TARGET = 1.2  # tmux calls per second at the largest N / at the smallest
TABS = {**dict.fromkeys(range(4), "main"), **dict.fromkeys(range(4, 8), "review")}
PINNED = (2, 9)


def kind(i: int) -> str:
    """Agent i's provider: per 10 agents 1 codex, 2 claude, 7 commands."""
    return "codex" if i % 10 == 0 else "claude" if i % 10 in (1, 6) else "command"


def agent_name(i: int) -> str:
    return f"{kind(i)}-{i:03d}"


# ---- the world -------------------------------------------------------------------------------
def spawn_one(w: World, i: int) -> None:
    app = open_app()
    try:
        cwd = w.tmp / "work" / f"p{i:03d}"
        cwd.mkdir()
        place = lifecycle.Place(tab=TABS[i]) if i in TABS else lifecycle.Place(detached=True)
        args = ("sleep", "1000") if kind(i) == "command" else ()
        lifecycle.spawn(app, agent_name(i), provider=kind(i), cwd=str(cwd), args=args, place=place)
    finally:
        app.close()


def spawn_up_to(w: World, have: int, want: int, spawners: int) -> float:
    """Agents have..want-1: the tiles one by one (their order is the layout's), then the parked
    ones concurrently, commands first (they read as "starting" for 20 s)."""
    t0 = time.perf_counter()
    for i in range(have, want):
        if i in TABS:
            spawn_one(w, i)
    rest = sorted(
        (i for i in range(have, want) if i not in TABS), key=lambda i: kind(i) != "command"
    )
    with ThreadPoolExecutor(max_workers=spawners) as pool:
        list(pool.map(lambda i: spawn_one(w, i), rest))  # list(): raise the first failure
    app = open_app()
    try:
        for i in PINNED:
            if have <= i < want:
                wsops.pin(app, agent_name(i))
    finally:
        app.close()
    return time.perf_counter() - t0


def wait_idle(n: int, timeout: float = 90.0) -> float:
    t0 = time.monotonic()
    app = open_app()
    try:
        while True:
            items = observe.refresh(app)
            if len(items) == n and all(i.status == "idle" for i in items):
                return time.monotonic() - t0
            if time.monotonic() - t0 > timeout:
                bad = {i.agent.name: i.status for i in items if i.status != "idle"}
                raise RuntimeError(f"timed out waiting for {n} idle agents: {bad}")
            time.sleep(0.5)
    finally:
        app.close()


# ---- what is counted -------------------------------------------------------------------------
class Calls:
    """Every tmux client call of this process, by what asked for it (the LiveSource method on the
    calling thread) and by tmux command. Patched on the class: each LiveSource call opens an App
    with a Tmux of its own, so no instance counter sees them all."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by: Counter[tuple[str, str]] = Counter()
        self.captured: list[int] = []  # panes per chained capture (the snapshot's)
        self.local = threading.local()
        self.saved: tuple[Any, Any] | None = None

    def total(self) -> int:
        with self.lock:
            return sum(self.by.values())

    def copy(self) -> Counter[tuple[str, str]]:
        with self.lock:
            return Counter(self.by)

    def add(self, command: str, chained: int) -> None:
        op = getattr(self.local, "op", "other")
        with self.lock:
            self.by[(op, command)] += 1
            if chained:
                self.captured.append((chained + 1) // 2)

    @contextmanager
    def doing(self, op: str) -> Iterator[None]:
        before = getattr(self.local, "op", "other")
        self.local.op = op
        try:
            yield
        finally:
            self.local.op = before

    def install(self) -> None:
        run, version = Tmux.run, Tmux.version
        self.saved = (run, version)
        calls = self

        def counted_run(tmux: Tmux, *args: str, **kw: Any) -> str:
            calls.add(
                args[0] if args else "?", args.count(";") if args[:1] == ("capture-pane",) else 0
            )
            return run(tmux, *args, **kw)

        def counted_version(tmux: Tmux) -> tuple[int, int]:
            calls.add("-V", 0)
            return version(tmux)

        Tmux.run = counted_run  # type: ignore[method-assign]
        Tmux.version = counted_version  # type: ignore[method-assign]

    def uninstall(self) -> None:
        if self.saved:
            Tmux.run, Tmux.version = self.saved  # type: ignore[method-assign]


class MeteredSource(LiveSource):
    """The real LiveSource; each call timed and its tmux calls tagged with its name."""

    def __init__(self, calls: Calls) -> None:
        self.calls = calls
        self.times: dict[str, list[float]] = {"snapshot": [], "preview": [], "events": []}

    def _metered(self, op: str, fn: Callable[[], Any]) -> Any:
        with self.calls.doing(op):
            t0 = time.perf_counter()
            try:
                return fn()
            finally:
                self.times[op].append(time.perf_counter() - t0)

    def snapshot(self) -> Any:
        return self._metered("snapshot", super().snapshot)

    def preview(self, name: str, lines: int = 60, pane_id: str | None = None) -> str:
        return self._metered(
            "preview", lambda: super(MeteredSource, self).preview(name, lines, pane_id=pane_id)
        )

    def events(self, name: str, limit: int = 8) -> list[Event]:
        return self._metered("events", lambda: super(MeteredSource, self).events(name, limit))


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def proc_cpu(p: psutil.Process) -> float:
    t = p.cpu_times()
    return t.user + t.system


# ---- the app ---------------------------------------------------------------------------------
def details_name(app: RoostApp) -> str | None:
    """The agent the details panel shows ("[b]NAME[/b] ..." on its first line), or None."""
    text = str(app.query_one("#details").content)  # type: ignore[attr-defined]
    first = text.split("\n", 1)[0]
    return first[3 : first.index("[/b]")] if first.startswith("[b]") and "[/b]" in first else None


def preview_name(app: RoostApp) -> str | None:
    title = app.query_one("#preview").border_title or ""
    return str(title).split(" — ", 1)[0] if " — " in str(title) else None


async def until(ok: Callable[[], bool], timeout: float = 10.0) -> float:
    """Seconds until ok() holds, looking every millisecond; raises on timeout."""
    t0 = time.perf_counter()
    while not ok():
        if time.perf_counter() - t0 > timeout:
            raise RuntimeError("timed out in the TUI")
        await asyncio.sleep(0.001)
    return time.perf_counter() - t0


class Shown:
    """When the details panel and the preview were last given an agent: the app's own
    show_details and _show_preview wrapped on the instance (the app calls them through self).
    Pilot.press itself returns only once the process looks idle (textual's wait_for_idle: 40 ms
    at least, longer while the workers run), so its return says nothing about latency."""

    def __init__(self, app: RoostApp) -> None:
        self.details: list[tuple[str | None, float]] = []
        self.preview: list[tuple[str, float]] = []
        show_details, show_preview = app.show_details, app._show_preview

        def details() -> None:
            show_details()
            self.details.append((details_name(app), time.perf_counter()))

        def preview(name: str, text: str) -> None:
            show_preview(name, text)
            self.preview.append((name, time.perf_counter()))

        app.show_details = details  # type: ignore[method-assign]
        app._show_preview = preview  # type: ignore[method-assign]

    @staticmethod
    def first(seen: list[Any], name: str, since: float) -> float | None:
        return next((t for n, t in list(seen) if n == name and t >= since), None)


class Mover:
    """Moves the selection one agent at a time, down to the end of the list, then back up."""

    def __init__(self, app: RoostApp, pilot: Any) -> None:
        self.app, self.pilot = app, pilot
        self.shown = Shown(app)
        self.step = 1
        self.presses = 0

    def cursor(self) -> int:
        return self.app.query_one("#agents").cursor_row  # type: ignore[attr-defined]

    async def press(self) -> None:
        """One key press, turning at either end of the list."""
        if not 0 <= self.cursor() + self.step < len(self.app.rows):
            self.step = -self.step
        await self.pilot.press("down" if self.step > 0 else "up")
        self.presses += 1

    async def move(self) -> tuple[str, float, float]:
        """One move onto the next agent (over a group header with a second press): the agent,
        and the seconds from its key press until the details panel and until the preview were
        given it."""
        rows = self.app.rows
        target = self.cursor() + self.step
        while not 0 <= target < len(rows) or rows[target].item is None:
            if not 0 <= target < len(rows):
                self.step = -self.step
                target = self.cursor()
            target += self.step
        while self.cursor() != target - self.step:  # over a header
            await self.press()
        name = rows[target].item.agent.name  # type: ignore[union-attr]
        t0 = time.perf_counter()
        await self.press()
        shown = self.shown
        await until(lambda: shown.first(shown.details, name, t0) is not None)
        await until(lambda: shown.first(shown.preview, name, t0) is not None)
        return (
            name,
            shown.first(shown.details, name, t0) - t0,  # type: ignore[operator]
            shown.first(shown.preview, name, t0) - t0,
        )


async def settle(app: RoostApp) -> None:
    """Wait for the workers running now (a cancelled one is fine: exclusive workers replace
    each other)."""
    await asyncio.gather(*[wk.wait() for wk in list(app.workers)], return_exceptions=True)


async def quiesce(app: RoostApp, timers: list[Any]) -> None:
    """Before the app exits: no interval starts a worker any more, the messages already posted
    (RowHighlighted after a rebuild) have started theirs, and those have ended. A preview worker
    that starts while the app shuts down fails (it reads the selection from the DOM on its own
    thread) and the app re-raises that."""
    for timer in timers:
        timer.stop()
    for _ in range(2):
        await asyncio.sleep(0.2)
        await settle(app)


async def watch_lag(stop: asyncio.Event, lags: list[float], tick: float = 0.02) -> None:
    while not stop.is_set():
        t0 = time.perf_counter()
        await asyncio.sleep(tick)
        lags.append(time.perf_counter() - t0 - tick)


async def drive(
    n: int, seconds: float, press_every: float, burst: int, renders: int, server: psutil.Process
) -> dict[str, Any]:
    calls = Calls()
    calls.install()
    source = MeteredSource(calls)
    app = RoostApp(source=source, attacher=lambda argv: None, refresh_every=1.0)
    timers: list[Any] = []  # the app's two 1 s intervals, stopped before the app exits
    set_interval = app.set_interval

    def recording_set_interval(*a: Any, **kw: Any) -> Any:
        timers.append(set_interval(*a, **kw))
        return timers[-1]

    app.set_interval = recording_set_interval  # type: ignore[method-assign]
    render_s: list[float] = []
    apply_s: list[float] = []
    try:
        async with app.run_test(size=(160, 50)) as pilot:
            await until(lambda: sum(1 for r in app.rows if r.item) == n, timeout=30)
            mover = Mover(app, pilot)
            await mover.move()
            await asyncio.sleep(2.0)  # the intervals run; the workers of the first moves end

            for attr, samples in (("render_rows", render_s), ("apply_snapshot", apply_s)):
                original = getattr(app, attr)

                def timed(
                    *a: Any, _f: Callable[..., Any] = original, _s: list[Any] = samples
                ) -> None:
                    t0 = time.perf_counter()
                    try:
                        _f(*a)
                    finally:
                        _s.append(time.perf_counter() - t0)

                setattr(app, attr, timed)  # the app calls self.render_rows / apply_snapshot

            # What every applied snapshot showed: the bench measures N idle agents.
            seen: list[Counter[str]] = []
            timed_apply = app.apply_snapshot

            def apply_and_check(snap: Any) -> None:
                seen.append(Counter(i.status for i in snap.items))
                timed_apply(snap)

            app.apply_snapshot = apply_and_check  # type: ignore[method-assign]

            # Previews asked for by a RowHighlighted (the 1 s interval holds the bound method it
            # got at mount, so it is not counted here): key presses, and whatever else moves the
            # cursor.
            highlighted: list[float] = []
            interval_preview = app.refresh_preview

            def preview_on_highlight() -> Any:
                highlighted.append(time.perf_counter())
                return interval_preview()

            app.refresh_preview = preview_on_highlight  # type: ignore[method-assign]

            for v in source.times.values():
                del v[:]
            stop = asyncio.Event()
            lags: list[float] = []
            lag_task = asyncio.create_task(watch_lag(stop, lags))
            moves: list[tuple[str, float, float]] = []
            presses0 = mover.presses
            c0, by0 = calls.total(), calls.copy()
            del calls.captured[:]
            p0, k0, s0 = time.process_time(), children_cpu(), proc_cpu(server)
            t0 = time.perf_counter()
            next_press = t0 + press_every / 2
            while (now := time.perf_counter()) < t0 + seconds:
                if now >= next_press:
                    moves.append(await mover.move())
                    next_press += press_every
                await asyncio.sleep(0.02)
            wall = time.perf_counter() - t0
            cpu, kids, srv = (time.process_time() - p0, children_cpu() - k0, proc_cpu(server) - s0)
            ncalls = calls.total() - c0
            presses = mover.presses - presses0
            highlights = sum(1 for h in highlighted if t0 <= h <= t0 + wall)
            by = calls.copy() - by0
            captured = list(calls.captured)
            stop.set()
            await lag_task
            window_times = {k: list(v) for k, v in source.times.items()}
            window_seen = list(seen)
            in_window_render, in_window_apply = list(render_s), list(apply_s)

            # A burst: key presses as fast as the pilot sends them (about what key repeat does).
            await asyncio.sleep(1.2)
            await settle(app)
            b0, h0 = calls.copy(), len(highlighted)
            previews0 = len(source.times["preview"])
            burst_t0 = time.perf_counter()
            for _ in range(burst):
                await mover.press()
            burst_wall = time.perf_counter() - burst_t0
            await settle(app)
            burst_by = calls.copy() - b0
            burst_previews = len(source.times["preview"]) - previews0
            burst_highlights = len(highlighted) - h0
            snap = app.snapshot
            await quiesce(app, timers)
    finally:
        calls.uninstall()
    micro_render = await render_alone(snap, renders)

    ops: Counter[str] = Counter()
    commands: Counter[str] = Counter()
    for (op, command), count in by.items():
        ops[op] += count
        commands[f"{op}: {command}"] += count
    return {
        "agents": n,
        "wall_s": wall,
        "statuses_seen": dict(sum(window_seen, Counter())),
        "all_idle": bool(window_seen) and all(c == Counter(idle=n) for c in window_seen),
        "calls_per_snapshot": ops["snapshot"] / max(1, len(window_times["snapshot"])),
        "calls_per_preview": ops["preview"] / max(1, len(window_times["preview"])),
        "tmux_calls": ncalls,
        "tmux_calls_per_s": ncalls / wall,
        "calls_by_op_per_s": {k: v / wall for k, v in sorted(ops.items())},
        "calls_by_command": dict(sorted(commands.items())),
        "panes_per_chained_capture": summary(captured) if captured else None,
        "cpu_self_pct": 100 * cpu / wall,
        "cpu_tmux_clients_pct": 100 * kids / wall,
        "cpu_tmux_server_pct": 100 * srv / wall,
        "snapshots": len(window_times["snapshot"]),
        "previews": len(window_times["preview"]),
        "events_reads": len(window_times["events"]),
        "snapshot_s": summary(window_times["snapshot"]),
        "preview_s": summary(window_times["preview"]) if window_times["preview"] else None,
        "render_rows_s": summary(in_window_render),
        "apply_snapshot_s": summary(in_window_apply),
        "loop_lag_s": summary(lags),
        "loop_lags_over_50ms": sorted(x for x in lags if x > 0.05),
        "highlights": highlights,
        "highlights_without_a_key_per_s": (highlights - presses) / wall,
        "presses": presses,
        "moves": len(moves),
        "details_latency_s": summary([m[1] for m in moves]),
        "preview_latency_s": summary([m[2] for m in moves]),
        "burst": {
            "presses": burst,
            "wall_s": burst_wall,
            "previews": burst_previews,
            "highlights": burst_highlights,
            "tmux_calls": sum(burst_by.values()),
            "preview_calls": sum(v for (op, _c), v in burst_by.items() if op == "preview"),
        },
        "render_rows_alone_s": summary(micro_render),
        "samples": {
            "snapshot": window_times["snapshot"],
            "render_rows": in_window_render,
            "render_rows_alone": micro_render,
            "details_latency": [m[1] for m in moves],
            "preview_latency": [m[2] for m in moves],
        },
    }


class FixedSource(StaticSource):
    """One snapshot, a fixed screen, no events: the UI's own cost, with no worker thread busy."""

    def preview(self, name: str, lines: int = 60, pane_id: str | None = None) -> str:
        return "fixed screen\n"

    def events(self, name: str, limit: int = 8) -> list[Event]:
        return []


async def render_alone(snap: Any, reps: int) -> list[float]:
    """`render_rows` in an app of its own showing the live run's last snapshot (refresh_every=0:
    no interval, no tmux), an agent in the middle of the list selected; each call timed alone,
    the app left to settle (highlight, repaint) between calls."""
    app = RoostApp(source=FixedSource(snap), attacher=lambda argv: None, refresh_every=0)
    out: list[float] = []
    async with app.run_test(size=(160, 50)):
        await until(lambda: len(app.rows) > 0)
        agents = [i for i, r in enumerate(app.rows) if r.item]
        app.query_one("#agents").move_cursor(row=agents[len(agents) // 2])  # type: ignore
        for rep in range(reps + 2):  # two warm-up calls
            await asyncio.sleep(0.05)
            t0 = time.perf_counter()
            app.render_rows()
            if rep >= 2:
                out.append(time.perf_counter() - t0)
        await quiesce(app, [])
    return out


def standalone_snapshots(reps: int) -> dict[str, Any]:
    """LiveSource().snapshot() on this thread with no UI, and its parts."""
    source = LiveSource()
    source.snapshot()  # warm-up
    whole, opened, refreshed = [], [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        source.snapshot()
        whole.append(time.perf_counter() - t0)
    for _ in range(reps):
        t0 = time.perf_counter()
        app = open_app()
        t1 = time.perf_counter()
        observe.refresh(app)
        t2 = time.perf_counter()
        app.close()
        opened.append(t1 - t0)
        refreshed.append(t2 - t1)
    return {
        "snapshot_s": summary(whole),
        "open_app_s": summary(opened),
        "refresh_s": summary(refreshed),
    }


# ---- main ------------------------------------------------------------------------------------
def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--agents", default="10,200", help="the Ns, ascending, comma-separated")
    p.add_argument("--seconds", type=float, default=15.0)
    p.add_argument("--press-every", type=float, default=1.5)
    p.add_argument("--spawners", type=int, default=4)
    p.add_argument("--burst", type=int, default=10)
    p.add_argument("--renders", type=int, default=20)
    p.add_argument("--snapshots", type=int, default=10)
    opts = p.parse_args()
    ns = [int(n) for n in opts.agents.split(",")]
    assert ns == sorted(ns) and ns[0] >= 10, "--agents must ascend, from 10"

    stages: list[dict[str, Any]] = []
    t_start = time.perf_counter()
    with world("tui") as w, environ(w.env):
        w.roost("ls")  # the store, its schema, the bytecode cache
        have = 0
        server = None
        for n in ns:
            spawned = spawn_up_to(w, have, n, opts.spawners)
            have = n
            waited = wait_idle(n)
            if server is None:
                server = psutil.Process(int(w.panes("#{pid}")[0][0]))
            stage = asyncio.run(
                drive(n, opts.seconds, opts.press_every, opts.burst, opts.renders, server)
            )
            stage.update(
                spawn_s=spawned,
                idle_after_s=waited,
                standalone=standalone_snapshots(opts.snapshots),
                mix={
                    k: sum(kind(i) == k for i in range(n)) for k in ("codex", "claude", "command")
                },
                live_panes=len(w.panes("#{pane_id}")),
            )
            stages.append(stage)
    total = time.perf_counter() - t_start

    first, last = stages[0], stages[-1]
    ratio = last["tmux_calls_per_s"] / first["tmux_calls_per_s"]
    all_idle = all(s["all_idle"] for s in stages)
    ok = ratio <= TARGET and all_idle

    def pct(x: float) -> str:
        return f"{x:.1f}"

    rows = [
        (
            "N",
            "tmux calls/s",
            "snapshot/preview/events",
            "cpu % TUI",
            "tmux clients",
            "tmux server",
            "snapshot med",
            "p90",
            "render_rows med",
            "p90",
            "loop lag p90",
            "max",
        )
    ]
    for s in stages:
        by = s["calls_by_op_per_s"]
        rows.append(
            (
                s["agents"],
                f"{s['tmux_calls_per_s']:.2f}",
                "/".join(f"{by.get(k, 0):.2f}" for k in ("snapshot", "preview", "events")),
                pct(s["cpu_self_pct"]),
                pct(s["cpu_tmux_clients_pct"]),
                pct(s["cpu_tmux_server_pct"]),
                ms(s["snapshot_s"]["median"]),
                ms(s["snapshot_s"]["p90"]),
                ms(s["render_rows_s"]["median"]),
                ms(s["render_rows_s"]["p90"]),
                ms(s["loop_lag_s"]["p90"]),
                ms(s["loop_lag_s"]["max"]),
            )
        )
    lat = [("N", "moves", "details med", "p90", "max", "preview med", "p90", "max")]
    for s in stages:
        d, v = s["details_latency_s"], s["preview_latency_s"]
        lat.append(
            (
                s["agents"],
                s["moves"],
                ms(d["median"]),
                ms(d["p90"]),
                ms(d["max"]),
                ms(v["median"]),
                ms(v["p90"]),
                ms(v["max"]),
            )
        )
    extra = [
        (
            "N",
            "snapshots",
            "calls each",
            "previews",
            "calls each",
            "preview med",
            "events",
            "panes/capture",
            "apply_snapshot med",
            "render_rows alone med",
            "snapshot alone med",
            "open_app",
            "observe.refresh",
        )
    ]
    for s in stages:
        sa = s["standalone"]
        cap = s["panes_per_chained_capture"]
        extra.append(
            (
                s["agents"],
                s["snapshots"],
                f"{s['calls_per_snapshot']:.1f}",
                s["previews"],
                f"{s['calls_per_preview']:.1f}",
                ms(s["preview_s"]["median"]) if s["preview_s"] else "-",
                s["events_reads"],
                f"{cap['median']:.0f}" if cap else "-",
                ms(s["apply_snapshot_s"]["median"]),
                ms(s["render_rows_alone_s"]["median"]),
                ms(sa["snapshot_s"]["median"]),
                ms(sa["open_app_s"]["median"]),
                ms(sa["refresh_s"]["median"]),
            )
        )
    lines = [
        (
            f"TUI with refresh_every=1.0, headless 160x50, {opts.seconds:.0f} s per N, a "
            "move every "
            f"{opts.press_every} s (ms; cpu in % of one core: this process, its tmux clients, the "
            "tmux server)\n"
        ),
        table(rows),
        "\nfrom a key press until the details panel / the preview show the new agent (ms):",
        table(lat),
        "\nin the window (counts), and timed on their own (ms):",
        table(extra),
        "\ntmux calls in the window by command: "
        + "; ".join(
            f"N={s['agents']}: " + ", ".join(f"{k} {v}" for k, v in s["calls_by_command"].items())
            for s in stages
        ),
        "RowHighlighted per second with no key pressed: "
        + "; ".join(
            f"N={s['agents']}: {s['highlights_without_a_key_per_s']:.2f} ({s['highlights']} in "
            f"the window, {s['presses']} key presses)"
            for s in stages
        ),
        "burst of key presses: "
        + "; ".join(
            f"N={s['agents']}: {s['burst']['presses']} presses in {s['burst']['wall_s']:.2f} s, "
            f"{s['burst']['previews']} previews, {s['burst']['tmux_calls']} tmux calls"
            for s in stages
        ),
        "mix: "
        + "; ".join(
            f"N={s['agents']}: "
            + ", ".join(f"{v} {k}" for k, v in s["mix"].items())
            + f" ({s['live_panes']} panes with the keepers)"
            for s in stages
        ),
        "setup: "
        + "; ".join(
            f"N={s['agents']}: spawned in {s['spawn_s']:.1f} s, all idle "
            f"{s['idle_after_s']:.1f} s later"
            for s in stages
        ),
        (
            f"\ntmux calls per second, N={last['agents']} / N={first['agents']}: {ratio:.2f} "
            f"(target <= {TARGET}); every snapshot in the windows showed all N agents idle: "
            f"{'yes' if all_idle else 'NO: ' + '; '.join(str(s['statuses_seen']) for s in stages)}"
            f"; total {total:.0f} s"
        ),
    ]
    results = {
        "ns": ns,
        "seconds": opts.seconds,
        "press_every": opts.press_every,
        "calls_ratio": ratio,
        "target": TARGET,
        "stages": stages,
        "total_s": total,
    }
    return finish("bench_tui", results, "\n".join(lines), ok, opts.json)


if __name__ == "__main__":
    sys.exit(main())
