"""`roost ls` with 1,000 agents in the store, against the floor of any Python CLI that asks tmux.

Baselines, timed in the same run and interleaved with roost round by round: `python -c pass`
(the same interpreter) and one bare `tmux -L SOCK list-sessions` on the same private server.
Target: median `python -m roost ls` <= 3 x (median python -c pass + median tmux list-sessions).

    .venv/bin/python bench/bench_ls.py [--rounds 20] [--agents 1000] [--json] [--baseline DIR]...

--without-service: also time `roost ls` in a second world seeded alike whose roost service is
stopped (the first world's runs, as any launch starts it), interleaved: what the service costs ls.

--baseline DIR (repeatable): a checkout of an older roost (e.g. `git archive 375bb70`), labelled
by its folder's name, timed in the same run,
interleaved: its own world (store seeded by its own bench_ls.py, its own tmux server), its
source first on PYTHONPATH, the same interpreter.
"""

from __future__ import annotations

import random
import statistics
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from roost.core.model import INTENT_RUNNING, INTENT_STOPPED, Agent
from roost.store.db import Store
from roost.system.config import Paths

from _common import PYTHON, WORDS, World, finish, ms, parser, run, summary, table, timed, world

TARGET = 3.0
PROVIDERS = ["claude"] * 12 + ["codex"] * 4 + ["gemini"] * 2 + ["aider", "command"]


def fake_agents(count: int, work: Path) -> list[Agent]:
    """Rows like a heavy user's: mixed providers, shared homes, long cwds, most stopped."""
    rng = random.Random(1000)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    agents = []
    for i in range(count):
        provider = rng.choice(PROVIDERS)
        name = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-{i:04d}"
        created = start + timedelta(minutes=37 * i)
        launches = rng.randint(0, 6)
        args: tuple[str, ...] = (
            ("sleep", "1000")
            if provider == "command"
            else rng.choice([(), (), ("--model", "opus"), ("--verbose",)])
        )
        agents.append(
            Agent(
                id=str(uuid.uuid4()),
                name=name,
                provider=provider,
                cwd=str(
                    work / "src" / f"project-{i % 41}" / rng.choice(["", "backend", "web/app"])
                ),
                home=name if rng.random() < 0.8 else f"team-{i % 9}",
                args=args,
                dangerous=rng.random() < 0.2,
                # Every provider that has a session id has found it: `ls` never scans files here.
                provider_session_id=str(uuid.uuid4())
                if provider in ("claude", "codex", "gemini")
                else None,
                created_at=created.isoformat(timespec="milliseconds"),
                intent=INTENT_RUNNING if rng.random() < 0.3 else INTENT_STOPPED,
                started_at=(created + timedelta(minutes=5)).isoformat(timespec="milliseconds")
                if launches
                else None,
                launches=launches,
                last_exit=rng.choice([None, 0, 1, 130, 137]) if launches else None,
            )
        )
    return agents


def seed(roost_home: Path, agents: list[Agent]) -> None:
    store = Store.open(Paths(roost_home).db)
    store.conn.execute("PRAGMA synchronous = OFF")  # this connection only: a faster setup
    for agent in agents:
        store.insert(agent)
    store.close()


@contextmanager
def baseline_world(src: Path, agents: int) -> Iterator[tuple[World, dict[str, str]]]:
    """A world for the older roost in `src`: seeded and spawned by its own code."""
    with world("ls-old") as w:
        env = {**w.env, "PYTHONPATH": f"{src / 'src'}:{src / 'bench'}"}
        seeding = (
            "import sys; from pathlib import Path; import bench_ls as b; "
            "b.seed(Path(sys.argv[1]), b.fake_agents(int(sys.argv[2]), Path(sys.argv[3])))"
        )
        run(
            [PYTHON, "-c", seeding, str(w.roost_home), str(agents - 1), str(w.tmp / "work")],
            env,
            w.tmp,
        )
        run(
            [*w.roost_argv("spawn", "live-one", "--provider", "command", "--", "sleep", "1000")],
            env,
            w.tmp,
        )
        rows = len(run(w.roost_argv("ls"), env, w.tmp).splitlines()) - 1
        assert rows == agents, f"the baseline's roost ls listed {rows} agents, expected {agents}"
        yield w, env


def import_costs(env: dict[str, str], cwd: Path, runs: int = 5) -> list[tuple[str, float]]:
    """What roost's imports cost in `python -X importtime -m roost ls`, slowest first (seconds,
    median of `runs`): each module roost's own code imports directly ("psutil <- roost.procs"),
    and the self time of roost's own modules together."""
    found: dict[str, list[float]] = {}
    for _ in range(runs):
        err = subprocess.run(
            [PYTHON, "-X", "importtime", "-m", "roost", "ls"],
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=60,
        ).stderr
        for name, seconds in _roost_imports(err).items():
            found.setdefault(name, []).append(seconds)
    return sorted(((n, statistics.median(t)) for n, t in found.items()), key=lambda c: -c[1])


def _roost_imports(importtime: str) -> dict[str, float]:
    pending: dict[int, list[Any]] = {}  # importtime prints a module after the modules it imported
    for line in importtime.splitlines():
        parts = line.split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        level = (len(parts[2]) - len(parts[2].lstrip()) - 1) // 2
        node = (
            parts[2].strip(),
            int(parts[0].split(":")[1]) / 1e6,
            int(parts[1]) / 1e6,
            pending.pop(level + 1, []),
        )
        pending.setdefault(level, []).append(node)
    costs = {"roost's own modules (self time)": 0.0}

    def walk(node: tuple[Any, ...]) -> None:
        name, self_s, _cumulative, children = node
        costs["roost's own modules (self time)"] += self_s
        for child in children:
            if child[0].split(".")[0] == "roost":
                walk(child)
            else:
                costs[f"{child[0]} <- {name}"] = child[2]

    for top in pending.get(0, []):
        if top[0].split(".")[0] == "roost":
            walk(top)
    return costs


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--agents", type=int, default=1000)
    p.add_argument(
        "--baseline", type=Path, action="append", default=[], help="an older checkout to time too"
    )
    p.add_argument(
        "--without-service", action="store_true", help="also ls in a world with no service"
    )
    opts = p.parse_args()

    with ExitStack() as stack:
        w = stack.enter_context(world("ls"))
        # One real agent (a home with its keeper and an agent pane), the rest only stored.
        seed(w.roost_home, fake_agents(opts.agents - 1, w.tmp / "work"))
        w.roost("spawn", "live-one", "--provider", "command", "--", "sleep", "1000")
        rows = len(w.roost("ls").splitlines()) - 1
        assert rows == opts.agents, f"roost ls listed {rows} agents, expected {opts.agents}"

        commands = {
            "python -c pass": [PYTHON, "-c", "pass"],
            "tmux list-sessions": ["tmux", "-L", w.socket, "list-sessions"],
            "python -m roost ls": w.roost_argv("ls"),
            "python -m roost ls --json": w.roost_argv("ls", "--json"),
        }
        script = Path(PYTHON).parent / "roost"
        if script.exists():
            commands["roost ls (console script)"] = [str(script), "ls"]
            commands["roost ls --json (console script)"] = [str(script), "ls", "--json"]
        envs = dict.fromkeys(commands, w.env)
        if opts.without_service:
            quiet = stack.enter_context(world("ls-quiet"))
            seed(quiet.roost_home, fake_agents(opts.agents - 1, quiet.tmp / "work"))
            quiet.roost("spawn", "live-one", "--provider", "command", "--", "sleep", "1000")
            quiet.roost("service", "stop")
            for args in (["ls"], ["ls", "--json"]):
                name = f"no service: python -m roost {' '.join(args)}"
                commands[name] = quiet.roost_argv(*args)
                envs[name] = quiet.env
        for src in opts.baseline:
            old, old_env = stack.enter_context(baseline_world(src.resolve(), opts.agents))
            for args in (["ls"], ["ls", "--json"]):
                name = f"{src.name}: python -m roost {' '.join(args)}"
                commands[name] = old.roost_argv(*args)
                envs[name] = old_env
        names = list(commands)
        for name in names * 2:  # warm up: page cache, bytecode
            timed(commands[name], envs[name], w.tmp)
        samples: dict[str, list[float]] = {n: [] for n in names}
        for r in range(opts.rounds):  # interleaved; the order rotates each round
            for name in names[r % len(names) :] + names[: r % len(names)]:
                samples[name].append(timed(commands[name], envs[name], w.tmp))
        imports = import_costs(w.env, w.tmp)

    stats = {n: summary(s) for n, s in samples.items()}
    floor = stats["python -c pass"]["median"] + stats["tmux list-sessions"]["median"]
    measured = stats["python -m roost ls"]["median"]
    ok = measured <= TARGET * floor
    against = {  # this roost's median / each baseline's
        f"{a} / {src.name}": stats[f"python -m roost {a}"]["median"]
        / stats[f"{src.name}: python -m roost {a}"]["median"]
        for src in opts.baseline
        for a in ("ls", "ls --json")
    }
    if opts.without_service:
        for a in ("ls", "ls --json"):
            against[f"{a}: service / no service"] = (
                stats[f"python -m roost {a}"]["median"]
                / stats[f"no service: python -m roost {a}"]["median"]
            )
    human = "\n".join(
        [
            f"roost ls with {opts.agents} agents, {opts.rounds} interleaved rounds (ms)\n",
            table(
                [("command", "median", "p90", "x floor")]
                + [
                    (n, ms(s["median"]), ms(s["p90"]), f"{s['median'] / floor:.2f}")
                    for n, s in stats.items()
                ]
            ),
            f"\nfloor = python -c pass + tmux list-sessions = {ms(floor)} ms; "
            f"target: python -m roost ls <= {TARGET:g} x floor = {ms(TARGET * floor)} ms",
            "\nwhere the import time goes (python -X importtime -m roost ls, median of "
            "5; cumulative "
            "ms, module <- its importer):",
            *(f"  {ms(t):>6}  {mod}" for mod, t in imports[:10]),
        ]
    )
    if against:
        human += "\n\nthis roost / baseline, medians: " + ", ".join(
            f"{k} {v:.3f}" for k, v in against.items()
        )
    results = {
        "agents": opts.agents,
        "rounds": opts.rounds,
        "target_ratio": TARGET,
        "floor_s": floor,
        "ratio": measured / floor,
        "stats_s": stats,
        "samples_s": samples,
        "import_costs_s": dict(imports),
        "vs_baseline": against,
    }
    return finish("bench_ls", results, human, ok, opts.json)


if __name__ == "__main__":
    sys.exit(main())
