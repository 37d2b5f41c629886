"""Start times of the real CLIs (issue 19, item 5): how long each takes, in a tmux pane, to show
its ready screen (its provider's idle pattern), and how long it lives when a bad flag makes it
fail. core/starts.py's hold windows are derived from these. Offline, against the tests' API
stand-ins, with the pinned installs in $ROOST_TEST_CACHE (tests/real_*.py). Run it idle and under
load (`--load N` runs N busy loops beside it) to see the spread.

    .venv/bin/python bench/bench_starts.py [--runs 3] [--load 0] [--cli gemini --cli aider]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from roost.core import status  # noqa: E402
from roost.providers import traits  # noqa: E402

BAD_FLAG = "--no-such-flag-roost"


def _spin() -> None:
    while True:
        pass


def setups(home: Path, cwd: Path) -> dict[str, tuple[list[str], dict[str, str], object]]:
    """cli -> (argv, env, stub to enter)."""
    import os

    import real_aider
    import real_claude
    import real_codex
    import real_gemini
    from anthropic_stub import AnthropicStub
    from chat_completions_stub import ChatCompletionsStub
    from gemini_stub import GeminiStub
    from openai_responses_stub import ResponsesStub

    base = dict(os.environ)
    found: dict[str, tuple[list[str], dict[str, str], object]] = {}
    gem = GeminiStub()
    real_gemini.prepare_home(home)
    found["gemini"] = (
        [str(real_gemini.install_gemini())],
        real_gemini.gemini_env(base, home, gem.url),
        gem,
    )
    chat = ChatCompletionsStub()
    aider = real_aider.install_aider()
    real_aider.prepare_home(home, chat.url, aider)
    found["aider"] = ([str(aider)], real_aider.aider_env(base, home), chat)
    ant = AnthropicStub()
    real_claude.prepare_home(home, [cwd])
    found["claude"] = (
        [str(real_claude.install_claude())],
        real_claude.claude_env(base, home, ant.url),
        ant,
    )
    resp = ResponsesStub()
    codex_home = home / ".codex"
    real_codex.prepare_codex_home(codex_home, resp.url, [cwd])
    found["codex"] = (
        [str(real_codex.install_codex()), "--no-daemon"],
        real_codex.codex_env(base, home, codex_home, resp.url),
        resp,
    )
    return found


def measure(
    tmux: object,
    cli: str,
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    bad: bool,
    limit: float = 120.0,
) -> float | None:
    """Seconds until the pane shows the CLI ready (or, with `bad`, until it dies)."""
    patterns = status.patterns_for(traits.of(cli).patterns)
    began = time.monotonic()
    pane = tmux.new_window([*argv, *([BAD_FLAG] if bad else [])], cwd, env)  # type: ignore[attr-defined]
    try:
        while time.monotonic() - began < limit:
            if bad and tmux.pane_dead(pane):  # type: ignore[attr-defined]
                return time.monotonic() - began
            found = status.reading(tmux.screen(pane), patterns)  # type: ignore[attr-defined]
            if not bad and found and found[0] in ("idle", "waiting"):
                return time.monotonic() - began
            time.sleep(0.05)
        return None
    finally:
        tmux.run("kill-pane", "-t", pane, check=False)  # type: ignore[attr-defined]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--load", type=int, default=0, help="busy loops beside it")
    ap.add_argument("--cli", action="append", choices=("gemini", "aider", "claude", "codex"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from real_claude import PrivateTmux

    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.load)]
    for s in spinners:
        s.start()
    results: dict[str, dict[str, list[float | None]]] = {}
    with tempfile.TemporaryDirectory(prefix="starts-") as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "work"
        home.mkdir()
        cwd.mkdir()
        found = setups(home, cwd)
        tmux = PrivateTmux(found["gemini"][1])
        try:
            for cli in args.cli or ("gemini", "aider", "claude", "codex"):
                argv, env, stub = found[cli]
                with stub:  # type: ignore[attr-defined]
                    results[cli] = {
                        "ready": [
                            measure(tmux, cli, argv, env, cwd, False) for _ in range(args.runs)
                        ],
                        "bad_flag_death": [
                            measure(tmux, cli, argv, env, cwd, True) for _ in range(args.runs)
                        ],
                    }
        finally:
            tmux.kill()
            for s in spinners:
                s.terminate()
    if args.json:
        print(json.dumps({"load": args.load, "results": results}))
        return 0
    print(f"busy loops beside it: {args.load}")
    for cli, r in results.items():
        for what, values in r.items():
            done = [v for v in values if v is not None]
            shown = " ".join(f"{v:.1f}" if v is not None else "-" for v in values)
            med = f"median {statistics.median(done):.1f} s" if done else "none in time"
            print(f"{cli:7} {what:15} {shown}  ({med})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
