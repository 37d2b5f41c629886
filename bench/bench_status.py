"""The status refresh with 1, 10 and 100 live agents, and the latency of a delivered send.

One world grows from 1 to 10 to 100 live agents, a mix spawned in-process through
`lifecycle.spawn`: 80 % fake claude (status from its hooks), 15 % fake codex (status from its
screen), 5 % `--provider command -- sleep 1000`. Agent 0, the only one at N = 1, is a codex, so
every N needs the one chained screen capture and the tmux calls compare like with like.

- Refresh, in-process, once every agent is idle: `observe.refresh(app)` repeated; per refresh the
  tmux client calls (`app.tmux.calls` delta), the panes captured, wall time, the CPU time of this
  process (`time.process_time`) and of its child tmux clients (`RUSAGE_CHILDREN` delta); and the
  tmux server's CPU over the batch (psutil, per refresh). Target: the same number of tmux calls
  per refresh at every N (exit 1 if not), idle and working alike.
- Working: `work 30` is sent (in-process `send.send`) to up to --working claude agents and one
  codex; refreshes are timed while their spinners are still (as the fake draws them), then while
  they move: the bench rewrites each working pane's spinner line through its tty every 0.25 s,
  as a real CLI's spinner does, so tmux's window_activity passes the last hook event and those
  claude agents need their screen too. Esc then ends the work.
- The refresh's two tmux calls alone (`list-panes -a`, the chained capture of the same panes)
  and an O(1) `display-message -p`, through `Tmux.run`: wall time and the server's CPU per call.
- `python -m roost ls` wall time at each N (idle), interleaved with `python -c pass`, and
  whether it took its fast path.
- Send latency, in the largest world: `python -m roost send NAME TEXT` to an idle fake claude
  (confirmed by its UserPromptSubmit hook) and to a fake codex (confirmed by a screen change),
  and `roost send --wait` to the claude (until its Stop hook's reply), interleaved; plus the same
  sends in-process (wall time and tmux calls). No target.

    .venv/bin/python bench/bench_status.py [--agents 1,10,100] [--refreshes 20] [--ls-runs 10]
        [--working 5] [--sends 10] [--json]
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import psutil

from roost.core.observation import Observation
from roost.ops import lifecycle, observe
from roost.ops import send as sending
from roost.ops.context import App
from roost.ops.root import open_app
from roost.tmux import format as panefmt

from _common import PYTHON, World, environ, finish, ms, parser, summary, table, timed, world

WORK_SECONDS = 30
TICK = 0.25  # seconds between two spinner redraws while "working" screens move
SPINNER = "✻ Working… (esc to interrupt)"  # what the fake CLIs draw while they work


def kind(i: int) -> str:
    """Agent i's provider: per 20 agents 3 codex, 1 command, 16 claude; agent 0 is a codex."""
    return "codex" if i % 20 in (0, 7, 14) else "command" if i % 20 == 5 else "claude"


def agent_name(i: int) -> str:
    return f"{kind(i)}-{i:03d}"


def spawn_up_to(app: App, w: World, have: int, want: int) -> float:
    """Spawn agents have..want-1 (commands first: they read as "starting" for 20 s)."""
    t0 = time.perf_counter()
    for i in sorted(range(have, want), key=lambda i: kind(i) != "command"):
        cwd = w.tmp / "work" / f"p{i:03d}"
        cwd.mkdir()
        args = ("sleep", "1000") if kind(i) == "command" else ()
        lifecycle.spawn(app, agent_name(i), provider=kind(i), cwd=str(cwd), args=args)
    return time.perf_counter() - t0


def wait_until(
    app: App, ok: Callable[[Observation], bool], what: str, timeout: float = 60.0
) -> float:
    """Refresh every 0.25 s until every agent passes `ok`; seconds waited."""
    t0 = time.monotonic()
    while True:
        items = observe.refresh(app)
        if all(ok(i) for i in items):
            return time.monotonic() - t0
        if time.monotonic() - t0 > timeout:
            bad = {i.agent.name: i.status for i in items if not ok(i)}
            raise RuntimeError(f"timed out waiting for {what}: {bad}")
        time.sleep(0.25)


class Probe:
    """Wraps the app's tmux layer: the panes each chained capture asks for, and the wall time
    spent in tmux client calls (start the client, the server's answer, reap it)."""

    def __init__(self, app: App) -> None:
        self.captured: list[list[str]] = []
        self.tmux_wall = 0.0
        run, capture_many = app.tmux.run, app.tmux.capture_many

        def timed_run(*args: str, input: str | None = None) -> str:
            t0 = time.perf_counter()
            try:
                return run(*args, input=input)
            finally:
                self.tmux_wall += time.perf_counter() - t0

        def counted_capture_many(pane_ids: list[str], marker: str) -> dict[str, str]:
            self.captured.append(list(pane_ids))
            return capture_many(pane_ids, marker)

        app.tmux.run = timed_run
        app.tmux.capture_many = counted_capture_many  # type: ignore[method-assign]

    def reset(self) -> None:
        self.captured, self.tmux_wall = [], 0.0


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def time_refreshes(
    app: App, server: psutil.Process, probe: Probe, reps: int, expect: dict[str, str]
) -> dict[str, object]:
    """`reps` refreshes after one warm-up; every agent's status must be as expected."""
    observe.refresh(app)
    out: dict[str, list[float]] = {
        k: [] for k in ("calls", "captured", "wall", "in_tmux", "cpu", "children")
    }
    s0 = server.cpu_times()
    for _ in range(reps):
        probe.reset()
        c0, p0, k0 = app.tmux.calls, time.process_time(), children_cpu()
        t0 = time.perf_counter()
        items = observe.refresh(app)
        wall = time.perf_counter() - t0
        cpu, children = time.process_time() - p0, children_cpu() - k0
        out["calls"].append(app.tmux.calls - c0)
        out["captured"].append(sum(len(c) for c in probe.captured))
        out["wall"].append(wall)
        out["in_tmux"].append(probe.tmux_wall)
        out["cpu"].append(cpu)
        out["children"].append(children)
        wrong = {i.agent.name: i.status for i in items if i.status != expect[i.agent.name]}
        if wrong or len(items) != len(expect):
            raise RuntimeError(f"unexpected statuses while timing: {wrong} ({len(items)} agents)")
    s1 = server.cpu_times()
    server_cpu = (s1.user + s1.system - s0.user - s0.system) / reps
    return {
        "samples": out,
        "server_cpu_per_refresh": server_cpu,
        "captured_panes": probe.captured[-1] if probe.captured else [],
        "stats": {k: summary(v) for k, v in out.items()},
    }


def time_tmux_alone(
    app: App, server: psutil.Process, panes: list[str], reps: int
) -> dict[str, dict[str, float]]:
    """The refresh's two tmux calls on their own, through the same client code (`Tmux.run`), and
    an O(1) round trip for scale: wall median and the server's CPU per call."""
    calls = {
        "list-panes -a (every pane)": ["list-panes", "-a", "-F", panefmt.FORMAT],
        f"chained capture of {len(panes)} pane(s)": panefmt.capture_args(panes, panefmt.MARKER),
        "display-message -p (O(1))": ["display-message", "-p", "ok"],
    }
    out = {}
    for label, args in calls.items():
        if not args:
            continue
        app.tmux.run(*args)
        walls = []
        s0 = server.cpu_times()
        for _ in range(reps):
            t0 = time.perf_counter()
            app.tmux.run(*args)
            walls.append(time.perf_counter() - t0)
        s1 = server.cpu_times()
        out[label] = {
            "wall": summary(walls)["median"],
            "server_cpu": (s1.user + s1.system - s0.user - s0.system) / reps,
        }
    return out


def ls_is_fast(w: World) -> bool:
    """Whether `roost ls` would take its fast path (lsfast.fast answers instead of the CLI)."""
    code = (
        "import io, sys\nfrom roost.cli import fast as lsfast\nsys.stdout = io.StringIO()\n"
        "r = lsfast.fast(False)\nsys.stdout = sys.__stdout__\nprint(r == 0)"
    )
    return (
        subprocess.run(
            [PYTHON, "-c", code], env=w.env, cwd=w.tmp, capture_output=True, text=True, timeout=60
        ).stdout.strip()
        == "True"
    )


def time_ls(w: World, runs: int) -> dict[str, list[float]]:
    """`python -m roost ls` and, interleaved, `python -c pass` (the interpreter alone)."""
    argvs = {"roost ls": w.roost_argv("ls"), "python -c pass": [PYTHON, "-c", "pass"]}
    for argv in argvs.values():  # warm-up: bytecode, page cache
        timed(argv, w.env, w.tmp)
        timed(argv, w.env, w.tmp)
    out: dict[str, list[float]] = {k: [] for k in argvs}
    for _ in range(runs):
        for label, argv in argvs.items():
            out[label].append(timed(argv, w.env, w.tmp))
    return out


# ---- working agents --------------------------------------------------------------------------
def pane_ttys(w: World) -> dict[str, tuple[str, str]]:
    """Agent window name -> (pane id, pane tty)."""
    return {
        name: (pane, tty)
        for name, pane, tty in w.panes("#{window_name}\t#{pane_id}\t#{pane_tty}")
        if name != "home"
    }


class Spinner:
    """Redraws the spinner line of some panes every TICK seconds by writing to their ttys: tmux
    sees output, as from a real CLI's spinner; the agent's input is untouched."""

    def __init__(self, ttys: list[str]) -> None:
        self.fds = [os.open(t, os.O_WRONLY | os.O_NOCTTY) for t in ttys]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        n = 0
        while not self.stop.wait(TICK):
            n += 1
            for fd in self.fds:
                try:
                    os.write(fd, f"\r{SPINNER} {n * TICK:.0f}s".encode())
                except OSError:
                    pass

    def __enter__(self) -> Spinner:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()
        self.thread.join()
        for fd in self.fds:
            os.close(fd)


def working_phase(
    app: App,
    w: World,
    server: psutil.Process,
    probe: Probe,
    names: list[str],
    workers: list[str],
    reps: int,
) -> dict[str, object]:
    sends = []
    for name in workers:
        c0, t0 = app.tmux.calls, time.perf_counter()
        result = sending.send(app, name, f"work {WORK_SECONDS}")
        sends.append(
            {
                "name": name,
                "wall": time.perf_counter() - t0,
                "calls": app.tmux.calls - c0,
                "how": result.how,
            }
        )
        if not result.delivered:
            raise RuntimeError(f"work not delivered to {name}: {result.how}")
    expect = {n: "working" if n in workers else "idle" for n in names}
    wait_until(app, lambda i: i.status == expect[i.agent.name], "the workers working")
    still = time_refreshes(app, server, probe, reps, expect)
    ttys = pane_ttys(w)
    with Spinner([ttys[n][1] for n in workers]):
        time.sleep(2.2)  # window_activity (whole seconds) must pass the hook's second + 1
        moving = time_refreshes(app, server, probe, reps, expect)
    for name in workers:  # Esc interrupts the work: Stop hook, prompt, idle
        w.tmux("send-keys", "-t", ttys[name][0], "Escape")
    wait_until(app, lambda i: i.status == "idle", "the workers idle again")
    return {"workers": workers, "work_sends": sends, "still": still, "moving": moving}


# ---- send latency ----------------------------------------------------------------------------
def cli_send(w: World, *args: str) -> tuple[float, str]:
    argv = w.roost_argv("send", *args)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=w.env, cwd=w.tmp, capture_output=True, text=True, timeout=90)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(
            f"roost send {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}"
        )
    return elapsed, proc.stdout


def send_latency(app: App, w: World, claude: str, codex: str, rounds: int) -> dict[str, object]:
    def idle(item: Observation) -> bool:
        return item.status == "idle"

    kinds = {
        f"roost send {claude} (claude, hook)": (claude, False, "confirmed by hook"),
        f"roost send {codex} (codex, screen)": (codex, False, "confirmed by screen"),
        f"roost send --wait {claude} (reply)": (claude, True, "echo: bench wait"),
    }
    cli: dict[str, list[float]] = {k: [] for k in kinds}
    for r in range(rounds + 1):  # the first round warms up
        for label, (name, wait, expect) in kinds.items():
            text = f"bench {'wait' if wait else 'send'} {r}"
            elapsed, out = cli_send(w, *(["--wait"] if wait else []), name, text)
            if expect not in out:
                raise RuntimeError(f"{label}: expected {expect!r} in {out!r}")
            if r:
                cli[label].append(elapsed)
            wait_until(app, idle, "the agents idle after a send")
    inproc: dict[str, dict[str, list[float]]] = {}
    for name in (claude, codex):
        samples: dict[str, list[float]] = {"wall": [], "calls": []}
        for r in range(rounds):
            c0, t0 = app.tmux.calls, time.perf_counter()
            result = sending.send(app, name, f"bench in-process {r}")
            samples["wall"].append(time.perf_counter() - t0)
            samples["calls"].append(app.tmux.calls - c0)
            if not result.delivered:
                raise RuntimeError(f"in-process send to {name}: {result.how}")
            wait_until(app, idle, "the agents idle after a send")
        inproc[name] = samples
    return {
        "cli_s": cli,
        "cli": {k: summary(v) for k, v in cli.items()},
        "in_process": {n: {k: summary(v) for k, v in s.items()} for n, s in inproc.items()},
        "in_process_samples": inproc,
    }


# ---- main ------------------------------------------------------------------------------------
def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--agents", default="1,10,100", help="the Ns, ascending, comma-separated")
    p.add_argument("--refreshes", type=int, default=20)
    p.add_argument("--ls-runs", type=int, default=10)
    p.add_argument("--working", type=int, default=5, help="claude agents made to work (+1 codex)")
    p.add_argument("--sends", type=int, default=10)
    opts = p.parse_args()
    ns = [int(n) for n in opts.agents.split(",")]
    assert ns == sorted(ns) and ns[0] >= 1, "--agents must ascend"

    stages: list[dict[str, object]] = []
    t_start = time.perf_counter()
    with world("status") as w, environ(w.env):
        w.roost("ls")  # the store, its schema, the bytecode cache of the CLI
        app = open_app()
        probe = Probe(app)
        have = 0
        server = None
        for n in ns:
            spawned = spawn_up_to(app, w, have, n)
            have = n
            names = [agent_name(i) for i in range(n)]
            waited = wait_until(app, lambda i: i.status == "idle", f"{n} agents idle")
            if server is None:
                server = psutil.Process(int(w.panes("#{pid}")[0][0]))
            idle = time_refreshes(app, server, probe, opts.refreshes, dict.fromkeys(names, "idle"))
            alone = time_tmux_alone(app, server, idle["captured_panes"], max(50, opts.refreshes))
            fast = ls_is_fast(w)
            ls = time_ls(w, opts.ls_runs)
            workers = [x for x in names if x.startswith("claude-")][: opts.working] + [
                x for x in names if x.startswith("codex-")
            ][:1]
            work = working_phase(app, w, server, probe, names, workers, opts.refreshes)
            stages.append(
                {
                    "agents": n,
                    "mix": {
                        k: sum(x.startswith(k + "-") for x in names)
                        for k in ("claude", "codex", "command")
                    },
                    "spawn_s": spawned,
                    "idle_after_s": waited,
                    "idle": idle,
                    "tmux_alone": alone,
                    "ls_fast_path": fast,
                    "ls_s": ls,
                    "ls": {k: summary(v) for k, v in ls.items()},
                    **work,
                }
            )
        claude = [x for x in names if x.startswith("claude-")]
        codex = [x for x in names if x.startswith("codex-")]
        sends = (
            send_latency(app, w, claude[-1], codex[-1], opts.sends) if claude and codex else None
        )
        app.close()
    total = time.perf_counter() - t_start

    def calls_of(state: str) -> list[int]:
        return sorted({int(c) for s in stages for c in s[state]["samples"]["calls"]})

    flat = {state: calls_of(state) for state in ("idle", "still", "moving")}
    problems = []
    for s in stages:  # the bench's own premise: moving spinners make claude agents need screens
        claude_workers = sum(x.startswith("claude-") for x in s["workers"])
        still, moving = (s[k]["stats"]["captured"]["median"] for k in ("still", "moving"))
        if moving != still + claude_workers:
            problems.append(
                f"N={s['agents']}: {moving:g} panes captured while moving, expected "
                f"{still:g} + {claude_workers} working claude agents"
            )
    ok = all(len(v) == 1 and v[0] <= 2 for v in flat.values()) and not problems

    def row(s: dict[str, Any], state: str, label: str) -> tuple[Any, ...]:
        r = s[state]
        st = r["stats"]
        calls = sorted({int(c) for c in r["samples"]["calls"]})
        return (
            s["agents"],
            label,
            "/".join(map(str, calls)),
            int(st["captured"]["median"]),
            ms(st["wall"]["median"]),
            ms(st["wall"]["p90"]),
            ms(st["in_tmux"]["median"]),
            ms(st["cpu"]["median"]),
            ms(st["children"]["median"]),
            ms(r["server_cpu_per_refresh"]),
        )

    rows = [
        (
            "N",
            "agents' state",
            "tmux calls",
            "captured",
            "wall",
            "p90",
            "in tmux calls",
            "cpu",
            "clients cpu",
            "server cpu",
        )
    ]
    for s in stages:
        rows.append(row(s, "idle", "all idle"))
        rows.append(row(s, "still", f"{len(s['workers'])} working, still"))
        rows.append(row(s, "moving", f"{len(s['workers'])} working, moving"))
    alone = [("N", "tmux call", "wall", "server cpu")]
    for s in stages:
        alone += [
            (s["agents"], k, ms(v["wall"]), ms(v["server_cpu"])) for k, v in s["tmux_alone"].items()
        ]
    lines = [
        f"status refresh, in-process, {opts.refreshes} refreshes per row (medians, ms; in tmux "
        "calls = wall time inside Tmux.run; cpu = this process; clients cpu = its tmux client "
        "children; server cpu = the tmux server, mean per refresh)\n",
        table(rows),
        "\nmix: "
        + "; ".join(
            f"N={s['agents']}: " + ", ".join(f"{v} {k}" for k, v in s["mix"].items())
            for s in stages
        ),
        f"\nthe same tmux calls alone, through Tmux.run, {max(50, opts.refreshes)} each (ms; wall "
        "median, "
        "server cpu mean per call):",
        table(alone),
        f"\n`python -m roost ls` with every agent idle, {opts.ls_runs} rounds interleaved with "
        "`python -c pass` (ms):",
        table(
            [("N", "roost ls", "p90", "python -c pass", "difference", "fast path")]
            + [
                (
                    s["agents"],
                    ms(s["ls"]["roost ls"]["median"]),
                    ms(s["ls"]["roost ls"]["p90"]),
                    ms(s["ls"]["python -c pass"]["median"]),
                    ms(s["ls"]["roost ls"]["median"] - s["ls"]["python -c pass"]["median"]),
                    "yes" if s["ls_fast_path"] else "no",
                )
                for s in stages
            ]
        ),
        "\nsetup: "
        + "; ".join(
            f"N={s['agents']}: spawned in {s['spawn_s']:.1f} s, all idle "
            f"{s['idle_after_s']:.1f} s later"
            for s in stages
        ),
    ]
    if sends:
        lines += [
            f"\nsend latency with {ns[-1]} agents, {opts.sends} interleaved rounds (ms):",
            table(
                [("", "median", "p90", "min", "max")]
                + [
                    (k, ms(v["median"]), ms(v["p90"]), ms(v["min"]), ms(v["max"]))
                    for k, v in sends["cli"].items()
                ]
            ),
            "in-process send.send (no interpreter start-up): "
            + "; ".join(
                f"{n} {ms(v['wall']['median'])} ms, {v['calls']['median']:.0f} tmux calls"
                for n, v in sends["in_process"].items()
            ),
        ]
    lines += ["\nproblems:", *(f"  {x}" for x in problems)] if problems else []
    lines.append(
        f"\ntmux calls per refresh over every N: idle {flat['idle']}, working still "
        f"{flat['still']}, working moving {flat['moving']} (target: one value each, "
        f"<= 2); total {total:.0f} s"
    )
    results = {
        "ns": ns,
        "refreshes": opts.refreshes,
        "calls_per_refresh": flat,
        "problems": problems,
        "stages": stages,
        "send": sends,
        "total_s": total,
    }
    return finish("bench_status", results, "\n".join(lines), ok, opts.json)


if __name__ == "__main__":
    sys.exit(main())
