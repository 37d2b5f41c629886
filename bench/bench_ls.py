"""`roost ls` with 1,000 agents in the store, answered by the roost service (warm) and without it
(cold: the fast path computes it in the caller), against the floor of any Python CLI that asks tmux.

Baselines, timed in the same run and interleaved with roost round by round: `python -c pass`
(the same interpreter), `python -c "import dataclasses, typing"` (the plain imports the typed
config, core/settings.py, brings to the cold path since stop 43) and one bare
`tmux -L SOCK list-sessions` on the same private server. Two worlds seeded alike: one whose
roost service runs (the spawn of its live agent starts it), one whose service is stopped.

Targets (issue 36's "done means", issue 37's for cold): warm, median `python -m roost ls` <= 2 x
floor, the floor being median python -c pass + median tmux list-sessions; cold, median `python -m
roost ls` without the service <= 2.5 x its floor with the plain imports in place of `pass`.

    .venv/bin/python bench/bench_ls.py [--rounds 20] [--agents 1000] [--json] [--baseline DIR]...

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

WARM_TARGET = 2.0  # x floor, with the service (issue 36)
COLD_TARGET = 2.5  # x floor with the plain imports, without it (issue 37)
PLAIN_IMPORTS = "import dataclasses, typing"  # what the typed config costs the cold path
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


def answered_by(w: World) -> str:
    """Which path answers `roost ls` in this world now: "service" (its socket), "quick" (the
    fast path in the caller) or "full" (the Click CLI: a bench of it would time the wrong path)."""
    probe = (
        "import os, time; from roost.cli import fast; from roost.ops import quicklist; "
        "print('service' if fast.from_service(False) is not None else 'quick' "
        "if quicklist.answer(False, os.environ, time.time()) is not None else 'full')"
    )
    return run([PYTHON, "-c", probe], w.env, w.tmp).strip()


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
    opts = p.parse_args()

    with ExitStack() as stack:
        w = stack.enter_context(world("ls"))
        # One real agent (a home with its keeper and an agent pane), the rest only stored; the
        # spawn starts the service, as any launch does.
        seed(w.roost_home, fake_agents(opts.agents - 1, w.tmp / "work"))
        w.roost("spawn", "live-one", "--provider", "command", "--", "sleep", "1000")
        rows = len(w.roost("ls").splitlines()) - 1
        assert rows == opts.agents, f"roost ls listed {rows} agents, expected {opts.agents}"
        cold = stack.enter_context(world("ls-cold"))
        seed(cold.roost_home, fake_agents(opts.agents - 1, cold.tmp / "work"))
        cold.roost("spawn", "live-one", "--provider", "command", "--", "sleep", "1000")
        cold.roost("service", "stop")
        cold.roost("ls")  # the full CLI records what the stop changed: then the fast path answers
        for one, path in ((w, "service"), (cold, "quick")):
            found = answered_by(one)
            assert found == path, f"roost ls answered by {found} in {one.tmp}, expected {path}"

        commands = {
            "python -c pass": [PYTHON, "-c", "pass"],
            "plain imports": [PYTHON, "-c", PLAIN_IMPORTS],
            "tmux list-sessions": ["tmux", "-L", w.socket, "list-sessions"],
            "python -m roost ls": w.roost_argv("ls"),
            "python -m roost ls --json": w.roost_argv("ls", "--json"),
        }
        script = Path(PYTHON).parent / "roost"
        if script.exists():
            commands["roost ls (console script)"] = [str(script), "ls"]
            commands["roost ls --json (console script)"] = [str(script), "ls", "--json"]
        envs = dict.fromkeys(commands, w.env)
        for args in (["ls"], ["ls", "--json"]):
            name = f"no service: python -m roost {' '.join(args)}"
            commands[name] = cold.roost_argv(*args)
            envs[name] = cold.env
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
        cold_imports = import_costs(cold.env, cold.tmp)
        for one, path in ((w, "service"), (cold, "quick")):  # still the paths timed
            found = answered_by(one)
            assert found == path, f"roost ls answered by {found} after the rounds, expected {path}"

    stats = {n: summary(s) for n, s in samples.items()}
    tmux = stats["tmux list-sessions"]["median"]
    floor = stats["python -c pass"]["median"] + tmux
    cold_floor = stats["plain imports"]["median"] + tmux
    warm = stats["python -m roost ls"]["median"]
    cold_ls = stats["no service: python -m roost ls"]["median"]
    ok = warm <= WARM_TARGET * floor and cold_ls <= COLD_TARGET * cold_floor
    against = {  # this roost's median / each baseline's
        f"{a} / {src.name}": stats[f"python -m roost {a}"]["median"]
        / stats[f"{src.name}: python -m roost {a}"]["median"]
        for src in opts.baseline
        for a in ("ls", "ls --json")
    }
    for a in ("ls", "ls --json"):
        against[f"{a}: service / no service"] = (
            stats[f"python -m roost {a}"]["median"]
            / stats[f"no service: python -m roost {a}"]["median"]
        )

    def costs(title: str, found: list[tuple[str, float]]) -> list[str]:
        return [
            f"\nwhere the import time goes {title} (python -X importtime -m roost ls, median of "
            "5; cumulative ms, module <- its importer):",
            *(f"  {ms(t):>6}  {mod}" for mod, t in found[:10]),
        ]

    human = "\n".join(
        [
            f"roost ls with {opts.agents} agents, {opts.rounds} interleaved rounds (ms)\n",
            table(
                [("command", "median", "p90", "x floor", "x cold floor")]
                + [
                    (
                        n,
                        ms(s["median"]),
                        ms(s["p90"]),
                        f"{s['median'] / floor:.2f}",
                        f"{s['median'] / cold_floor:.2f}",
                    )
                    for n, s in stats.items()
                ]
            ),
            f"\nfloor = python -c pass + tmux list-sessions = {ms(floor)} ms; with the service: "
            f"python -m roost ls {warm / floor:.2f} x floor (target <= {WARM_TARGET:g} x = "
            f"{ms(WARM_TARGET * floor)} ms)",
            f"cold floor = python -c {PLAIN_IMPORTS!r} + tmux list-sessions = {ms(cold_floor)} ms; "
            f"without it: python -m roost ls {cold_ls / cold_floor:.2f} x cold floor "
            f"(target <= {COLD_TARGET:g} x = {ms(COLD_TARGET * cold_floor)} ms)",
            *costs("with the service", imports),
            *costs("without it", cold_imports),
        ]
    )
    human += "\n\nratios of medians: " + ", ".join(f"{k} {v:.3f}" for k, v in against.items())
    results = {
        "agents": opts.agents,
        "rounds": opts.rounds,
        "target_ratio": WARM_TARGET,
        "floor_s": floor,
        "ratio": warm / floor,
        "cold_target_ratio": COLD_TARGET,
        "cold_floor_s": cold_floor,
        "cold_ratio": cold_ls / cold_floor,
        "cold_ratio_to_floor": cold_ls / floor,
        "stats_s": stats,
        "samples_s": samples,
        "import_costs_s": dict(imports),
        "cold_import_costs_s": dict(cold_imports),
        "vs_baseline": against,
    }
    return finish("bench_ls", results, human, ok, opts.json)


if __name__ == "__main__":
    sys.exit(main())
