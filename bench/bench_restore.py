"""`roost restore` of a 1,000-agent workspace with 10 live agents, against bare tmux.

The workspace (as after a reboot: stored, no tmux server, no process): 1,000 claude agents, 10 of
them tiles in 2 tabs (the live ones), 800 parked, 190 buried, with links and pins.

- Plan: in-process, `wsdb.load(conn)` + `workspace.plan_restore(ws, running=[])`, repeated;
  it must start exactly the 10 tiles and hibernate the other 990. Target: median < 50 ms.
- Start: `python -m roost restore --json --concurrency C --stagger S` from a killed server, timed
  until all 10 agents show their idle prompt (`❯ `, polled with `tmux capture-pane`). Baseline,
  interleaved round by round in the same run: the same 10 agent commands (`claude --resume SID`
  in the agent's cwd) started with `tmux new-session -d` by a thread pool with the same cap and
  stagger, timed the same way. Target: median roost / median bare tmux < 1.5.
- Checks each round: restore's JSON (10 started, 990 hibernated, 0 failed, peak concurrent
  starts <= the cap) and that exactly the 10 live agents' processes run (no parked or buried
  agent started). Also reported, no target: the same comparison with --stagger 0 (the cap is
  then what limits the starts), and `roost restore` again with the 10 running (nothing to start).

    .venv/bin/python bench/bench_restore.py [--rounds 6] [--raw-rounds 3] [--agents 1000]
        [--live 10] [--concurrency 3] [--stagger 0.25] [--plan-reps 300] [--json]
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psutil

from roost.core import workspace
from roost.core.model import INTENT_HIBERNATED, INTENT_RUNNING, INTENT_STOPPED, Agent
from roost.core.settings import RestoreSettings
from roost.providers.claude import transcript_path
from roost.store import workspace as wsdb
from roost.store.db import Store
from roost.system.config import Paths

from _common import WORDS, World, finish, ms, parser, summary, table, world

PLAN_TARGET = 0.050  # seconds, median
RATIO_TARGET = 1.5
PROMPT = "❯ "  # the fake claude's idle prompt
TABS = ("main", "review")
END = "rb-end"  # separates the captures of several panes in one tmux call


# ---- the workspace ---------------------------------------------------------------------------
def seed(w: World, total: int, live: int) -> list[Agent]:
    """Store `total` claude agents through Store.insert + wsdb, as `roost spawn` would have: `live`
    tiles over two tabs, 80 % of the rest parked, the others buried (tiled, then buried, so they
    remember their sibling), ~10 % linked, a few orchestration trees, 8 pins. Returns the live
    agents in tab and tile order. The live agents have an (empty) transcript, so roost resumes
    them (`claude --resume SID`), as after a reboot."""
    rng = random.Random(1000)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    work = w.tmp / "work" / "src"
    cwds = []
    for i in range(41):
        for sub in ("", "backend", "web/app"):
            d = work / f"project-{i}" / sub
            d.mkdir(parents=True, exist_ok=True)
            cwds.append(os.path.realpath(d))
    live_at = set(rng.sample(range(total), live))
    rest = [i for i in range(total) if i not in live_at]
    parked_at = set(rng.sample(rest, round(len(rest) * 800 / 990)))

    store = Store.open(Paths(w.roost_home).db)
    store.conn.execute("PRAGMA synchronous = OFF")  # this connection only: a faster setup
    agents: list[Agent] = []
    for i in range(total):
        created = start + timedelta(minutes=37 * i)
        earlier = agents[rng.randrange(len(agents))] if agents else None
        orchestrator = earlier if earlier and rng.random() < 0.05 else None
        placement = "tile" if i in live_at else "detached" if i in parked_at else "buried"
        agent = Agent(
            id=str(uuid.uuid4()),
            name=f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-{i:04d}",
            provider="claude",
            cwd=rng.choice(cwds),
            home=f"h{i:04d}",
            args=rng.choice([(), (), ("--model", "opus")]),
            dangerous=rng.random() < 0.2,
            provider_session_id=str(uuid.uuid4()),
            created_at=created.isoformat(timespec="milliseconds"),
            intent=INTENT_RUNNING
            if placement == "tile"
            else rng.choice([INTENT_HIBERNATED, INTENT_STOPPED]),
            started_at=(created + timedelta(minutes=5)).isoformat(timespec="milliseconds"),
            launches=rng.randint(1, 6),
            last_exit=rng.choice([None, 0, 130]),
            linked_parent=earlier.id if earlier and rng.random() < 0.1 else None,
            orchestration_parent=orchestrator.id if orchestrator else None,
            orchestration_root=(orchestrator.orchestration_root or orchestrator.id)
            if orchestrator
            else None,
            last_active_at=(created + timedelta(minutes=50)).isoformat(timespec="milliseconds"),
        )
        tab_name = TABS[i % len(TABS)]

        def place(
            c: sqlite3.Connection,
            agent: Agent = agent,
            placement: str = placement,
            tab_name: str = tab_name,
        ) -> None:
            tab = wsdb.ensure_tab(c, tab_name)
            if placement == "detached":  # parked: remembers its project tab
                c.execute(
                    "UPDATE agents SET placement = 'detached', tab_id = ? WHERE id = ?",
                    (tab.id, agent.id),
                )
                return
            wsdb.tile(
                c,
                agent.id,
                tab,
                direction=rng.choice(workspace.DIRECTIONS),
                ratio=rng.choice([0.5, 0.4, 0.6]),
            )
            if placement == "buried":
                wsdb.bury(c, agent.id)

        store.insert(agent, then=place)
        agents.append(agent)
        if placement == "tile":
            path = transcript_path(agent.provider_session_id, agent.cwd, w.env)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
    with store.write() as c:
        for agent in rng.sample(agents, 8):
            wsdb.pin(c, agent.id)
    order = workspace.tiled(wsdb.load(store.conn))
    store.close()
    by_id = {a.id: a for a in agents}
    assert sorted(order) == sorted(agents[i].id for i in live_at), "the tabs hold other tiles"
    return [by_id[a] for a in order]


# ---- planning, in-process ----------------------------------------------------------------
def time_plan(db: Path, reps: int, live: list[Agent], total: int) -> dict[str, list[float]]:
    store = Store.open(db)
    conn = store.conn
    plan = workspace.plan_restore(wsdb.load(conn), running=[])
    assert list(plan.start) == [a.id for a in live], "the plan does not start the 10 tiles"
    assert len(plan.hibernate) == total - len(live) and not plan.running and not plan.stray, (
        f"the plan hibernates {len(plan.hibernate)}, expected {total - len(live)}"
    )
    out: dict[str, list[float]] = {
        "load + plan_restore": [],
        "wsdb.load": [],
        "plan_restore": [],
        "store.agents() (restore's name map)": [],
    }
    for i in range(reps + 5):  # 5 warm-up repetitions
        t0 = time.perf_counter()
        ws = wsdb.load(conn)
        t1 = time.perf_counter()
        workspace.plan_restore(ws, running=[])
        t2 = time.perf_counter()
        {a.id: a.name for a in store.agents()}
        t3 = time.perf_counter()
        if i >= 5:
            out["load + plan_restore"].append(t2 - t0)
            out["wsdb.load"].append(t1 - t0)
            out["plan_restore"].append(t2 - t1)
            out["store.agents() (restore's name map)"].append(t3 - t2)
    store.close()
    return out


# ---- watching screens ------------------------------------------------------------------------
def wait_prompts(
    w: World,
    keys: set[str],
    key_field: str,
    t0: float,
    proc: subprocess.Popen[bytes] | None = None,
    timeout: float = 20.0,
) -> dict[str, float]:
    """Seconds from t0 until each pane (found by `key_field`, a tmux format, in `keys`) shows the
    idle prompt on its last non-blank line. One `list-panes` while panes are missing, then one
    tmux call that captures every pane not yet ready; the same for roost and bare tmux."""
    panes: dict[str, str] = {}
    ready: dict[str, float] = {}
    deadline = time.monotonic() + timeout
    while len(ready) < len(keys):
        if time.monotonic() > deadline or (proc is not None and proc.poll() not in (None, 0)):
            screens = {k: _captures(w, [p]).get(p, "") for k, p in panes.items() if k not in ready}
            err = proc.stderr.read().decode(errors="replace") if proc and proc.poll() else ""
            raise RuntimeError(
                f"{len(keys) - len(ready)} agents never showed the prompt "
                f"(found panes {len(panes)}/{len(keys)}): {err}\n{screens}"
            )
        if len(panes) < len(keys):
            for pane_id, key in w.panes(f"#{{pane_id}}\t{key_field}"):
                if key in keys:
                    panes[key] = pane_id
        pending = {p: k for k, p in panes.items() if k not in ready}
        if pending:
            now_screens = _captures(w, list(pending))
            now = time.perf_counter() - t0
            for pane_id, screen in now_screens.items():
                lines = [ln for ln in screen.splitlines() if ln.strip()]
                if lines and (lines[-1] + " ").startswith(PROMPT):  # capture drops the blank
                    ready[pending[pane_id]] = now
        if len(ready) < len(keys):
            time.sleep(0.01)
    return ready


def _captures(w: World, pane_ids: list[str]) -> dict[str, str]:
    args: list[str] = []
    for p in pane_ids:
        args += [
            "capture-pane",
            "-p",
            "-t",
            p,
            ";",
            "display-message",
            "-p",
            "-t",
            p,
            f"{END} #{{pane_id}}",
            ";",
        ]
    proc = subprocess.run(
        w.tmux_argv(*args[:-1]), env=w.env, capture_output=True, text=True, timeout=30
    )
    out: dict[str, str] = {}
    chunk: list[str] = []
    for line in proc.stdout.splitlines():
        if line.startswith(END + " "):
            out[line.split()[1]] = "\n".join(chunk)
            chunk = []
        else:
            chunk.append(line)
    return out  # a pane that vanished ends the command list early: it is looked at again


def agent_processes(w: World) -> list[psutil.Process]:
    """The fake agent CLIs of this world (roost's and bare tmux's carry its HOME)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if (
                any(a.endswith("fake_agent.py") for a in proc.info["cmdline"] or [])
                and proc.environ().get("HOME") == w.env["HOME"]
            ):
                found.append(proc)
        except (psutil.Error, OSError):
            continue
    return found


def reset(w: World) -> None:
    """Kill the server, and wait until every agent (SIGHUP from the dying server) is gone."""
    subprocess.run(w.tmux_argv("kill-server"), env=w.env, capture_output=True, timeout=30)
    deadline = time.monotonic() + 5
    while agent_processes(w) and time.monotonic() < deadline:
        time.sleep(0.02)
    for proc in agent_processes(w):
        proc.kill()
    assert not w.panes("#{pane_id}"), "the tmux server survived kill-server"


def starts_logged(w: World, since: int) -> list[dict[str, Any]]:
    """The agent CLI starts since line `since` of the fake agents' log."""
    log = Path(w.env["FAKE_AGENT_LOG"])
    lines = log.read_text(encoding="utf-8").splitlines()[since:] if log.exists() else []
    return [json.loads(ln) for ln in lines]


def log_lines(w: World) -> int:
    log = Path(w.env["FAKE_AGENT_LOG"])
    return len(log.read_text(encoding="utf-8").splitlines()) if log.exists() else 0


# ---- one round each ------------------------------------------------------------------------
def round_roost(w: World, live: list[Agent], cap: int, gap: float) -> dict[str, object]:
    reset(w)
    before = log_lines(w)
    argv = w.roost_argv("restore", "--json", "--concurrency", str(cap), "--stagger", str(gap))
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv, env=w.env, cwd=w.tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    exited: list[float] = []
    waiter = threading.Thread(target=lambda: (proc.wait(), exited.append(time.perf_counter() - t0)))
    waiter.start()
    ready = wait_prompts(w, {a.id for a in live}, "#{@roost_id}", t0, proc)
    out, err = proc.communicate(timeout=60)
    waiter.join()
    if proc.returncode != 0:
        raise RuntimeError(f"roost restore failed ({proc.returncode}): {err.decode().strip()}")
    homes = {row[0] for row in w.panes("#{session_name}")}
    starts = starts_logged(w, before)
    return {
        "all_running": max(ready.values()),
        "first_running": min(ready.values()),
        "returned": exited[0],
        "report": json.loads(out),
        "processes": len(agent_processes(w)),
        "homes": len(homes),
        "started_ids": [e["env"].get("ROOST_AGENT_ID", "?") for e in starts],
        "resumed": sum("--resume" in e["argv"] for e in starts),
    }


def bare_argv(exe: str, agent: Agent) -> list[str]:
    """What roost runs for the agent (Claude.resume_argv) without roost's `--settings` (hooks)."""
    assert agent.provider_session_id
    return [
        exe,
        "--resume",
        agent.provider_session_id,
        *(["--dangerously-skip-permissions"] if agent.dangerous else []),
        *agent.args,
    ]


def round_tmux(w: World, live: list[Agent], cap: int, gap: float) -> dict[str, object]:
    """The same agent commands roost runs for these agents, each in its own detached session,
    through a pool with the same cap and stagger as run_queue (a sleep between submissions)."""
    reset(w)
    exe = w.env["ROOST_CLAUDE_BIN"]
    lock = threading.Lock()
    now_peak = [0, 0]

    def one(agent: Agent) -> None:
        with lock:
            now_peak[0] += 1
            now_peak[1] = max(now_peak)
        try:
            subprocess.run(
                w.tmux_argv(
                    "new-session",
                    "-d",
                    "-s",
                    agent.name,
                    "-x",
                    "200",
                    "-y",
                    "50",
                    "-c",
                    agent.cwd,
                    *bare_argv(exe, agent),
                ),
                env=w.env,
                check=True,
                capture_output=True,
                timeout=30,
            )
        finally:
            with lock:
                now_peak[0] -= 1

    def schedule() -> None:
        with ThreadPoolExecutor(max_workers=cap) as pool:
            for i, agent in enumerate(live):
                if i and gap:
                    time.sleep(gap)
                pool.submit(one, agent)

    t0 = time.perf_counter()
    scheduler = threading.Thread(target=schedule)
    scheduler.start()
    ready = wait_prompts(w, {a.name for a in live}, "#{session_name}", t0)
    scheduler.join()
    return {
        "all_running": max(ready.values()),
        "first_running": min(ready.values()),
        "peak": now_peak[1],
        "processes": len(agent_processes(w)),
    }


def idle_restore(w: World, reps: int = 5) -> tuple[list[float], dict[str, Any]]:
    """`roost restore` with the 10 already running: start-up, plan and tmux, nothing to start."""
    times, report = [], {}
    for _ in range(reps):
        t0 = time.perf_counter()
        report = json.loads(w.roost("restore", "--json"))
        times.append(time.perf_counter() - t0)
    return times, report


# ---- main ----------------------------------------------------------------------------------
def interleaved(
    w: World, live: list[Agent], cap: int, gap: float, rounds: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """`rounds` rounds of each, who goes first alternating; every round from a killed server."""
    runs: dict[str, list[dict[str, Any]]] = {"roost": [], "tmux": []}
    for r in range(rounds):
        for kind in ("roost", "tmux") if r % 2 == 0 else ("tmux", "roost"):
            runs[kind].append((round_roost if kind == "roost" else round_tmux)(w, live, cap, gap))
    return runs["roost"], runs["tmux"]


def check(
    label: str,
    roost_rounds: list[dict[str, Any]],
    tmux_rounds: list[dict[str, Any]],
    live_ids: set[str],
    total: int,
    cap: int,
) -> list[str]:
    problems = []
    n_live = len(live_ids)
    for i, r in enumerate(roost_rounds):
        rep = r["report"]
        want = {
            "live_expected": n_live,
            "started": n_live,
            "already_running": 0,
            "hibernated": total - n_live,
            "failed": 0,
        }
        problems += [
            f"{label} roost round {i}: restore says {k}={rep[k]}, expected {v}"
            for k, v in want.items()
            if rep[k] != v
        ]
        if not 1 <= rep["peak_concurrent_starts"] <= cap:
            problems.append(
                f"{label} roost round {i}: peak_concurrent_starts "
                f"{rep['peak_concurrent_starts']}, cap {cap}"
            )
        if (
            r["processes"] != n_live
            or sorted(r["started_ids"]) != sorted(live_ids)
            or r["homes"] != n_live
            or r["resumed"] != n_live
        ):
            problems.append(
                f"{label} roost round {i}: {r['processes']} agent processes, "
                f"{len(r['started_ids'])} starts logged ({r['resumed']} --resume), "
                f"{r['homes']} homes; expected exactly the {n_live} live agents, "
                "resumed, one home each"
            )
    for i, r in enumerate(tmux_rounds):
        if r["processes"] != n_live or not 1 <= r["peak"] <= cap:
            problems.append(
                f"{label} bare tmux round {i}: {r['processes']} processes, peak {r['peak']}"
            )
    return problems


def stats_of(
    roost_rounds: list[dict[str, Any]], tmux_rounds: list[dict[str, Any]]
) -> dict[str, object]:
    metrics = ("first_running", "all_running")
    r_stats = {m: summary([r[m] for r in roost_rounds]) for m in metrics}
    r_stats["returned"] = summary([r["returned"] for r in roost_rounds])
    r_stats["restore_seconds"] = summary([r["report"]["seconds"] for r in roost_rounds])
    t_stats = {m: summary([r[m] for r in tmux_rounds]) for m in metrics}
    return {
        "roost_s": r_stats,
        "tmux_s": t_stats,
        "ratio": r_stats["all_running"]["median"] / t_stats["all_running"]["median"],
        "roost_peaks": [r["report"]["peak_concurrent_starts"] for r in roost_rounds],
        "tmux_peaks": [r["peak"] for r in tmux_rounds],
        "agent_processes": [r["processes"] for r in roost_rounds],
        "homes": [r["homes"] for r in roost_rounds],
        "samples_s": {
            "roost_all_running": [r["all_running"] for r in roost_rounds],
            "tmux_all_running": [r["all_running"] for r in tmux_rounds],
        },
    }


def start_table(s: dict[str, Any]) -> str:
    r, t = s["roost_s"], s["tmux_s"]
    return table(
        [("", "first median", "all median", "all p90", "all min", "all max")]
        + [
            (
                name,
                ms(x["first_running"]["median"]),
                ms(x["all_running"]["median"]),
                ms(x["all_running"]["p90"]),
                ms(x["all_running"]["min"]),
                ms(x["all_running"]["max"]),
            )
            for name, x in (("roost restore", r), ("bare tmux", t))
        ]
        + [("ratio (medians)", "", f"{s['ratio']:.2f}x", "", "", "")]
    )


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument(
        "--raw-rounds",
        type=int,
        default=3,
        help="extra rounds with --stagger 0 (reported, no target); 0: none",
    )
    p.add_argument("--agents", type=int, default=1000)
    p.add_argument("--live", type=int, default=10)
    p.add_argument("--concurrency", type=int, default=RestoreSettings().concurrency)
    p.add_argument("--stagger", type=float, default=RestoreSettings().stagger)
    p.add_argument("--plan-reps", type=int, default=300)
    opts = p.parse_args()
    cap, gap = opts.concurrency, opts.stagger

    with world("restore") as w:
        t_seed = time.perf_counter()
        live = seed(w, opts.agents, opts.live)
        seeded = time.perf_counter() - t_seed
        live_ids = {a.id for a in live}
        plan = time_plan(Paths(w.roost_home).db, opts.plan_reps, live, opts.agents)

        round_roost(w, live, cap, gap)  # warm-up: bytecode, page cache, the agents' imports
        round_tmux(w, live, cap, gap)
        main_runs = interleaved(w, live, cap, gap, opts.rounds)
        raw_runs = interleaved(w, live, cap, 0.0, opts.raw_rounds) if opts.raw_rounds else None
        round_roost(w, live, cap, gap)  # roost's 10 run; restore again: nothing to start
        idle_times, idle_report = idle_restore(w)
        reset(w)

    n_live = opts.live
    problems = check("", *main_runs, live_ids, opts.agents, cap)
    if raw_runs:
        problems += check("stagger 0", *raw_runs, live_ids, opts.agents, cap)
    if (idle_report.get("started"), idle_report.get("already_running")) != (0, n_live):
        problems.append(f"restore with the {n_live} running: {idle_report}")

    plan_stats = {k: summary(v) for k, v in plan.items()}
    main_stats = stats_of(*main_runs)
    raw_stats = stats_of(*raw_runs) if raw_runs else None
    plan_median = plan_stats["load + plan_restore"]["median"]
    ratio = main_stats["ratio"]
    last = main_runs[0][-1]["report"]
    ok_plan, ok_ratio = plan_median < PLAN_TARGET, ratio < RATIO_TARGET
    ok = ok_plan and ok_ratio and not problems
    idle = summary(idle_times)
    r_stats = main_stats["roost_s"]

    human = "\n".join(
        [
            f"roost restore: {opts.agents} agents, {n_live} live in 2 tabs; concurrency {cap}, "
            f"stagger {gap:g} s; {opts.rounds} interleaved rounds (workspace stored in "
            f"{seeded:.1f} s)\n",
            f"plan, in-process, {opts.plan_reps} repetitions (ms):",
            table(
                [("", "median", "p90", "max")]
                + [
                    (
                        k,
                        f"{s['median'] * 1000:.2f}",
                        f"{s['p90'] * 1000:.2f}",
                        f"{s['max'] * 1000:.2f}",
                    )
                    for k, s in plan_stats.items()
                ]
            ),
            f"plan target: load + plan_restore median < {PLAN_TARGET * 1000:g} ms: "
            f"{'met' if ok_plan else 'MISSED'}\n",
            f"until all {n_live} show their prompt, from a killed server (ms):",
            start_table(main_stats),
            f"ratio target: < {RATIO_TARGET:g}x: {'met' if ok_ratio else 'MISSED'}\n",
            f"roost restore returned after {ms(r_stats['returned']['median'])} ms (median; its own "
            f"'seconds' {ms(r_stats['restore_seconds']['median'])} ms); restore with the {n_live} "
            f"already running: {ms(idle['median'])} ms median",
            f"restore's JSON (last round): started {last['started']}, hibernated "
            f"{last['hibernated']}, failed {last['failed']}, peak_concurrent_starts "
            f"{last['peak_concurrent_starts']} (all rounds: {main_stats['roost_peaks']}, bare tmux "
            f"{main_stats['tmux_peaks']}; cap {cap}); agent processes per round: "
            f"{main_stats['agent_processes']}, homes {main_stats['homes']}",
            *(
                [
                    f"\nthe same with --stagger 0 (no target), {opts.raw_rounds} "
                    "interleaved rounds (ms):",
                    start_table(raw_stats),
                    f"peaks: roost {raw_stats['roost_peaks']}, bare tmux "
                    f"{raw_stats['tmux_peaks']}; "
                    f"agent processes per round: {raw_stats['agent_processes']}",
                ]
                if raw_stats
                else []
            ),
            *(["\nproblems:", *(f"  {x}" for x in problems)] if problems else []),
        ]
    )
    results = {
        "agents": opts.agents,
        "live": n_live,
        "rounds": opts.rounds,
        "concurrency": cap,
        "stagger": gap,
        "plan_target_s": PLAN_TARGET,
        "ratio_target": RATIO_TARGET,
        "plan_stats_s": plan_stats,
        "plan_samples_s": plan["load + plan_restore"],
        "start": main_stats,
        "ratio": ratio,
        "start_stagger_0": raw_stats,
        "idle_restore_s": idle,
        "restore_json_last": last,
        "problems": problems,
    }
    return finish("bench_restore", results, human, ok, opts.json)


if __name__ == "__main__":
    sys.exit(main())
