"""The roost service's numbers (issue 21) at N live agents, before/after in one world, one run.

The world: N agents spawned in-process as bench_tui.py spawns them (per 10: 1 fake codex, 2 fake
claude, 7 `--provider command -- sleep 1000`), agents 0-7 tiles of tab `main`, the rest parked;
the bench waits until every agent is idle.

1. Idle cost, nothing changing: the real `RoostApp` headless (`run_test`) on the real
   `LiveSource` with its 1 s timers, in the list view and in the tab view of 8 live tiles, for
   --seconds each; CPU per second of the TUI (this process and its tmux clients), the service
   (its process and its children) and the tmux server (its own process: until stop 31 its
   panes' processes were counted too, the service among them, which counted the service twice),
   as a % of one core; the agents' and keepers' processes are shown apart. "before": the service
   stopped (today's refresh every second); "after": the service running.
2. Latency: a screen change (a fake codex starts a turn: `work 2` typed into its pane with
   send-keys) and an exit (`crash 3` typed) until `roost watch --json` prints that agent's
   `working` / `exited` line (a reader thread stamps each line as it arrives): median and p95
   over --samples of each, without the service (`watch --interval 1`, today) and with it; the
   exits also with the service but the pane-died hook without its poke to the service's
   control client ("after, no poke": the service before branch svc2, where an exit waited for
   the subscription's next check), in the same world.
4. The monitor's refresh of one changed pane, as it is and as before branch svc3 (every
   agent's session id and hook log looked at too), median of 5 each, in-process.
3. The hook-log watch's idle cost: one look (a stat of each live claude's hook log) timed over
   1,000 looks, as a % of one core at the monitor's HOOKS interval.

    .venv/bin/python bench/bench_service.py [--agents 200] [--seconds 20] [--samples 10] [--json]
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

import psutil
from bench_tui import agent_name, kind, wait_idle

from roost.ops import lifecycle
from roost.ops.root import open_app
from roost.tui.app import RoostApp, TabScreen
from roost.tui.live import LiveSource

from _common import PYTHON, World, environ, finish, parser, table, world

TILES = 8
TURN = 6.0  # seconds a sampled turn lasts
TARGETS = {"list": 1.0, "tab": 3.0}  # % of one core, TUI + service + tmux server, idle


def spawn_all(w: World, n: int) -> None:
    app = open_app()
    try:
        for i in range(n):
            cwd = w.tmp / "work" / f"p{i:03d}"
            cwd.mkdir()
            place = lifecycle.Place(tab="main") if i < TILES else lifecycle.Place(detached=True)
            args = ("sleep", "86400") if kind(i) == "command" else ()  # outlives any run
            lifecycle.spawn(
                app, agent_name(i), provider=kind(i), cwd=str(cwd), args=args, place=place
            )
    finally:
        app.close()


# ---- CPU ------------------------------------------------------------------------------------
def tree_cpu(pid: int | None, without: int | None = None) -> float:
    """CPU seconds of a process, its reaped children and its live ones (the live process
    `without` and what runs under it left out)."""
    if pid is None:
        return 0.0
    try:
        p = psutil.Process(pid)
        t = p.cpu_times()
        total = t.user + t.system + t.children_user + t.children_system
        skip = set()
        if without is not None:
            with contextlib.suppress(psutil.Error):
                skip = {without, *(c.pid for c in psutil.Process(without).children(True))}
        for child in p.children(recursive=True):
            if child.pid in skip:
                continue
            with_child = child.cpu_times()
            total += with_child.user + with_child.system
        return total
    except psutil.Error:
        return 0.0


def server_cpu(pid: int) -> float:
    """The tmux server's own CPU seconds, without its panes' processes."""
    try:
        t = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return 0.0
    return t.user + t.system


def own_cpu() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def service_pid(w: World) -> int | None:
    status = json.loads(w.roost("service", "status", "--json"))
    return status["pid"] if status["running"] else None


async def idle_cost(w: World, view: str, seconds: float) -> dict[str, float]:
    """% of one core over `seconds` after a warm-up, by who spent it."""
    server = int(w.tmux("display-message", "-p", "#{pid}").strip())
    svc = service_pid(w)
    app = RoostApp(source=LiveSource(), attacher=lambda argv: None, refresh_every=1.0)
    async with app.run_test(size=(160, 50)) as pilot:
        while len([r for r in app.rows if r.item]) < 1:
            await pilot.pause(0.2)
        if view == "tab":
            app.push_screen(TabScreen("main"))
        await pilot.pause(4.0)  # warm-up: first snapshots and captures

        # The service runs in a pane of the server: its CPU is counted once, as the service's;
        # the panes' agents and keepers are shown apart, outside the total.
        def sample() -> tuple[float, ...]:
            return (
                own_cpu(),
                tree_cpu(svc),
                server_cpu(server),
                tree_cpu(server, without=svc) - server_cpu(server),
                time.monotonic(),
            )

        marks = sample()
        await pilot.pause(seconds)
        ends = sample()
        for timer in list(app._timers):
            timer.stop()
        await asyncio.sleep(0.5)
        await asyncio.gather(*[wk.wait() for wk in list(app.workers)], return_exceptions=True)
    span = ends[4] - marks[4]
    tui, service, tmux, panes = ((ends[i] - marks[i]) / span * 100 for i in range(4))
    total = tui + service + tmux
    return {"tui": tui, "service": service, "tmux": tmux, "total": total, "panes": panes}


# ---- latency ---------------------------------------------------------------------------------
class Watch:
    def __init__(self, w: World, *args: str) -> None:
        self.proc = subprocess.Popen(
            [PYTHON, "-m", "roost", "watch", "--json", *args],
            stdout=subprocess.PIPE,
            text=True,
            env=w.env,
            cwd=w.tmp,
        )
        self.lines: list[tuple[float, dict[str, Any]]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout or ():
            self.lines.append((time.monotonic(), json.loads(line)))

    def when(self, name: str, status: str, after: float, timeout: float = 30.0) -> float:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for at, d in list(self.lines):
                if at >= after and d.get("name") == name and d.get("status") == status:
                    return at
            time.sleep(0.01)
        raise RuntimeError(
            f"watch printed no {status} of {name} within {timeout} s: {self.lines[-20:]}"
        )

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


def latencies(w: World, codexes: list[str], samples: int, args: list[str]) -> dict[str, Any]:
    """Screen change and exit → watch line, `samples` of each (exits take one codex each)."""
    watch = Watch(w, *args)
    try:
        while not watch.lines:
            time.sleep(0.05)
        screen: list[float] = []
        exits: list[float] = []
        for k in range(samples):
            name = codexes[k % len(codexes)]
            pane = pane_of(w, name)
            t0 = time.monotonic()
            # A turn long enough that a once-a-second look (at 200 agents, on a busy machine)
            # does not miss it altogether.
            w.tmux("send-keys", "-t", pane, "-l", f"work {TURN:g}")
            w.tmux("send-keys", "-t", pane, "Enter")
            screen.append(watch.when(name, "working", t0) - t0)
            watch.when(name, "idle", t0)
        return {"screen": screen, "exit": exits, "watch": watch}
    except BaseException:
        watch.close()
        raise


def exit_latencies(w: World, watch: Watch, names: list[str]) -> list[float]:
    found = []
    for name in names:
        pane = pane_of(w, name)
        t0 = time.monotonic()
        w.tmux("send-keys", "-t", pane, "-l", "crash 3")
        w.tmux("send-keys", "-t", pane, "Enter")
        found.append(watch.when(name, "exited", t0) - t0)
    return found


def without_poke(w: World) -> None:
    """The global pane-died hook as it was before branch svc2: keeper and supervisor only."""
    from roost.tmux.client import Tmux, _command_string

    app = open_app()
    try:
        assert isinstance(app.tmux, Tmux)
        supervisor = _command_string(app.tmux.supervisor)
    finally:
        app.close()
    hook = f'respawn-pane -k -t :0.0 ; run-shell -b "{supervisor} #{{hook_pane}}"'
    w.tmux("set-hook", "-g", "pane-died", hook)


def hook_watch_cost() -> dict[str, float]:
    """The monitor's hook-log look (service/monitor.py HookLogs.grown) over this world's logs."""
    from roost.service import monitor

    app = open_app()
    try:
        logs = monitor.HookLogs(app)
        logs.look_up()
        looks = 1000
        t0 = time.perf_counter()
        for _ in range(looks):
            logs.grown()
        per_look = (time.perf_counter() - t0) / looks
    finally:
        app.close()
    return {
        "logs": len(logs.sizes),
        "us_per_look": per_look * 1e6,
        "pct_of_core": per_look / monitor.HOOKS * 100,
    }


def refresh_cost(w: World, name: str, rounds: int = 5) -> dict[str, float]:
    """The monitor's refresh of one changed pane (observe.refresh with `only`), median seconds
    of `rounds`: as it is, and as before branch svc3, when it also learned every agent's session
    id (each codex awaiting one: its process tree's open files) and read every hook log."""
    from roost.ops import learn, observe

    app = open_app()
    try:
        only = {pane_of(w, name)}

        def old() -> None:
            agents = app.store.agents()
            learn.learn_session_ids(app, agents, app.tmux.list_panes())
            for agent in agents:
                learn.apply_hook_log(app, agent)
            observe.refresh(app, only)

        found: dict[str, list[float]] = {"now": [], "before svc3": []}
        for _ in range(rounds):
            for label, step in (("now", lambda: observe.refresh(app, only)), ("before svc3", old)):
                t0 = time.perf_counter()
                step()
                found[label].append(time.perf_counter() - t0)
    finally:
        app.close()
    return {label: statistics.median(v) for label, v in found.items()}


def pane_of(w: World, name: str) -> str:
    """The agent's own pane (its window carries its name)."""
    return next(p[1] for p in w.panes("#{window_name}\t#{pane_id}") if p[0] == name)


def dist(samples: list[float]) -> dict[str, float]:
    s = sorted(samples) or [float("nan")]
    p95 = statistics.quantiles(s, n=20, method="inclusive")[18] if len(s) > 1 else s[0]
    return {"n": len(s), "median": statistics.median(s), "p95": p95, "max": s[-1]}


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--agents", type=int, default=200)
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--samples", type=int, default=10)
    a = p.parse_args()
    results: dict[str, Any] = {"agents": a.agents}
    with world("svc") as w, environ(w.env):
        t0 = time.monotonic()
        spawn_all(w, a.agents)
        wait_idle(a.agents, timeout=300)
        results["setup_s"] = time.monotonic() - t0
        codexes = [agent_name(i) for i in range(a.agents) if kind(i) == "codex"]
        claudes = [agent_name(i) for i in range(a.agents) if kind(i) == "claude"]
        cost: dict[str, dict[str, dict[str, float]]] = {}
        for phase in ("before", "after"):
            w.roost("service", "stop" if phase == "before" else "start")
            cost[phase] = {v: asyncio.run(idle_cost(w, v, a.seconds)) for v in ("list", "tab")}
            print(f"idle {phase}: {json.dumps(cost[phase])}", file=sys.stderr, flush=True)
        results["idle_pct_of_core"] = cost
        lat: dict[str, Any] = {}
        results["hook_watch"] = hook_watch_cost()
        print(f"hook watch: {json.dumps(results['hook_watch'])}", file=sys.stderr, flush=True)
        results["refresh_one_pane_s"] = refresh_cost(w, codexes[-1])
        print(f"refresh: {json.dumps(results['refresh_one_pane_s'])}", file=sys.stderr, flush=True)
        # Half the codexes take the turns; the other half and the claudes exit, a third per phase.
        turns, rest = codexes[: len(codexes) // 2 or 1], codexes[len(codexes) // 2 :] + claudes
        k = min(a.samples, len(rest) // 3)
        for phase, args, dead in (
            ("before", ["--interval", "1"], rest[:k]),
            ("after", ["--interval", "60"], rest[k : 2 * k]),
            ("after, no poke", ["--interval", "60"], rest[2 * k : 3 * k]),
        ):
            w.roost("service", "stop" if phase == "before" else "start")
            if phase == "after, no poke":
                without_poke(w)
            try:
                got = latencies(w, turns, a.samples if phase != "after, no poke" else 0, args)
                try:
                    got["exit"] = exit_latencies(w, got["watch"], dead)
                finally:
                    got.pop("watch").close()
            except RuntimeError as exc:  # a turn the looks missed: the number is "missed"
                print(f"latency {phase}: {str(exc)[:300]}", file=sys.stderr, flush=True)
                got = {"screen": [float("inf")], "exit": [float("inf")]}
            lat[phase] = {k2: dist(v) for k2, v in got.items()}
            print(f"latency {phase}: {json.dumps(lat[phase])}", file=sys.stderr, flush=True)
        results["latency_s"] = lat
    rows: list[list[object]] = [["idle, % of one core", "before", "after", "ratio", "target"]]
    for v in ("list", "tab"):
        b, f = cost["before"][v]["total"], cost["after"][v]["total"]
        rows.append(
            [
                f"{v} view (TUI+service+tmux)",
                f"{b:.2f}",
                f"{f:.2f}",
                f"{f / b:.3f}",
                f"<= {TARGETS[v]}",
            ]
        )
        for part in ("tui", "service", "tmux", "panes"):
            rows.append(
                [
                    f"  {part}" if part != "panes" else "  (agents, keepers: not counted)",
                    f"{cost['before'][v][part]:.2f}",
                    f"{cost['after'][v][part]:.2f}",
                    "",
                    "",
                ]
            )
    rows2: list[list[object]] = [
        ["latency to watch, s", "before median", "before p95", "after median", "after p95"]
    ]
    for k in ("screen", "exit"):
        rows2.append(
            [
                k,
                f"{lat['before'][k]['median']:.3f}",
                f"{lat['before'][k]['p95']:.3f}",
                f"{lat['after'][k]['median']:.3f}",
                f"{lat['after'][k]['p95']:.3f}",
            ]
        )
    nopoke = lat["after, no poke"]["exit"]
    rows2.append(["exit, no poke", "", "", f"{nopoke['median']:.3f}", f"{nopoke['p95']:.3f}"])
    ok = all(cost["after"][v]["total"] <= TARGETS[v] for v in TARGETS) and all(
        lat["after"][k]["p95"] <= 1.0 for k in ("screen", "exit")
    )
    hw = results["hook_watch"]
    human = (
        f"{a.agents} agents\n\n{table(rows)}\n\n{table(rows2)}\n\nhook-log watch: "
        f"{hw['logs']} logs, {hw['us_per_look']:.1f} us a look, {hw['pct_of_core']:.3f} % of a core"
        "\nthe monitor's refresh of one changed pane, median s: "
        + ", ".join(f"{k} {v:.3f}" for k, v in results["refresh_one_pane_s"].items())
    )
    return finish("bench_service", results, human, ok, a.json)


if __name__ == "__main__":
    raise SystemExit(main())
