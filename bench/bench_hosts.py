"""`roost ls --all` over real OpenSSH: two hosts (Debian's sshd on 127.0.0.1, each with its own
roost world: tests/sshd.py), against the floor of a local `roost ls` plus one ssh round trip.

Timed in the same run, interleaved round by round, the connections warm (roost's own masters):
  - `python -m roost ls` (local, one agent);
  - `ssh -F CONFIG -o ControlPath=<roost's master for h1> h1 true` (one round trip);
  - `python -m roost --host h1 ls --json` (one host: where the time goes);
  - `python -m roost ls --all` (local and two hosts, one agent each, asked in parallel);
  - the same with a third host whose port accepts and never speaks ([ssh] connect_timeout 2).
Targets: median ls --all <= 1.5 x (median ls + median round trip); the silent host adds at most
its time limit (connect_timeout + 1 s: ssh's start and the kill), never more.

Every roost here and on the hosts runs its service, as one with agents does (a launch starts it;
the tests' worlds switch that off): each `roost ls` is answered by it. --no-services: none.

    .venv/bin/python bench/bench_hosts.py [--rounds 10] [--no-services] [--json]
"""

from __future__ import annotations

import os
import shlex
import socket
import statistics
import sys
import tempfile
from pathlib import Path

from _common import PYTHON, ROOT, finish, ms, parser, summary, table, timed

sys.path.insert(0, str(ROOT / "tests"))
from sshd import kill_masters, make_fleet

from roost.hosts.rules import control_path

from conftest import Env, make_env

TARGET = 1.5
CONNECT_LIMIT = 2.0


def main() -> int:
    p = parser(__doc__ or "")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--no-services", action="store_true")
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="rb-hosts-", dir="/tmp"))
    local = make_env(tmp)
    fleet = make_fleet(local)
    silent = socket.socket()
    try:
        worlds = [local]
        for name in ("h1", "h2"):
            host = fleet.add(name)
            local.roost("spawn", f"{name}:a", "--cwd", str(host.world.tmp / "work"))
            worlds.append(host.world)
        local.roost("spawn", "here", "--cwd", str(tmp / "work"))
        for world in worlds if not args.no_services else []:
            world.roost("service", "start")

            def idle(w: Env = world) -> bool:
                return all(a["status"] == "idle" for a in w.ls().values())

            world.wait_for(idle, 30)
        (local.home / "config.toml").write_text(f"[ssh]\nconnect_timeout = {CONNECT_LIMIT:g}\n")
        env = local.env
        home = os.path.realpath(env["ROOST_HOME"])
        program = " ".join(shlex.split(env["ROOST_SSH_COMMAND"]))
        master = control_path(f"/tmp/roost-ssh-{os.getuid()}", home, program, "h1", "h1")
        rtt_argv = ["ssh", "-F", str(fleet.ssh_config), "-o", f"ControlPath={master}", "h1", "true"]
        ls_argv = [PYTHON, "-m", "roost", "ls"]
        all_argv = [PYTHON, "-m", "roost", "ls", "--all"]
        timed(all_argv, env, tmp)  # warm: masters up
        one_argv = [PYTHON, "-m", "roost", "--host", "h1", "ls", "--json"]
        samples: dict[str, list[float]] = {
            "ls": [],
            "rtt": [],
            "one": [],
            "all": [],
            "silent": [],
        }
        for _ in range(args.rounds):
            samples["ls"].append(timed(ls_argv, env, tmp))
            samples["rtt"].append(timed(rtt_argv, env, tmp))
            samples["one"].append(timed(one_argv, env, tmp))
            samples["all"].append(timed(all_argv, env, tmp))
        silent.bind(("127.0.0.1", 0))
        silent.listen(64)
        port = silent.getsockname()[1]
        with fleet.ssh_config.open("a") as f:
            f.write(f"\nHost mute\n  HostName 127.0.0.1\n  Port {port}\n  User root\n")
        local.roost("host", "add", "mute", "mute")
        for _ in range(max(3, args.rounds // 3)):
            samples["silent"].append(timed(all_argv, env, tmp))  # exits 0: one line on stderr
    finally:
        silent.close()
        fleet.close()
        kill_masters(str(fleet.ssh_config))
    med = {k: statistics.median(v) for k, v in samples.items()}
    floor = med["ls"] + med["rtt"]
    ratio = med["all"] / floor
    extra = med["silent"] - med["all"]
    ok = ratio <= TARGET and max(samples["silent"]) - med["all"] <= CONNECT_LIMIT + 1
    rows = [
        ("what", "median ms", "p90 ms"),
        *[(k, ms(med[k]), ms(summary(v)["p90"])) for k, v in samples.items()],
    ]
    human = (
        table(rows)
        + f"\n\nls --all / (ls + one round trip) = {ratio:.2f} (target <= {TARGET})"
        + f"\na silent host adds {ms(extra)} ms (limit {CONNECT_LIMIT:g} s + 1 s)"
    )
    results = {
        "samples": samples,
        "medians": med,
        "ratio": ratio,
        "silent_extra": extra,
        "target": TARGET,
        "services": not args.no_services,
    }
    return finish("bench_hosts", results, human, ok, args.json)


if __name__ == "__main__":
    sys.exit(main())
