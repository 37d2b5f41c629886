"""roost web: the fleet page's first paint with 200 agents, a status change reaching an open page,
and a keystroke's echo in the browser terminal; in Debian's headless Chromium on loopback.

One world: 199 agents only stored (bench_ls's fake records: no panes, as the page reads them from
the store and one listing of tmux) and one live fake claude, `api`. `roost web` serves it.

- First paint: the fleet page loaded --loads times in the logged-in browser; per load the
  browser's own first-contentful-paint and DOMContentLoaded (Navigation/Paint Timing).
  Target: median first paint <= 1000 ms.
- Status change: `work 1` typed into api's pane, --changes times; from the event's time in the
  log (`at` of its status event: working) to the moment the open page's badge shows it (a
  MutationObserver's Date.now()). Target: median <= 1000 ms.
- Echo: one key sent over the terminal's WebSocket until the pty's output carries it back
  (WebSocket -> pty -> tmux client -> the agent's line editor -> tmux -> WebSocket),
  --keys times (each key then erased). Target: median <= 50 ms.

    .venv/bin/python bench/bench_web.py [--loads 10] [--changes 5] [--keys 30] [--json]
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from bench_ls import fake_agents, seed

from _common import World, finish, ms, parser, summary, table, world

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path.insert(0, str(TESTS))
from web_server import XTERM, chromium  # noqa: E402  (the tests' browser, as they start it)

WAIT_BADGE = """
const [name, want] = arguments;
window.roostSeen = null;
const done = (t) => { window.roostSeen = t; };
const badge = () => [...document.querySelectorAll('ul.fleet li')]
  .find(li => li.querySelector('a').textContent === name)?.querySelector('[data-badge]');
const check = () => {
  const b = badge();
  if (b && b.textContent === want) { done(Date.now()); return true; }
};
if (check()) return;
const seen = new MutationObserver(() => { if (check()) seen.disconnect(); });
seen.observe(document.getElementById('fleet'),
             {subtree: true, childList: true, characterData: true});
"""
ECHO = """
const [key, done] = arguments;
const ws = window.roostSocket, enc = new TextEncoder(), dec = new TextDecoder();
const t0 = performance.now();
const got = (m) => {
  if (dec.decode(m.data).includes(key)) {
    ws.removeEventListener('message', got);
    done(performance.now() - t0);
  }
};
ws.addEventListener('message', got);
ws.send(enc.encode(key));
"""


def start_web(env: dict[str, str], cwd: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "roost", "web", "--bind", "127.0.0.1:0", "--allow-typing"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**env, "ROOST_WEB_ASSETS": str(XTERM)},
        cwd=cwd,
    )
    assert proc.stdout is not None
    select.select([proc.stdout], [], [], 30)
    return proc, proc.stdout.readline().split(" ", 2)[2].strip()


def wait_for(predicate: Callable[[], Any], timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.05)
    raise SystemExit("timed out")


def status_of(w: World, name: str) -> str:
    rows = json.loads(w.roost("ls", "--json"))
    return str(next(a for a in rows if a["name"] == name)["status"])


def last_working_at(w: World) -> float:
    found = json.loads(w.roost("events", "api", "--json"))
    at = [e["at"] for e in found if e["kind"] == "status" and e.get("status") == "working"][-1]
    return datetime.fromisoformat(at).timestamp()


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--agents", type=int, default=200)
    p.add_argument("--loads", type=int, default=10)
    p.add_argument("--changes", type=int, default=5)
    p.add_argument("--keys", type=int, default=30)
    opts = p.parse_args()
    with world("web") as w:
        seed(w.roost_home, fake_agents(opts.agents - 1, w.tmp / "work"))
        w.roost("spawn", "api", "--cwd", str(w.tmp / "work"))
        wait_for(lambda: status_of(w, "api") == "idle")
        pane = next(r[0] for r in w.panes("#{pane_id}\t#{window_name}") if r[1] == "api")
        proc, url = start_web(w.env, w.tmp)
        try:
            with chromium(w.tmp, 1000, 800) as driver:
                d: Any = driver
                paints, loaded = measure_loads(d, url, opts.loads)
                changes = measure_changes(d, w, pane, opts.changes)
                echoes = measure_echo(d, url, opts.keys)
        finally:
            proc.terminate()
            proc.wait(10)
    rows = [
        ["measure", "median ms", "p90 ms", "target ms"],
        ["fleet first paint (200 agents)", ms(paints["median"]), ms(paints["p90"]), "1000"],
        ["fleet DOMContentLoaded", ms(loaded["median"]), ms(loaded["p90"]), "-"],
        ["status change -> page", ms(changes["median"]), ms(changes["p90"]), "1000"],
        ["terminal echo", ms(echoes["median"]), ms(echoes["p90"]), "50"],
    ]
    ok = paints["median"] <= 1.0 and changes["median"] <= 1.0 and echoes["median"] <= 0.05
    results: dict[str, object] = {
        "first_paint": paints,
        "dom_loaded": loaded,
        "status": changes,
        "echo": echoes,
    }
    return finish("web", results, table(rows), ok, opts.json)


def measure_loads(driver: Any, url: str, loads: int) -> tuple[dict[str, float], dict[str, float]]:
    d: Any = driver
    d.get(url)  # log in (the cookie), then time the page itself
    base = url.split("/login", 1)[0]
    paints, loaded = [], []
    for _ in range(loads):
        d.get(base + "/")
        timing = wait_for(
            lambda: d.execute_script(
                "const p = performance.getEntriesByName('first-contentful-paint')[0];"
                "const n = performance.getEntriesByType('navigation')[0];"
                "return p && n && n.domContentLoadedEventEnd > 0 ? "
                "[p.startTime, n.domContentLoadedEventEnd] : null"
            )
        )
        paints.append(timing[0] / 1000)
        loaded.append(timing[1] / 1000)
    count = d.execute_script("return document.querySelectorAll('ul.fleet li').length")
    assert count >= 200, count
    return summary(paints), summary(loaded)


def measure_changes(driver: Any, w: World, pane: str, changes: int) -> dict[str, float]:
    d: Any = driver
    d.set_script_timeout(30)
    samples = []
    for _ in range(changes):
        d.execute_script(WAIT_BADGE, "api", "working")
        w.tmux("send-keys", "-t", pane, "-l", "work 1")
        w.tmux("send-keys", "-t", pane, "Enter")
        seen = wait_for(lambda: d.execute_script("return window.roostSeen"))
        samples.append(float(seen) / 1000 - last_working_at(w))
        wait_for(lambda: status_of(w, "api") == "idle")
    return summary(samples)


def measure_echo(driver: Any, url: str, keys: int) -> dict[str, float]:
    d: Any = driver
    base = url.split("/login", 1)[0]
    d.get(base + "/a/api/term")
    wait_for(
        lambda: d.execute_script("return window.roostSocket && window.roostSocket.readyState === 1")
    )
    time.sleep(0.5)  # the attach's first full redraw, not part of any echo
    samples = []
    for i in range(keys):
        key = "qwertyuiopasdfghjklz"[i % 20]
        samples.append(d.execute_async_script(ECHO, key) / 1000)
        d.execute_script("window.roostSocket.send(new TextEncoder().encode('\\x7f'))")
        time.sleep(0.05)
    return summary(samples)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    raise SystemExit(main())
