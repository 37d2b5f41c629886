"""Shared by the benchmarks: an isolated roost world, timing, statistics and output.

A world is isolated exactly like the tests' (tests/conftest.py make_env): a private ROOST_HOME and
HOME in a temp dir, a private tmux socket name (`-L`), TMUX_TMPDIR in a short temp dir (a unix
socket path is limited to 107 bytes), and its tmux server killed at the end. The default tmux
server, ~/.tmux.conf and ~/.claude are never touched.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FAKE_BIN = ROOT / "tests" / "bin"
PYTHON = sys.executable  # the venv's interpreter itself (not a pyenv shim on PATH)


@dataclass
class World:
    tmp: Path
    env: dict[str, str]
    socket: str

    @property
    def roost_home(self) -> Path:
        return Path(self.env["ROOST_HOME"])

    def roost_argv(self, *args: str) -> list[str]:
        return [PYTHON, "-m", "roost", *args]

    def roost(self, *args: str) -> str:
        """Run `python -m roost ARGS` in this world; its stdout, or an error with its stderr."""
        return run(self.roost_argv(*args), self.env, cwd=self.tmp)

    def tmux_argv(self, *args: str) -> list[str]:
        return ["tmux", "-L", self.socket, "-f", "/dev/null", *args]

    def tmux(self, *args: str) -> str:
        return run(self.tmux_argv(*args), self.env)

    def panes(self, fmt: str) -> list[list[str]]:
        """`list-panes -a -F fmt` split on tabs; [] when no server runs."""
        proc = subprocess.run(
            self.tmux_argv("list-panes", "-a", "-F", fmt),
            env=self.env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        return (
            [line.split("\t") for line in proc.stdout.splitlines()] if proc.returncode == 0 else []
        )


def run(argv: Sequence[str], env: dict[str, str], cwd: Path | None = None) -> str:
    proc = subprocess.run(list(argv), env=env, cwd=cwd, capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


def _short_tmp() -> str:
    """/tmp when it exists: $TMPDIR can be long enough to push the socket past 107 bytes."""
    return "/tmp" if os.path.isdir("/tmp") and os.access("/tmp", os.W_OK) else tempfile.gettempdir()


@contextmanager
def world(tag: str) -> Iterator[World]:
    tmp = Path(tempfile.mkdtemp(prefix=f"rb-{tag}-", dir=_short_tmp()))
    socket = f"rb-{uuid.uuid4().hex[:10]}"
    for sub in ("tmux", "user", "work", "pyc"):
        (tmp / sub).mkdir(mode=0o700)
    sock_path = tmp / "tmux" / f"tmux-{os.getuid()}" / socket
    assert len(str(sock_path)) < 107, f"tmux socket path too long: {sock_path}"
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TMUX", "ROOST_", "FAKE_AGENT", "CLAUDE", "CODEX"))
    }
    env.update(
        ROOST_HOME=str(tmp / "roost"),
        ROOST_TMUX_SOCKET=socket,
        TMUX_TMPDIR=str(tmp / "tmux"),
        HOME=str(tmp / "user"),
        FAKE_AGENT_LOG=str(tmp / "starts.jsonl"),
        ROOST_CLAUDE_BIN=str(FAKE_BIN / "claude"),
        ROOST_CODEX_BIN=str(FAKE_BIN / "codex"),
        ROOST_GEMINI_BIN=str(FAKE_BIN / "gemini"),
        ROOST_AIDER_BIN=str(FAKE_BIN / "aider"),
        FAKE_AGENT_PYTHON=PYTHON,
        LANG="C.UTF-8",
        # Cached bytecode, as in a normal install, kept in the temp dir: the tree stays untouched.
        PYTHONPYCACHEPREFIX=str(tmp / "pyc"),
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    w = World(tmp=tmp, env=env, socket=socket)
    try:
        yield w
    finally:
        subprocess.run(w.tmux_argv("kill-server"), env=env, capture_output=True, timeout=30)
        kill_tagged_processes(env["ROOST_HOME"])
        shutil.rmtree(tmp, ignore_errors=True)


def kill_tagged_processes(roost_home: str) -> None:
    """Anything left running from this world (keepers and agents carry its ROOST_HOME)."""
    import psutil

    for proc in psutil.process_iter():
        try:
            if proc.pid != os.getpid() and proc.environ().get("ROOST_HOME") == roost_home:
                proc.kill()
        except (psutil.Error, OSError):
            continue


# ---- timing and statistics -----------------------------------------------------------------
def timed(argv: Sequence[str], env: dict[str, str], cwd: Path | None = None) -> float:
    """Wall seconds of one run, output read through pipes as a script would; fails loudly."""
    start = time.perf_counter()
    proc = subprocess.run(list(argv), env=env, cwd=cwd, capture_output=True, timeout=60)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(argv)} failed ({proc.returncode}): "
            f"{proc.stderr.decode(errors='replace').strip()}"
        )
    return elapsed


def summary(samples: Sequence[float]) -> dict[str, float]:
    s = sorted(samples)
    p90 = statistics.quantiles(s, n=10, method="inclusive")[8] if len(s) > 1 else s[0]
    return {"n": len(s), "median": statistics.median(s), "p90": p90, "min": s[0], "max": s[-1]}


# ---- output ------------------------------------------------------------------------------
def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def mb(nbytes: float) -> str:
    return f"{nbytes / 2**20:.2f}"


def table(rows: Sequence[Sequence[object]]) -> str:
    """A plain text table; the first row is the header."""
    cells = [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    lines = [
        "  ".join(
            c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--json", action="store_true", help="print machine-readable results only")
    return p


def machine() -> dict[str, object]:
    tmux_v = subprocess.run(["tmux", "-V"], capture_output=True, text=True).stdout.strip()
    return {
        "python": sys.version.split()[0],
        "executable": PYTHON,
        "tmux": tmux_v,
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d"),
    }


def finish(name: str, results: dict[str, object], human: str, ok: bool, as_json: bool) -> int:
    """Print the table (or the JSON) and turn the verdict into the exit status."""
    if as_json:
        print(json.dumps({"benchmark": name, "ok": ok, "machine": machine(), **results}, indent=2))
    else:
        print(human)
        print(f"\n{name}: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


@contextmanager
def environ(env: dict[str, str]) -> Iterator[None]:
    """os.environ as the world's, for in-process roost calls: roost (and the TUI's LiveSource)
    read ROOST_HOME and the socket name from it."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


# Words for agents' names in the benchmarks' made-up fleets.
WORDS = [
    "fix",
    "api",
    "login",
    "tests",
    "docs",
    "refactor",
    "review",
    "perf",
    "ui",
    "db",
    "auth",
    "deploy",
    "flaky",
    "cache",
    "search",
]
