"""An agent CLI's start of `roost mcp` on stdio, which most agents never call a tool of: the
front (mcp/front.py) answers the start with the SDK's recorded answers, against the same start
served by the SDK itself (the front hands over at once when initialize carries a field it does
not know, `_meta` here, which the SDK ignores). Interleaved round by round, one agent each.

Measured per process, once it has answered initialize and tools/list: CPU seconds (user +
system) and RSS. Targets: the front's median CPU <= 1/4 of the SDK's, its RSS <= 1/2.

    .venv/bin/python bench/bench_mcp_start.py [--rounds 10] [--json]
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import psutil
from bench_mcp import INIT, INITIALIZED, LIST, seed, stdio_server

from _common import finish, mb, parser, table, world

CPU_TARGET, RSS_TARGET = 0.25, 0.5
SDK_AT_ONCE = {**INIT, "params": {**INIT["params"], "_meta": {}}}  # type: ignore[dict-item]


def start(env: dict[str, str], cwd: Path, agent_id: str, init: dict) -> tuple[float, int]:
    """(CPU seconds, RSS) of one `roost mcp` once it answered a CLI's start."""
    proc = stdio_server(env, cwd, agent_id)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        for message in (init, INITIALIZED, LIST):
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            if "id" in message:
                reply = json.loads(proc.stdout.readline())
                assert "result" in reply, reply
        measured = psutil.Process(proc.pid)
        times = measured.cpu_times()
        return times.user + times.system, measured.memory_info().rss
    finally:
        proc.kill()
        proc.wait()


def main() -> int:
    cli = parser("roost mcp's start: the front against the SDK")
    cli.add_argument("--rounds", type=int, default=10)
    args = cli.parse_args()
    samples: dict[str, list[tuple[float, int]]] = {"front": [], "sdk": []}
    with world("mcpstart") as w:
        [(agent_id, _token)] = seed(w.roost_home, w.tmp / "work", 1)
        for _ in range(args.rounds):
            samples["front"].append(start(w.env, w.tmp, agent_id, INIT))
            samples["sdk"].append(start(w.env, w.tmp, agent_id, SDK_AT_ONCE))
    cpu = {k: statistics.median(s[0] for s in v) for k, v in samples.items()}
    rss = {k: statistics.median(s[1] for s in v) for k, v in samples.items()}
    cpu_ratio, rss_ratio = cpu["front"] / cpu["sdk"], rss["front"] / rss["sdk"]
    ok = cpu_ratio <= CPU_TARGET and rss_ratio <= RSS_TARGET
    human = table(
        [
            ("start served by", "median CPU s", "median RSS MB"),
            ("front (recorded answers)", f"{cpu['front']:.3f}", mb(rss["front"])),
            ("the SDK", f"{cpu['sdk']:.3f}", mb(rss["sdk"])),
            ("ratio", f"{cpu_ratio:.2f}", f"{rss_ratio:.2f}"),
        ]
    )
    results = {"rounds": args.rounds, "cpu_s": cpu, "rss": rss, "ratios": [cpu_ratio, rss_ratio]}
    return finish("bench_mcp_start", results, human, ok, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
