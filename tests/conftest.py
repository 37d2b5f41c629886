"""Shared fixtures: every test that needs tmux gets a private server and a private roost home.

Private means: its own `-L` socket name, TMUX_TMPDIR under the test's tmp dir, HOME under it too
(the fake provider CLIs write their transcripts there), and the server killed at teardown.
The user's default tmux server, ~/.tmux.conf and ~/.claude are never touched.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from zygote import Call

TESTS = Path(__file__).resolve().parent
FAKE_BIN = TESTS / "bin"


@dataclass
class Env:
    """One isolated roost world: run roost, inspect tmux, read the fake agents' logs."""

    tmp: Path
    env: dict[str, str]
    socket: str

    @property
    def home(self) -> Path:
        return Path(self.env["ROOST_HOME"])

    @property
    def user_home(self) -> Path:
        return Path(self.env["HOME"])

    @property
    def agent_log(self) -> Path:
        return Path(self.env["FAKE_AGENT_LOG"])

    def roost(
        self,
        *args: str,
        check: bool = True,
        input: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 60,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run the real CLI (`python -m roost`) as a user would: a process of its own, forked
        from a warm roost (tests/zygote.py) when the environment allows."""
        call_env = {**self.env, **(env or {})}
        zygote = _zygote()
        if zygote is not None and zygote.serves(call_env):
            proc = zygote.run(list(args), call_env, str(cwd or self.tmp), input, timeout)
        else:
            proc = subprocess.run(
                [sys.executable, "-m", "roost", *args],
                capture_output=True,
                text=True,
                env=call_env,
                # no input: /dev/null, as the zygote's calls (a terminal would be asked)
                **({"input": input} if input is not None else {"stdin": subprocess.DEVNULL}),
                timeout=timeout,
                cwd=cwd or self.tmp,
            )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"roost {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
            )
        return proc

    def roost_start(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        capture: bool = True,
    ) -> Call | subprocess.Popen[str]:
        """Start the real CLI and return at once (calls run side by side, one killed midway):
        forked from the warm roost as `roost` is, its input /dev/null, its output captured
        (`communicate`) or thrown away."""
        call_env = {**self.env, **(env or {})}
        zygote = _zygote()
        if zygote is not None and zygote.serves(call_env):
            return zygote.start(list(args), call_env, str(cwd or self.tmp), capture=capture)
        output = subprocess.PIPE if capture else subprocess.DEVNULL
        return subprocess.Popen(
            [sys.executable, "-m", "roost", *args],
            env=call_env,
            cwd=cwd or self.tmp,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            text=True,
        )

    def roost_together(self, *commands: tuple[str, ...]) -> list[subprocess.CompletedProcess[str]]:
        """Run these calls side by side (all started, then each read to its end)."""
        calls = [self.roost_start(*c) for c in commands]
        done = []
        for call in calls:
            out, err = call.communicate(timeout=120)
            done.append(subprocess.CompletedProcess(call.args, call.wait(), out, err))
        return done

    def roost_inprocess(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run the CLI in this process: for refusals that never reach tmux (bad names, bad
        flags), where a fresh interpreter per call would only cost time. Same entry point,
        same error handling, same exit codes as `python -m roost`."""
        import contextlib
        import io
        from unittest import mock

        from roost.cli.main import main

        out, err = io.StringIO(), io.StringIO()
        code = 0
        with (
            mock.patch.dict(os.environ, {**self.env, **(env or {})}, clear=True),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            try:
                main(list(args))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        return subprocess.CompletedProcess(["roost", *args], code, out.getvalue(), err.getvalue())

    def roost_importtime(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`python -X importtime -m roost ARGS` in a fresh interpreter (never the warm one):
        its stderr lists every module the command loaded."""
        return subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "roost", *args],
            env=self.env,
            cwd=self.tmp,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def ls(self) -> dict[str, dict[str, Any]]:
        return {a["name"]: a for a in json.loads(self.roost("ls", "--json").stdout)}

    def tmux(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=30,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)}: {proc.stderr}")
        return proc.stdout

    def panes(self) -> list[dict[str, str]]:
        keys = [
            "session",
            "session_id",
            "window_index",
            "window",
            "window_id",
            "pane_id",
            "pid",
            "dead",
            "status",
            "roost_id",
            "keeper",
            "home",
        ]
        fmt = "\t".join(
            [
                "#{session_name}",
                "#{session_id}",
                "#{window_index}",
                "#{window_name}",
                "#{window_id}",
                "#{pane_id}",
                "#{pane_pid}",
                "#{pane_dead}",
                "#{pane_dead_status}",
                "#{@roost_id}",
                "#{@roost_keeper}",
                "#{@roost_home}",
            ]
        )
        proc = subprocess.run(
            ["tmux", "-L", self.socket, "list-panes", "-a", "-F", fmt],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=30,
        )
        if proc.returncode != 0:
            return []
        from roost.core.service import SESSION  # the service's hidden session: no agent's

        rows = [
            dict(zip(keys, line.split("\t"), strict=False)) for line in proc.stdout.splitlines()
        ]
        return [r for r in rows if r["session"] != SESSION]

    def screen(self, target: str) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-t", target)

    def starts(self) -> list[dict[str, Any]]:
        """Every start of a fake agent CLI, in order (from FAKE_AGENT_LOG)."""
        if not self.agent_log.exists():
            return []
        return [json.loads(line) for line in self.agent_log.read_text().splitlines() if line]

    def last_start(self, count: int | None = None) -> dict[str, Any]:
        """The latest fake-agent start, waiting until `count` starts (default: one more than
        were logged when the test last asked) have been logged."""
        want = count if count is not None else 1
        starts = self.wait_for(
            lambda: len(self.starts()) >= want and self.starts(), what=f"{want} agent start(s)"
        )
        return starts[-1]

    def wait_for(
        self, predicate: Callable[[], object], timeout: float = 15, what: str = "condition"
    ) -> Any:
        """The predicate's first truthy value (Any: callers index what their predicate gave).
        Asked again after 0.05 s, then less and less often, up to every 0.25 s: most waits end
        within a few asks, and a long one (an agent's turn) would otherwise run a `roost ls`
        twenty times a second, CPU the other workers' tests are waiting for."""
        deadline = time.monotonic() + timeout
        pause = 0.05
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(pause * 1.3, 0.25)
        value = predicate()  # once more at the deadline: the last pause may have ended there
        if value:
            return value
        raise AssertionError(f"timed out after {timeout}s waiting for {what}")

    def wait_status(self, name: str, wanted: str, timeout: float = 20) -> dict[str, Any]:
        """The agent's `ls --json` entry once its status is `wanted`."""
        return self.wait_for(
            lambda: (a := self.ls()[name])["status"] == wanted and a, timeout, f"{name} {wanted}"
        )

    def pane_of(self, name: str) -> str:
        """The id of the agent's own pane (its window is named after it)."""
        return next(p["pane_id"] for p in self.panes() if p["window"] == name)

    def wait_screen(self, target: str, text: str, timeout: float = 15) -> str:
        return str(
            self.wait_for(
                lambda: text in self.screen(target) and self.screen(target),
                timeout,
                f"{text!r} on {target}",
            )
        )

    def start_service(self, hearing: str | None = None) -> dict[str, Any]:
        """`roost service start`, and its status once it runs; with `hearing` (an agent's name),
        also once its monitor has heard that agent's pane (its subscription is live: a change
        typed from now on is pushed). Waits long enough for a loaded machine."""
        self.roost("service", "start", check=False, timeout=60)
        found = self.wait_for(
            lambda: (
                (s := json.loads(self.roost("service", "status", "--json").stdout))["running"] and s
            ),
            60,
            "the service running",
        )
        if hearing is not None:
            import contextlib
            import sqlite3

            pane = self.pane_of(hearing)

            def heard() -> bool:
                with contextlib.closing(sqlite3.connect(self.home / "roost.db")) as db:
                    rows = db.execute("SELECT 1 FROM service_panes WHERE pane_id = ?", (pane,))
                    return rows.fetchone() is not None

            self.wait_for(heard, 60, f"the service hearing {hearing}")
        return dict(found)

    def type(self, target: str, text: str) -> None:
        """Type a line into a pane the way a user would."""
        self.tmux("send-keys", "-t", target, "-l", text)
        self.tmux("send-keys", "-t", target, "Enter")


def core_argv(start: dict[str, Any]) -> list[str]:
    """A claude start's argv without roost's `--settings FILE` and `--mcp-config FILE` (checked
    on their own elsewhere)."""
    argv = list(start["argv"])
    if "--mcp-config" in argv:
        i = argv.index("--mcp-config")
        assert argv[i + 1].endswith("mcp.json"), argv
        del argv[i : i + 2]
    if "--settings" in argv:
        i = argv.index("--settings")
        assert argv[i + 1].endswith("claude-settings.json"), argv
        del argv[i : i + 2]
    return argv


_ZYGOTES: list[Any] = []


def _zygote() -> Any:
    """This test process's warm roost (tests/zygote.py), started at the first call; None when
    ROOST_TEST_ZYGOTE=0 or it cannot start (every call is then a plain subprocess)."""
    if os.environ.get("ROOST_TEST_ZYGOTE") == "0":
        return None
    if not _ZYGOTES:
        import atexit

        from zygote import Zygote

        try:
            made = Zygote(tempfile.mkdtemp(prefix="rz"))
        except (OSError, RuntimeError):
            made = None
        _ZYGOTES.append(made)
        if made is not None:
            atexit.register(made.stop)
    return _ZYGOTES[0]


def files_held(root: Any) -> set[str]:
    """The paths a process (a psutil.Process) and its descendants hold open. A child that ends
    while they are read (codex runs its notify program at a turn's end) holds nothing."""
    import psutil

    held: set[str] = set()
    for proc in (root, *root.children(recursive=True)):
        try:
            held.update(f.path for f in proc.open_files())
        except psutil.NoSuchProcess:
            continue
    return held


def make_env(tmp_path: Path) -> Env:
    socket = f"rt-{uuid.uuid4().hex[:10]}"
    tmux_tmp = tmp_path / "tmux"
    tmux_tmp.mkdir(mode=0o700)
    user_home = tmp_path / "user"
    user_home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    # A user's terminal, not the CI runner's: CI=true would make gemini headless (and doctor
    # say so), so neither CI variable reaches roost or its agents.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TMUX", "ROOST_", "FAKE_AGENT", "CLAUDE", "CODEX"))
        and k not in ("CI", "GITHUB_ACTIONS")
    }
    # No roost service unless a test asks for one (@pytest.mark.service) or starts it: it costs
    # about 2 CPU-seconds a world (its MCP endpoint loads at the first agent's start), which
    # most tests do not exercise (docs/TESTING.md).
    env["ROOST_SERVICE_AUTOSTART"] = "0"
    env.update(
        ROOST_HOME=str(tmp_path / "roost"),
        ROOST_TMUX_SOCKET=socket,
        TMUX_TMPDIR=str(tmux_tmp),
        HOME=str(user_home),
        FAKE_AGENT_LOG=str(tmp_path / "starts.jsonl"),
        ROOST_CLAUDE_BIN=str(FAKE_BIN / "claude"),
        ROOST_CODEX_BIN=str(FAKE_BIN / "codex"),
        ROOST_GEMINI_BIN=str(FAKE_BIN / "gemini"),
        ROOST_AIDER_BIN=str(FAKE_BIN / "aider"),
        LANG="C.UTF-8",
        PYTHONDONTWRITEBYTECODE="1",
        FAKE_AGENT_PYTHON=sys.executable,
    )
    return Env(tmp=tmp_path, env=env, socket=socket)


def kill_tagged_processes(roost_home: str) -> None:
    """Belt and braces: agents a failing test left behind (tagged with this test's ROOST_HOME),
    until a look finds none: a dying agent's hook can start a `roost _notify` after one look,
    which wakes its parent on a new tmux server (tagged too), so one look is not enough."""
    import psutil

    for _ in range(10):
        killed = []
        for proc in psutil.process_iter():
            try:
                if proc.environ().get("ROOST_HOME") == roost_home:
                    proc.kill()
                    killed.append(proc)
            except (psutil.Error, OSError):
                continue
        if not killed:
            return
        psutil.wait_procs(killed, timeout=5)


@pytest.fixture
def world(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Env]:
    if shutil.which("tmux") is None:
        pytest.fail("tmux is required for the integration tests (.ci/run installs it)")
    # A short path: a unix socket path is limited to 107 bytes, and pytest's per-test
    # directories (long test names, xdist's popen-gwN) can push the tmux socket past it.
    tmp_path = tmp_path_factory.mktemp("w")
    env = make_env(tmp_path)
    if request.node.get_closest_marker("service"):  # as a user's roost: launches start it
        del env.env["ROOST_SERVICE_AUTOSTART"]
    yield env
    subprocess.run(["tmux", "-L", env.socket, "kill-server"], capture_output=True, env=env.env)
    kill_tagged_processes(env.env["ROOST_HOME"])
    socket = tmp_path / "tmux" / f"tmux-{os.getuid()}" / env.socket
    socket.unlink(missing_ok=True)


def _private_base() -> Path:
    """The test cache, or else a folder under the user's home: the first that no other user may
    write up to / (a checkout under /tmp is not)."""
    from roost.providers.gemini import private_path

    from cli_install import cache_root

    candidates = (cache_root(), Path.home() / ".cache" / "roost-tests")
    for base in candidates:
        base.mkdir(parents=True, exist_ok=True, mode=0o700)
        if private_path(base):
            return base
    pytest.fail(f"no folder that only its owner may write up to /: {candidates}")


@pytest.fixture
def private_home(world: Env) -> Iterator[Path]:
    """Moves `world`'s roost home to a folder that no other user may write up to / (pytest's
    are under /tmp): Gemini CLI reads roost's system settings file only there."""
    folder = Path(tempfile.mkdtemp(prefix="home-", dir=_private_base()))
    world.env["ROOST_HOME"] = str(folder / "roost")
    yield folder
    subprocess.run(
        ["tmux", "-L", world.socket, "kill-server"], capture_output=True, env=world.env, check=False
    )
    kill_tagged_processes(world.env["ROOST_HOME"])
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def fleet(world: Env) -> Iterator[Any]:
    """`world` as the local machine, with remote hosts a test adds (`fleet.add("h1")`): each a
    real sshd on 127.0.0.1 and a roost world of its own (tests/sshd.py)."""
    if not os.path.exists("/usr/sbin/sshd") or shutil.which("ssh") is None:
        pytest.fail("OpenSSH is required for the hosts tests (.ci/run installs openssh-server)")
    from sshd import make_fleet

    made = make_fleet(world)
    yield made
    made.close()


# ---- the operations on the fake tmux (tests/fake_app.py): one App per test ------------------
@pytest.fixture
def fake() -> Any:
    from fake_app import fake_tmux

    return fake_tmux()


@pytest.fixture
def clock() -> Any:
    from fake_app import manual_clock

    # The App's one clock, the store's stamps included: a fixed day far from today, that moves
    # only when told (or slept on).
    return manual_clock()


@pytest.fixture
def app(tmp_path: Path, fake: Any, clock: Any) -> Iterator[Any]:
    """An App on the fake tmux, the manual clock and a fake process table, whose `command`
    agents read idle at the fake agents' prompt (a module that needs other settings defines its
    own `app`)."""
    from fake_app import PROMPT, fake_app

    made = fake_app(
        tmp_path,
        fake,
        clock,
        {"status": {"patterns": {"command": {"idle": [PROMPT]}}}},
    )
    yield made
    made.close()


def pytest_configure(config: pytest.Config) -> None:
    """The fake CLIs import tests/fake_agent.py (tests/bin): its compiled code, written here
    once, spares each of a run's ~900 starts compiling 1,700 lines (their worlds write no
    bytecode). Atomic, so the workers may all write it."""
    import contextlib
    import py_compile

    with contextlib.suppress(OSError):  # a read-only checkout: each start compiles, as before
        py_compile.compile(str(TESTS / "fake_agent.py"), doraise=True)
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        rewrite_test_modules_once(config)


def rewrite_test_modules_once(config: pytest.Config, modules: list[Path] | None = None) -> None:
    """xdist's workers each collect every test module, and pytest rewrites a module's asserts
    at its import: 5 CPU-seconds a worker, the same work in each, all at the run's start. It
    caches what it rewrote beside the module, but not when PYTHONDONTWRITEBYTECODE is set (as on
    this machine and CI's), and on a fresh checkout the workers all start at once anyway. So
    the controller writes that cache first, the modules shared among a process a core, and the
    workers read it (docs/TESTING.md "The workers' start"). A pytest without these internals,
    or a read-only checkout, only loses the saving."""
    try:
        from _pytest.assertion.rewrite import (
            PYC_TAIL,
            _read_pyc,
            _rewrite_test,
            _write_pyc,
            assertstate_key,
            get_cache_dir,
        )

        state = config.stash[assertstate_key]  # absent with --assert=plain: nothing to write
    except (ImportError, KeyError):
        return
    # a module saved in the last seconds is left to the workers: pytest's check of the cache
    # is the source's whole-second mtime and its size, which an edit this second could match
    recent = time.time() - 2
    if modules is None:
        modules = [*sorted(TESTS.glob("test_*.py")), TESTS / "conftest.py"]
    modules = [m for m in modules if m.stat().st_mtime < recent]

    def rewrite(share: list[Path]) -> None:
        for module in share:
            try:
                pyc = get_cache_dir(module) / (module.name[:-3] + PYC_TAIL)
                if _read_pyc(module, pyc) is None:
                    pyc.parent.mkdir(parents=True, exist_ok=True)  # PYTHONPYCACHEPREFIX too
                    stat, code = _rewrite_test(module, config)
                    _write_pyc(state, code, stat, pyc)  # atomic: written aside, then renamed
            except Exception:  # noqa: BLE001
                pass  # the worker that imports it rewrites it, and says what is wrong

    share_count = max(1, min(os.cpu_count() or 1, 4))
    children = []
    for share in range(1, share_count):
        try:
            pid = os.fork()
        except OSError:  # no process to spare: this one does that share too
            rewrite(modules[share::share_count])
            continue
        if pid == 0:
            try:
                rewrite(modules[share::share_count])
            finally:
                os._exit(0)
        children.append(pid)
    rewrite(modules[0::share_count])
    for pid in children:
        os.waitpid(pid, 0)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that starts a real tmux server (through `world`) is marked `tmux`, whatever
    its module says; those and the real CLIs' tests are `slow`, so `pytest -m "not slow"` is
    the fast daily run of the pure, fake-tmux and store tests (README)."""
    for item in items:
        if "world" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.tmux)
        if any(m.name == "tmux" or m.name.startswith("real_") for m in item.iter_markers()):
            item.add_marker(pytest.mark.slow)
    items[:] = sorted(items, key=run_order)


def run_order(item: pytest.Item) -> int:
    """Longest first: the tests marked `minutes`, then the real CLIs' tests (a minute or more
    each), then the real-tmux ones, then the rest (milliseconds). xdist deals tests out in this
    order (worksteal: a slice per worker, the idle ones stealing from a slice's end), so no
    worker is left alone with a long test at the end while the others wait (a stable sort:
    within each group, the collection's order)."""
    marks = list(item.iter_markers())
    names = {m.name for m in marks}
    if "minutes" in names:
        # before all: xdist gives each worker a slice of this order and others steal from its
        # end, so a test of minutes started late runs alone while the other workers idle
        return -1
    # a test that asks for more than the default 120 s timeout says it is long (install.sh's
    # venv, the 20-round race): it goes with the real CLIs
    long = any(m.name == "timeout" and m.args and float(m.args[0]) > 120 for m in marks)
    if long or any(name.startswith("real_") for name in names):
        return 0
    return 1 if "tmux" in names else 2
