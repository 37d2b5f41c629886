"""The one narrow layer that talks to tmux (protocol.TmuxClient; each call is one client run
by tmux/run.py).

Every call is an argv list (never a shell string), always on roost's own server (`-L <socket>`),
and targets objects by tmux's ids ($session, @window, %pane), never by a name prefix.

Three rules keep what the user gives from doing more than it says:
- tmux expands formats (`#(cmd)` runs cmd, `#{...}`) in `-c DIR`, session and window names and
  run-shell commands: every such string goes through `literal` (`#` as `##`); `-e` values,
  set-option and set-environment values are taken as they are (checked on tmux 3.3a).
- A tmux server keeps the environment of the client that started it, gives it to every pane and
  run-shell, and shows it in `show-environment -g`. Every call therefore runs with
  `server_environment` (what tmux and roost need, no API key); an agent gets its own environment
  through its launch spec, never through tmux.
- Every call has one limit (tmux.timeout, ROOST_TMUX_TIMEOUT), after which the client and
  anything it started are killed and the command fails with one line.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from typing import ClassVar

from roost.core import panewatch
from roost.core.delivery import paste_safe
from roost.core.errors import RoostError
from roost.core.pane import Pane
from roost.core.service import SESSION as SERVICE_SESSION
from roost.core.service import WINDOW as SERVICE_WINDOW
from roost.system.locate import file_problem, tmux_client_env
from roost.tmux import run
from roost.tmux import timeout as tmux_timeout
from roost.tmux.format import FORMAT as _PANE_FORMAT
from roost.tmux.format import NO_SERVER as _NO_SERVER
from roost.tmux.format import (
    SEP,
    capture_args,
    capture_batches,
    exit_status,
    rows,
    split_captures,
    to_pane,
)
from roost.tmux.protocol import DuplicateSession, TmuxError, TmuxTimeout

__all__ = [
    "MIN_VERSION",
    "DuplicateSession",
    "Tmux",
    "TmuxError",
    "TmuxTimeout",
    "literal",
    "parse_version",
    "server_environment",
    "to_pane",
]

MIN_VERSION = (3, 2)  # extended-keys, attach -f, source-file -q: all there since 3.2
# The named keys a dialog is answered with (core/questions.py); any other key is typed literally.
DIALOG_KEYS = ("Up", "Down", "Enter")
HISTORY_LIMIT = 10_000  # lines a pane keeps: `roost capture --lines` accepts as many
HOME_SIZE = ("200", "50")  # a window nobody looks at: wide enough for an agent CLI to draw
PREFIX = "C-a"  # roost's prefix: not the C-b of the user's own tmux around it
DETACH_KEY = "C-q"  # detaches roost's client, prefix or not, nested or not (as claude-squad)
USER_CONFIG = "tmux.conf"  # in $ROOST_HOME: the user's own settings, sourced after roost's
DYING_SERVER = "server exited unexpectedly"  # what a client of a server on its way out says
DYING_SERVER_PAUSES = (0.1, 0.3, 1.0, 2.0, 4.0)  # seconds before each new try of a new-session

# Roost's server, fitted to agent CLIs (README, "roost's tmux server"). Options, not formats
# from a user: set-option values are taken as they are.
SERVER_OPTIONS: tuple[tuple[str, ...], ...] = (
    ("-s", "escape-time", "10"),  # Esc reaches the agent at once (tmux's default: 500 ms)
    ("-s", "focus-events", "on"),  # Claude Code asks for focus events
    ("-s", "extended-keys", "on"),  # Shift+Enter and friends reach CLIs that ask for them
    ("-g", "history-limit", str(HISTORY_LIMIT)),
    ("-g", "default-size", "x".join(HOME_SIZE)),
    ("-g", "prefix", PREFIX),
    # the agent on screen, its full name (up to MAX_NAME) and state; the window list short
    ("-g", "status-left", "[roost] #{window_name}#{?@roost_state, (#{@roost_state}),}  "),
    ("-g", "status-left-length", "100"),
    ("-gw", "window-status-format", "#I:#{=/16/~:window_name}"),
    ("-gw", "window-status-current-format", "#I:#{=/16/~:window_name}*"),
    ("-g", "status-right", f"{DETACH_KEY} detach | prefix {PREFIX} "),
    ("-g", "status-right-length", "40"),
)
KEYS: tuple[tuple[str, ...], ...] = (
    ("-n", DETACH_KEY, "detach-client"),  # root table: one key, whatever tmux is around it
    (PREFIX, "send-prefix"),  # C-a C-a: the agent gets C-a (start of line)
)

# What a tmux server started by roost may hold (docs/DECISIONS.md, "The tmux server's
# environment"): what tmux, the keeper's shell and `python -m roost` need, never a secret.
SERVER_VARIABLES = frozenset(
    (
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "TERM",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TMPDIR",
        "TMUX_TMPDIR",
        "PYTHONPATH",
        "ROOST_HOME",
        "ROOST_TMUX_SOCKET",
        tmux_timeout.ENV,
    )
)


def server_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The part of `environ` a tmux client may carry into a server it starts.

    >>> server_environment({"PATH": "/bin", "LC_ALL": "C.UTF-8", "ANTHROPIC_API_KEY": "sk"})
    {'PATH': '/bin', 'LC_ALL': 'C.UTF-8'}
    """
    return {k: v for k, v in environ.items() if k in SERVER_VARIABLES or k.startswith("LC_")}


def literal(text: str) -> str:
    """`text` for an argument tmux expands as a format, so that it reaches tmux as written.

    >>> literal("/w/#(touch x)/#{pane_id}")
    '/w/##(touch x)/##{pane_id}'
    """
    return text.replace("#", "##")


def _command_string(text: str) -> str:
    """`text` inside a double-quoted string of a tmux command (a hook's run-shell): tmux's parser
    reads backslashes, double quotes and `$` there, and run-shell expands formats."""
    for char in ("\\", '"', "$"):
        text = text.replace(char, "\\" + char)
    return literal(text)


def parse_version(text: str) -> tuple[int, int]:
    """'tmux 3.3a' -> (3, 3); 'tmux next-3.4' -> (3, 4)."""
    m = re.search(r"(\d+)\.(\d+)", text)
    if not m:
        raise TmuxError(f"cannot read the tmux version from {text.strip()!r}")
    return int(m.group(1)), int(m.group(2))


_warned: set[str] = set()


def warn(text: str) -> None:
    """A problem of the user's own tmux.conf: said once per process on stderr, never fatal
    (the MCP server speaks on stdout; the TUI captures stderr)."""
    if text not in _warned:
        _warned.add(text)
        sys.stderr.write(f"roost: warning: {text}\n")


def reap_missed(server_pid: str) -> None:
    """Nudge the tmux server to reap its children. tmux below 3.5 built with libutempter (as
    Debian's 3.3a is) loses the SIGCHLD of a child that exits while a pane is being made or
    destroyed (utempter's own handler is in then: tmux issue #311): that pane's process stays an
    unreaped zombie with no exit status, and its pane-died hook (exit log, restart policy,
    notices) never runs. Any SIGCHLD makes the server reap every child, so one follows every
    start of an agent's process; `list_panes` nudges when it finds such a pane. Quiet when
    the server is gone (or no pid was read): nothing is left to reap."""
    try:
        os.kill(int(server_pid), signal.SIGCHLD)
    except (OSError, ValueError):
        pass


class Tmux:
    """`binary` is the tmux to run (config.toml's `[tmux] bin`, else "tmux" on PATH);
    `supervisor` a shell command tmux runs with a pane id when a pane dies, with
    `supervisor_env` set in the server's global environment (run-shell's environment)."""

    def __init__(
        self,
        socket: str,
        binary: str = "tmux",
        config: str = "/dev/null",
        environ: Mapping[str, str] | None = None,
        supervisor: str = "",
        supervisor_env: Mapping[str, str] | None = None,
        user_config: str | None = None,
    ) -> None:
        self.socket = socket
        self.user_config = user_config  # sourced after roost's settings (USER_CONFIG)
        self.binary = binary
        self.config = config
        self.env = tmux_client_env(os.environ if environ is None else environ)  # attach's
        self.server_env = server_environment(self.env)  # every call's: it may start the server
        try:
            self.timeout = tmux_timeout.seconds(self.env)
        except ValueError as exc:
            raise RoostError(str(exc), code=2) from None
        self.supervisor = supervisor
        self.supervisor_env = dict(supervisor_env or {})
        self.calls = 0  # counted so benchmarks and tests can check the O(1) promises

    def argv(self, *args: str) -> list[str]:
        return [self.binary, "-u", "-L", self.socket, "-f", self.config, *args]

    def run(self, *args: str, input: str | None = None) -> str:
        self.calls += 1
        code, out, err = self._making(args, input)
        if code != 0:
            err = err.strip()
            if err.startswith("duplicate session"):
                raise DuplicateSession(err, err)
            raise TmuxError(f"tmux {args[0]} failed: {err or 'exit ' + str(code)}", err)
        return out

    def _making(self, args: Sequence[str], input: str | None = None) -> tuple[int, str, str]:
        """`_call`, and for a command list with a new-session (one that may start the server)
        again after a pause while the server it met was on its way out (a kill-server just now,
        its last session closing): such a server closes new connections before reading them,
        so nothing was done, and once it is gone the same list starts a new server."""
        code, out, err = self._call(self.argv(*args), args[0], input)
        commands = [a for i, a in enumerate(args) if i == 0 or args[i - 1] == ";"]
        for pause in DYING_SERVER_PAUSES if "new-session" in commands else ():
            if code == 0 or DYING_SERVER not in err:
                break
            time.sleep(pause)
            code, out, err = self._call(self.argv(*args), args[0], input)
        return code, out, err

    def _call(self, argv: list[str], what: str, input: str | None = None) -> tuple[int, str, str]:
        """Run one tmux client within the time limit (tmux/run.py): (exit code, stdout,
        stderr)."""
        try:
            code, out, err = run.call(
                argv, self.server_env, self.timeout, None if input is None else input.encode()
            )
        except FileNotFoundError as exc:
            raise TmuxError(f"tmux is not installed (looked for {self.binary!r} on PATH)") from exc
        except OSError as exc:
            raise TmuxError(f"cannot run tmux {self.binary!r}: {exc.strerror}") from exc
        except run.Silent:
            raise TmuxTimeout(
                f"tmux did not answer within {self.timeout:g} s ({what} on "
                f"server {self.socket}); {tmux_timeout.ENV} sets the limit"
            ) from None
        return code, out.decode(errors="replace"), err.decode(errors="replace")

    @staticmethod
    def is_no_server(err: TmuxError) -> bool:
        return any(s in err.stderr for s in _NO_SERVER)

    # ---- server -------------------------------------------------------------------------
    def version(self) -> tuple[int, int]:
        self.calls += 1
        return parse_version(self._call([self.binary, "-V"], "-V")[1])

    _checked: ClassVar[dict[str, tuple[int, int]]] = {}  # per binary, once per process

    def require_version(self) -> tuple[int, int]:
        v = Tmux._checked.get(self.binary) or self.version()
        if v < MIN_VERSION:
            raise TmuxError(
                f"roost needs tmux {MIN_VERSION[0]}.{MIN_VERSION[1]} or newer; found {v[0]}.{v[1]}"
            )
        Tmux._checked[self.binary] = v
        return v

    def socket_path(self) -> str:
        tmpdir = self.env.get("TMUX_TMPDIR") or "/tmp"
        return os.path.join(tmpdir, f"tmux-{os.getuid()}", self.socket)

    def list_panes(self) -> list[Pane]:
        """Every pane on roost's server in one call; [] when no server runs."""
        return [to_pane(r) for r in self.list_pane_rows()]

    def list_pane_rows(self) -> list[dict[str, str]]:
        """list_panes as plain rows (panefmt.FIELDS), as `roost ls` reads them."""
        try:
            found = rows(self.run("list-panes", "-a", "-F", _PANE_FORMAT))
        except TmuxError as exc:
            if self.is_no_server(exc):
                return []
            raise
        if any(r["pane_dead"] == "1" and exit_status(r) is None for r in found):
            # tmux 3.3a now and then misses a SIGCHLD: the pane's pty is closed but its process
            # is an unreaped zombie, so no exit status and no pane-died hook. Any SIGCHLD makes
            # the server reap every child; nudge it and look again.
            try:
                reap_missed(found[0]["server_pid"])
                time.sleep(0.02)
                found = rows(self.run("list-panes", "-a", "-F", _PANE_FORMAT))
            except TmuxTimeout:
                raise
            except TmuxError:
                pass  # the server gone meanwhile: what was listed stands
        return found

    # ---- homes and windows ----------------------------------------------------------------
    def new_home(
        self, name: str, cwd: str, keeper_argv: Sequence[str], env: Mapping[str, str]
    ) -> tuple[str, str]:
        """A detached session `name` whose window 0 ("home") runs the keeper; tagged in the same
        command list, so nobody sees it untagged. Returns (session id, keeper pane id)."""
        env_args = [a for k, v in env.items() for a in ("-e", f"{k}={v}")]  # -e: never expanded
        out = self._create(
            *self._server_setup(),
            "new-session",
            "-d",
            "-s",
            literal(name),
            "-n",
            "home",
            "-x",
            HOME_SIZE[0],
            "-y",
            HOME_SIZE[1],
            "-c",
            literal(cwd),
            *env_args,
            "-P",
            "-F",
            f"#{{session_id}}{SEP}#{{pane_id}}{SEP}#{{pid}}",
            *keeper_argv,
            ";",
            *self._own_size(),
            "set-option",
            "@roost_home",
            "1",
            ";",
            "set-option",
            "-w",
            "@roost_keeper",
            "1",
            *self._user_setup(),
        )
        session_id, keeper_pane, server_pid = out.strip().split(SEP)
        reap_missed(server_pid)
        return session_id, keeper_pane

    def _create(self, *args: str) -> str:
        """Run a creating command list; its output (-P) counts even when only the user's own
        tmux.conf, sourced last, failed: what the user's file says is theirs to fix, and the
        agent must not be half made because of it."""
        self.calls += 1
        code, out, err = self._making(args)
        # -P prints the new object's ids first; source-file, last, adds its complaints after.
        made, _, rest = out.partition("\n")
        sourced = "source-file" in args  # roost sources nothing else
        if code != 0 and not (made.strip() and sourced):
            err = err.strip()
            if err.startswith("duplicate session"):
                raise DuplicateSession(err, err)
            raise TmuxError(f"tmux {args[0]} failed: {err or 'exit ' + str(code)}", err)
        if sourced:
            for line in (rest + "\n" + err).splitlines():
                if line.strip():
                    warn(
                        f"tmux rejected your own settings: {line.strip()} (roost's own apply; "
                        "the agent starts)"
                    )
        return made

    @staticmethod
    def _own_size() -> list[str]:
        """The new window at HOME_SIZE, not at the size of some client elsewhere on the server
        (tmux 3.3 gives a new window the size of the "best" client, say a 10-column tile of
        `roost open`); unsetting window-size again lets it follow whoever attaches to it."""
        return [
            "resize-window",
            "-x",
            HOME_SIZE[0],
            "-y",
            HOME_SIZE[1],
            ";",
            "set-option",
            "-uw",
            "window-size",
            ";",
        ]

    def user_config_problems(self) -> list[str]:
        """What is wrong with the user's tmux.conf, as roost would source it: not a small
        regular file, or the lines tmux rejects (parsed only, `source-file -n`, on a throwaway
        server that exits at once: roost's own is never touched). [] when fine or absent."""
        path = self.user_config
        try:
            info = os.stat(path) if path else None
        except OSError:
            info = None
        if path is None or info is None:
            return []
        problem = file_problem(info.st_mode, info.st_size)
        if problem:
            return [f"{path} {problem}; not sourced (roost's own settings apply)"]
        self.calls += 1
        argv = [
            self.binary,
            "-u",
            "-L",
            f"{self.socket}-conf-check",
            "-f",
            "/dev/null",
            "start-server",
            ";",
            "source-file",
            "-n",
            path,
        ]
        code, out, err = self._call(argv, "source-file -n")
        return (
            [line.strip() for line in (out + "\n" + err).splitlines() if line.strip()]
            if code != 0
            else []
        )

    def apply_user_config(self) -> list[str]:
        problems = self.user_config_problems()
        if problems or not self.user_config or not os.path.exists(self.user_config):
            return problems
        try:
            self.run("source-file", "-q", self.user_config)
        except TmuxError as exc:
            if not any(gone in exc.stderr for gone in _NO_SERVER):
                return [str(exc)]
        return []

    def _user_setup(self) -> list[str]:
        """The user's own settings for roost's server, after roost's (a path, never text of
        the file put into a command; -q: no file, nothing to do)."""
        path = self.user_config
        try:
            info = os.stat(path) if path else None
        except OSError:
            info = None  # none, or one roost cannot see: nothing to source
        if path is None or info is None:
            return []
        problem = file_problem(info.st_mode, info.st_size)
        if problem:  # tmux would block on a FIFO, or read /dev/zero without end
            warn(f"{path} {problem}; not sourced (roost's own settings apply)")
            return []
        return [";", "source-file", "-q", path]

    def _server_setup(self) -> list[str]:
        """Server-wide settings, repeated in each creating command (cheap, and a server started
        by anyone gets them): roost's options and keys (SERVER_OPTIONS, KEYS); dead panes stay
        with their exit status; a pane's death redraws its home's keeper (window 0 of the same
        session) and runs `roost _supervise` in the background, which logs the exit and applies
        the restart policy."""
        setup = [
            "set-option",
            "-g",
            "base-index",
            "0",
            ";",
            "set-option",
            "-gw",
            "remain-on-exit",
            "on",
            ";",
        ]
        for option in SERVER_OPTIONS:
            setup += ["set-option", *option, ";"]
        for binding in KEYS:
            setup += ["bind-key", *binding, ";"]
        for key, value in self.supervisor_env.items():  # run-shell's environment
            setup += ["set-environment", "-g", key, value, ";"]
        hook = "respawn-pane -k -t :0.0"
        if self.supervisor:
            # Both silent and always 0: tmux shows a run-shell's output, and "returned N" for a
            # failure, in view-mode in the current pane, which, with no client attached, is an
            # agent's: its input would then go to the view, not to the agent.
            quiet = " >/dev/null 2>&1 || true"
            # tmux runs a hook's job in the session's folder, the first agent's (its worktree:
            # a process working there keeps `rm` from removing it): out of it first
            out = "cd / && "
            hook += f' ; run-shell -b "{out}{_command_string(self._poke() + quiet)}"'
            supervise = f"{out}{_command_string(self.supervisor)} #{{hook_pane}}"
            hook += f' ; run-shell -b "{supervise}{_command_string(quiet)}"'
        return [*setup, "set-hook", "-g", "pane-died", hook, ";"]

    def _poke(self) -> str:
        """The shell command that tells the roost service's control client that a pane died,
        at once (core/panewatch.py's POKE): its window renamed to its own name. Quiet when no
        service runs. Only roost's own constants and paths: no user text."""
        rename = self.argv("rename-window", "-t", f"={SERVICE_SESSION}:{SERVICE_WINDOW}")
        return shlex.join([*rename, SERVICE_WINDOW])

    def new_window(
        self,
        session_id: str,
        name: str,
        cwd: str,
        argv: Sequence[str],
        agent_id: str,
        redraw_keeper_of: str | None = None,
    ) -> tuple[str, str, int]:
        """The agent's window in its home, tagged in the same command list (and the home's
        keeper redrawn). Returns (window id, pane id, pid). remain-on-exit keeps a dead pane
        with its exit status."""
        out = self._create(
            *self._server_setup(),
            "new-window",
            "-t",
            f"{session_id}:",
            "-n",
            literal(name),
            "-c",
            literal(cwd),
            "-P",
            "-F",
            f"#{{window_id}}{SEP}#{{pane_id}}{SEP}#{{pane_pid}}{SEP}#{{pid}}",
            *argv,
            ";",
            *self._own_size(),
            "set-option",
            "-w",
            "@roost_id",
            agent_id,
            ";",
            "set-option",
            "-w",
            "@roost_state",
            "running",
            *self._redraw(redraw_keeper_of),
            *self._user_setup(),
        )
        window_id, pane_id, pid, server_pid = out.strip().split(SEP)
        reap_missed(server_pid)
        return window_id, pane_id, int(pid)

    def respawn(
        self,
        pane_id: str,
        window_id: str,
        cwd: str,
        argv: Sequence[str],
        redraw_keeper_of: str | None = None,
    ) -> int:
        """Start `argv` in a dead pane (tmux refuses a live one). Returns the new pid."""
        out = self.run(
            "respawn-pane",
            "-t",
            pane_id,
            "-c",
            literal(cwd),
            *argv,
            ";",
            "set-option",
            "-w",
            "-t",
            window_id,
            "@roost_state",
            "running",
            ";",
            *panewatch.BUMP,  # news for the service's monitor: a respawn runs no hook
            ";",
            "display-message",
            "-p",
            "-t",
            pane_id,
            f"#{{pane_pid}}{SEP}#{{pid}}",
            *self._redraw(redraw_keeper_of),
        )
        pid, _, server_pid = out.strip().splitlines()[-1].partition(SEP)
        reap_missed(server_pid)
        return int(pid)

    @staticmethod
    def _redraw(session_id: str | None) -> list[str]:
        return [";", "respawn-pane", "-k", "-t", f"{session_id}:0.0"] if session_id else []

    def refresh_keeper(self, session_id: str) -> None:
        """Redraw a home's keeper (window 0): it shows its agents' state."""
        try:
            out = self.run(
                "respawn-pane", "-k", "-t", f"{session_id}:0.0", ";", "display-message", "-p",
                "#{pid}",
            )  # fmt: skip
            reap_missed(out.strip())  # a keeper killed and started: utempter twice
        except TmuxTimeout:
            raise
        except TmuxError:
            pass  # a keeper that is gone is reported by doctor; nothing to redraw

    def set_window_option(self, window_id: str, key: str, value: str) -> None:
        self.run("set-option", "-w", "-t", window_id, key, value)

    def window_option(self, window_id: str, key: str) -> str:
        """A window's user option (e.g. @roost_state); "" when unset or the window is gone."""
        try:
            return self.run("display-message", "-p", "-t", window_id, f"#{{{key}}}").strip()
        except TmuxTimeout:
            raise
        except TmuxError:
            return ""

    def kill_window(self, window_id: str) -> None:
        self._killing("kill-window", window_id)

    def kill_session(self, session_id: str) -> None:
        self._killing("kill-session", session_id)

    def _killing(self, command: str, target: str) -> None:
        """A pane destroyed runs utempter too: another pane's exit meanwhile is reaped after
        (reap_missed). The server's pid is asked first: killing its last session ends it."""
        out = self.run("display-message", "-p", "#{pid}", ";", command, "-t", target)
        reap_missed(out.strip().split("\n")[0])

    def select_window(self, window_id: str) -> None:
        """The window a person is about to be shown; its session quiet for them (no bell for
        its activity: core/panewatch.py's QUIET, which tmux's client-attached hook sets too,
        but only once attached)."""
        verb, option, value = panewatch.QUIET
        self.run("select-window", "-t", window_id, ";", verb, "-t", window_id, option, value)

    def capture(self, pane_id: str, lines: int) -> str:
        """The last `lines` lines of a pane (history included), bounded by the caller."""
        out = self.run("capture-pane", "-p", "-J", "-t", pane_id, "-S", f"-{lines}")
        rows = out.rstrip("\n").split("\n")
        while rows and not rows[-1].strip():
            rows.pop()
        return "\n".join(rows[-lines:]) + ("\n" if rows else "")

    def capture_many(self, pane_ids: list[str], marker: str) -> dict[str, str]:
        """Many panes' last lines in one tmux call (panefmt.capture_args). A pane gone since
        the listing stops tmux's command list there (rc 1, the screens before it printed):
        it is left out and the panes after it are asked again, so one closed window never
        costs the other agents their screens."""
        found: dict[str, str] = {}
        left = list(pane_ids)
        while left:
            batch = capture_batches(left, marker)[0]
            self.calls += 1
            code, out, err = self._call(self.argv(*capture_args(batch, marker)), "capture-pane")
            got = split_captures(out, marker)
            found.update({p: got[p] for p in batch if p in got})
            if code == 0:
                left = left[len(batch) :]
            elif any(s in err for s in _NO_SERVER):
                break
            else:  # the first pane of the batch without its screen is the one that is gone
                gone = next((i for i, p in enumerate(batch) if p not in got), len(batch) - 1)
                left = left[gone + 1 :]
        return found

    def paste(self, pane_id: str, text: str, buffer: str) -> None:
        """Bracketed paste of `text` (any length, newlines kept) into a pane; no Enter. Every
        paste goes through here, so every one is made safe here: text, never keys."""
        self.run("load-buffer", "-b", buffer, "-", input=paste_safe(text))
        self.run("paste-buffer", "-p", "-d", "-b", buffer, "-t", pane_id)

    def send_enter(self, pane_id: str) -> None:
        self.run("send-keys", "-t", pane_id, "Enter")

    def capture_colours(self, pane_id: str) -> str:
        return self.run("capture-pane", "-p", "-e", "-t", pane_id)

    def press(self, pane_id: str, key: str) -> None:
        if key in DIALOG_KEYS:  # a key's name (Up, Down, Enter), never a user's text
            self.run("send-keys", "-t", pane_id, key)
        else:
            self.run("send-keys", "-t", pane_id, "-l", key)

    # ---- clients and views ------------------------------------------------------------------
    def attach_argv(self, target: str) -> list[str]:
        return self.argv("attach-session", "-t", target)

    def switch_argv(self, target: str) -> list[str]:
        return self.argv("switch-client", "-t", target)

    def view_client(self) -> Tmux:
        return Tmux(f"{self.socket}-view", binary=self.binary, config=self.config, environ=self.env)

    def views(self) -> list[tuple[str, int]]:
        try:
            out = self.run("list-sessions", "-F", f"#{{session_attached}}{SEP}#{{session_name}}")
        except TmuxError as exc:
            if self.is_no_server(exc):
                return []
            raise
        found = [line.split(SEP, 1) for line in out.splitlines() if SEP in line]
        return [(name, int(attached or 0)) for attached, name in found]

    def clients(self) -> list[tuple[str, str]]:
        rows = self._rows_or_none(
            "list-clients", f"#{{client_control_mode}}{SEP}#{{pane_id}}{SEP}#{{client_tty}}"
        )
        return [(pane, tty) for control, pane, tty in rows if control != "1"]

    def pane_ttys(self) -> dict[str, bool]:
        rows = self._rows_or_none(
            "list-panes", f"#{{pane_tty}}{SEP}#{{session_attached}}{SEP}", "-a"
        )
        return {tty: attached not in ("", "0") for tty, attached, _ in rows}

    def _rows_or_none(self, command: str, fmt: str, *more: str) -> list[list[str]]:
        """A listing's rows of three fields; none when no server runs."""
        try:
            out = self.run(command, *more, "-F", fmt)
        except TmuxError as exc:
            if self.is_no_server(exc):
                return []
            raise
        rows = [line.split(SEP, 2) for line in out.splitlines()]
        return [row for row in rows if len(row) == 3]

    def open_view(self, name: str, title: str, width: int, height: int, argv: Sequence[str]) -> str:
        try:
            self.run("kill-session", "-t", f"={name}")
        except TmuxTimeout:
            raise
        except TmuxError:
            pass  # no such view yet
        pane = self.run(
            "new-session",
            "-d",
            "-s",
            literal(name),
            "-x",
            str(width),
            "-y",
            str(height),
            "-P",
            "-F",
            "#{pane_id}",
            *argv,
        ).strip()
        # status-left is a format, strftime included, expanded at every redraw
        self.run("set-option", "-t", pane, "status-left", literal(title).replace("%", "%%"))
        return pane

    def split_pane(
        self, pane_id: str, side_by_side: bool, percent: int, argv: Sequence[str]
    ) -> str:
        return self.run(
            "split-window",
            "-h" if side_by_side else "-v",
            "-t",
            pane_id,
            "-l",
            f"{percent}%",
            "-P",
            "-F",
            "#{pane_id}",
            *argv,
        ).strip()
