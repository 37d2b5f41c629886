"""Spawn latency: `roost spawn NAME --provider command -- sleep 1000` against bare tmux.

For each agent: the time until the command returns, and until the agent's pane pid runs the
agent (`sleep`: roost starts it through `python -m roost.launch`, which execs it in place).
Baseline, interleaved in the same run: `tmux new-session -d` then `tmux new-window` running
`sleep 1000` in both windows. No target: this reports (exit 0) unless something fails.

    .venv/bin/python bench/bench_spawn.py [--agents 10] [--json]
"""

from __future__ import annotations

import os
import re
import sys
import time

import psutil

from _common import World, finish, ms, parser, summary, table, world

COMMAND = ["sleep", "1000"]


def wait_running(pid: int, start: float, timeout: float = 10.0) -> float:
    """Seconds from `start` until process `pid` runs COMMAND (polled every millisecond)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            argv = psutil.Process(pid).cmdline()  # roost runs the absolute path: /usr/bin/sleep
            if argv and os.path.basename(argv[0]) == COMMAND[0] and argv[1:] == COMMAND[1:]:
                return time.perf_counter() - start
        except psutil.Error:
            pass  # not yet (or a zombie being replaced); look again
        time.sleep(0.001)
    raise RuntimeError(f"pid {pid} did not run {COMMAND} within {timeout}s")


def spawn_roost(w: World, name: str) -> tuple[float, float]:
    start = time.perf_counter()
    out = w.roost("spawn", name, "--provider", "command", "--", *COMMAND)
    returned = time.perf_counter() - start
    said = re.search(r"pid (\d+)", out)  # "spawned NAME (command, pid N) ..."
    assert said is not None, out
    pid = int(said.group(1))
    return returned, wait_running(pid, start)


def spawn_tmux(w: World, name: str) -> tuple[float, float]:
    start = time.perf_counter()
    w.tmux("new-session", "-d", "-s", name, "-c", str(w.tmp / "work"), *COMMAND)
    out = w.tmux(
        "new-window",
        "-t",
        f"{name}:",
        "-c",
        str(w.tmp / "work"),
        "-P",
        "-F",
        "#{pane_pid}",
        *COMMAND,
    )
    returned = time.perf_counter() - start
    return returned, wait_running(int(out), start)


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--agents", type=int, default=10)
    opts = p.parse_args()

    kinds = {"roost spawn": spawn_roost, "bare tmux": spawn_tmux}
    samples: dict[str, dict[str, list[float]]] = {k: {"returned": [], "running": []} for k in kinds}
    with world("spawn") as w:
        w.roost("ls")  # warm up: bytecode, the store's schema
        w.tmux("new-session", "-d", "-s", "warm-up", *COMMAND)  # the server is up for both
        for i in range(opts.agents):  # interleaved; who goes first alternates
            order = list(kinds) if i % 2 == 0 else list(kinds)[::-1]
            for kind in order:
                returned, running = kinds[kind](w, f"{kind.split()[-1]}-{i:02d}")
                samples[kind]["returned"].append(returned)
                samples[kind]["running"].append(running)
        time.sleep(0.3)  # let the keepers' first redraws finish before the server goes

    stats = {k: {m: summary(v) for m, v in s.items()} for k, s in samples.items()}
    ratio = {
        m: stats["roost spawn"][m]["median"] / stats["bare tmux"][m]["median"]
        for m in ("returned", "running")
    }
    human = "\n".join(
        [
            f"spawn latency, {opts.agents} agents each, interleaved (ms)\n",
            table(
                [("", "returned med", "p90", "running med", "p90")]
                + [
                    (
                        k,
                        ms(s["returned"]["median"]),
                        ms(s["returned"]["p90"]),
                        ms(s["running"]["median"]),
                        ms(s["running"]["p90"]),
                    )
                    for k, s in stats.items()
                ]
                + [
                    (
                        "ratio (medians)",
                        f"{ratio['returned']:.1f}x",
                        "",
                        f"{ratio['running']:.1f}x",
                        "",
                    )
                ]
            ),
        ]
    )
    results = {
        "agents": opts.agents,
        "command": COMMAND,
        "ratio": ratio,
        "stats_s": stats,
        "samples_s": samples,
    }
    return finish("bench_spawn", results, human, True, opts.json)


if __name__ == "__main__":
    sys.exit(main())
