"""A phone and an agent on a host (issue 40 point 5), over real OpenSSH (tests/sshd.py: Debian's
sshd on 127.0.0.1, host h1 a roost world of its own, running its service with one live fake
claude `api`); this roost runs its service and `roost web`, one paired device subscribed to the
tests' loopback push service (tests/push_service.py checks VAPID and decrypts).

- Edge -> push: `ask` typed into api's pane on h1 (a permission dialog), --rounds times; from
  the time of h1's `waiting` status event to the moment the push service has the push. The path:
  h1's service decides the alert, h1's `roost watch` hands it over ssh to this service's
  follower, which asks h1 `roost answer api --json` (the question), mints the capability and
  pushes. Target: p90 <= 1000 ms plus one ssh command (the question).
- Answer applied on h1: POST /push/answer with the capability and "1" (Yes) until roost web
  answers (h1's `roost answer api 1 --question ID --json` over the warm master: the dialog gone
  on h1, api at its prompt again).

Each round waits out the alerts' debounce (5 s) first.

    .venv/bin/python bench/bench_push_hosts.py [--rounds 10] [--json]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from _common import ROOT, finish, ms, parser, summary, table

sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
from bench_push import DEBOUNCE, request
from bench_web import start_web
from push_service import PushService
from sshd import kill_masters, make_fleet

from conftest import Env, make_env


def pair(local: Env, base: str) -> dict[str, str]:
    link = local.roost("web", "pair", "--no-qr", "--url", base).stdout.strip()
    parts = urlsplit(link)
    _, headers, _ = request(parts.netloc, "GET", f"{parts.path}?{parts.query}")
    cookie = headers["set-cookie"].split(";", 1)[0]
    _, _, page = request(parts.netloc, "GET", "/", headers={"Cookie": cookie})
    csrf = page.split('name="roost-csrf" content="', 1)[1].split('"', 1)[0]
    return {"Cookie": cookie, "Origin": base, "X-Roost-CSRF": csrf}


def waiting_at(world: Env) -> float:
    found = json.loads(world.roost("events", "api", "--json").stdout)
    at = [e["at"] for e in found if e["kind"] == "status" and e.get("status") == "waiting"][-1]
    return datetime.fromisoformat(at).timestamp()


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=10)
    opts = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="rb-pushh-", dir="/tmp"))
    local = make_env(tmp)
    local.env["ROOST_PUSH_LOOPBACK"] = "1"
    fleet = make_fleet(local)
    service = PushService().start()
    edges: list[float] = []
    answers: list[float] = []
    try:
        h1 = fleet.add("h1")
        there = h1.world
        (there.tmp / "work").mkdir(exist_ok=True)
        there.roost("spawn", "api", "--cwd", str(there.tmp / "work"))
        there.wait_status("api", "idle")
        there.start_service(hearing="api")
        pane = there.pane_of("api")
        proc, url = start_web(local.env, tmp)
        try:
            netloc = urlsplit(url).netloc
            headers = pair(local, f"http://{netloc}")
            sub = service.subscription()
            status, _, said = request(netloc, "POST", "/push/subscribe", sub.json(), headers)
            assert status == 200, said
            local.start_service()
            time.sleep(3.0)  # its follower reads h1's stream
            for _ in range(opts.rounds):
                before = len(service.received)
                there.type(pane, "ask")
                there.wait_for(lambda: len(service.received) > before, 60)  # noqa: B023
                got: Any = service.received[before]
                edges.append(got.at - waiting_at(there))
                body = {"capability": got.payload["capability"], "choice": "1"}
                t0 = time.perf_counter()
                status, _, said = request(netloc, "POST", "/push/answer", body, headers)
                answers.append(time.perf_counter() - t0)
                assert status == 200, said
                there.wait_for(lambda: len(service.received) > before + 1, 30)  # noqa: B023
                there.wait_status("api", "idle")
                time.sleep(DEBOUNCE)
        finally:
            proc.terminate()
            proc.wait(10)
    finally:
        service.stop()
        fleet.close()
        kill_masters(str(fleet.ssh_config))
    e, a = summary(edges), summary(answers)
    rows = [
        ["measure", "median ms", "p90 ms", "max ms"],
        ["edge on h1 -> push sent here", ms(e["median"]), ms(e["p90"]), ms(e["max"])],
        ["answer applied on h1", ms(a["median"]), ms(a["p90"]), ms(a["max"])],
    ]
    ok = e["p90"] <= 1.5 and a["p90"] <= 1.5
    results: dict[str, object] = {"edge_to_push": e, "answer": a, "rounds": opts.rounds}
    return finish("push_hosts", results, table(rows), ok, opts.json)


if __name__ == "__main__":
    raise SystemExit(main())
