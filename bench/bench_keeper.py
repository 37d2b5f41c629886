"""Memory of the keeper, the shell loop in window 0 of every home, per home.

Spawns agents (`--provider command -- sleep 1000`, one home each), waits until every keeper has
drawn its screen and sits in `read`, then sums RSS (and USS, memory that only that process owns)
over each keeper's process tree. Target: every keeper under 4 MB RSS.

    .venv/bin/python bench/bench_keeper.py [--agents 20] [--json]
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import time

import psutil

from _common import World, finish, mb, parser, table, world

TARGET_RSS = 4 * 2**20
PROMPT = "Enter wakes every agent here"  # the keeper's last line before it reads


def keeper_pids(w: World) -> dict[str, int]:
    """Each home's window-0 pane pid."""
    return {
        s: int(pid)
        for s, idx, pid in w.panes("#{session_name}\t#{window_index}\t#{pane_pid}")
        if idx == "0"
    }


def settled(w: World, homes: list[str]) -> bool:
    """Every keeper drew its screen and waits in `read` (no subshell of a redraw left)."""
    for home in homes:
        if PROMPT not in w.tmux("capture-pane", "-p", "-t", f"{home}:0"):
            return False
    try:
        return all(not psutil.Process(pid).children() for pid in keeper_pids(w).values())
    except psutil.NoSuchProcess:  # redrawn meanwhile: a new keeper pid
        return False


def tree_memory(pid: int) -> tuple[int, int | None, int]:
    """(RSS, USS or None, process count) summed over pid and its descendants."""
    root = psutil.Process(pid)
    procs = [root, *root.children(recursive=True)]
    rss, uss, uss_known = 0, 0, True
    for proc in procs:
        try:
            try:
                full = proc.memory_full_info()  # USS needs /proc/PID/smaps
                rss, uss = rss + full.rss, uss + full.uss
            except psutil.AccessDenied:
                rss, uss_known = rss + proc.memory_info().rss, False
        except psutil.NoSuchProcess:
            continue
    return rss, uss if uss_known else None, len(procs)


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--agents", type=int, default=20)
    opts = p.parse_args()

    homes = [f"mem-{i:02d}" for i in range(opts.agents)]
    with world("keeper") as w:
        for home in homes:
            w.roost("spawn", home, "--provider", "command", "--", "sleep", "1000")
        deadline = time.monotonic() + 30
        while not settled(w, homes):
            if time.monotonic() > deadline:
                raise RuntimeError("the keepers did not settle within 30 s")
            time.sleep(0.2)
        pids = keeper_pids(w)
        mem = {home: tree_memory(pids[home]) for home in homes}
        shell = psutil.Process(pids[homes[0]]).exe()

    rss = [m[0] for m in mem.values()]
    uss = [m[1] for m in mem.values() if m[1] is not None]
    ok = max(rss) < TARGET_RSS
    sh = shutil.which("sh") or "sh"
    rows = [("per keeper (MB)", "mean", "max")]
    rows.append(("RSS", mb(statistics.mean(rss)), mb(max(rss))))
    if uss:
        rows.append(("USS", mb(statistics.mean(uss)), mb(max(uss))))
    human = "\n".join(
        [
            f"keeper memory, {len(homes)} homes; sh is {os.path.realpath(sh)} (keeper "
            f"runs {shell})\n",
            table(rows),
            f"\ntarget: every keeper under {mb(TARGET_RSS)} MB RSS; "
            f"processes per keeper tree: {max(m[2] for m in mem.values())}",
        ]
    )
    results = {
        "homes": len(homes),
        "shell": os.path.realpath(sh),
        "target_rss_bytes": TARGET_RSS,
        "rss_bytes": {"mean": statistics.mean(rss), "max": max(rss)},
        "uss_bytes": {"mean": statistics.mean(uss), "max": max(uss)} if uss else None,
        "per_home": {h: {"rss": m[0], "uss": m[1], "processes": m[2]} for h, m in mem.items()},
    }
    return finish("bench_keeper", results, human, ok, opts.json)


if __name__ == "__main__":
    sys.exit(main())
