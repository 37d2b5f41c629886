"""An in-memory tmux server implementing protocol.TmuxClient, for fast tests of the operations
(as httpx ships MockTransport): sessions, windows and panes with pids, dead or alive with exit
statuses, the @roost_* tags, screens a test sets, input recorded in order, calls counted.

Its processes are make-believe. Their pids start above the largest pid Linux can give (2**22),
so no real process ever has one: stopping a fake agent's process tree through psutil finds
nothing to signal. A test makes a process exit with `exit(pane_id, status)`.

>>> tmux = FakeTmux()
>>> home, keeper = tmux.new_home("h", "/w", ["keeper"], {})
>>> window, pane, pid = tmux.new_window(home, "a", "/w", ["agent"], "id-a")
>>> tmux.set_screen(pane, "> ")
>>> tmux.exit(pane, 3)
>>> [(p.agent_id, p.dead, p.dead_status) for p in tmux.list_panes()]
[('', False, None), ('id-a', True, 3)]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from roost.core.delivery import paste_safe
from roost.core.pane import Pane
from roost.system.locate import tmux_client_env
from roost.tmux.client import MIN_VERSION, to_pane
from roost.tmux.format import CAPTURE_LINES, FIELDS
from roost.tmux.protocol import DuplicateSession, TmuxClient, TmuxError

PID_BASE = 2**22 + 1  # above Linux's PID_MAX_LIMIT: never a real process

Call = tuple[object, ...]  # ("paste", "%1", "text"): an operation and its main arguments


@dataclass
class FakePane:
    id: str
    window_id: str
    argv: list[str]
    cwd: str
    pid: int
    dead: bool = False
    dead_status: int | None = None
    screen: str = ""
    split: tuple[str, bool, int] | None = None  # (split pane, side by side, percent)
    title: str = ""  # what its program set as the terminal title (tests set it)


@dataclass
class FakeWindow:
    id: str
    session_id: str
    name: str
    index: int
    panes: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)  # @roost_id, @roost_state, ...
    activity: float | None = None  # tmux's window_activity (epoch seconds), set by tests


@dataclass
class FakeSession:
    id: str
    name: str
    env: dict[str, str] = field(default_factory=dict)
    windows: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)  # @roost_home, status-left


class FakeTmux:
    def __init__(
        self,
        socket: str = "roost",
        version: tuple[int, int] = (3, 3),
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.socket = socket
        self.env = tmux_client_env(environ or {})
        self.calls = 0
        self.history: list[Call] = []  # every operation, in order
        self.sessions: dict[str, FakeSession] = {}
        self.windows: dict[str, FakeWindow] = {}
        self.panes: dict[str, FakePane] = {}
        # How the make-believe programs behave: what a pane shows when its program starts
        # (new_window, respawn), and what Enter does to it.
        self.on_start: Callable[[FakePane], None] | None = None
        self.on_enter: Callable[[FakePane], None] | None = None
        self.view: FakeTmux | None = None  # the view server, once asked for
        self._version = version
        self._ids = {"$": 0, "@": 0, "%": 0}
        self._pids = PID_BASE

    # ---- what tests use -------------------------------------------------------------------
    def exit(self, pane_id: str, status: int = 0) -> None:
        """The pane's process ends with `status`; the pane stays, dead (remain-on-exit)."""
        pane = self._pane(pane_id)
        pane.dead, pane.dead_status = True, status

    def set_screen(self, pane_id: str, text: str) -> None:
        self._pane(pane_id).screen = text

    def pane_of(self, agent_id: str) -> FakePane:
        """The pane of the window tagged with this agent's id."""
        return next(
            self.panes[w.panes[0]]
            for w in self.windows.values()
            if w.options.get("@roost_id") == agent_id
        )

    def calls_of(self, *names: str) -> list[Call]:
        """The recorded operations with these names, in order."""
        return [c for c in self.history if c[0] in names]

    # ---- server ---------------------------------------------------------------------------
    def version(self) -> tuple[int, int]:
        self._record("version")
        return self._version

    def require_version(self) -> tuple[int, int]:
        if self._version < MIN_VERSION:
            raise TmuxError(f"roost needs tmux {MIN_VERSION[0]}.{MIN_VERSION[1]} or newer")
        return self._version

    def socket_path(self) -> str:
        return f"/nonexistent/fake-tmux/{self.socket}"

    def list_panes(self) -> list[Pane]:
        return [to_pane(r) for r in self.list_pane_rows()]

    def list_pane_rows(self) -> list[dict[str, str]]:
        self._record("list_panes")
        found = []
        for session in self.sessions.values():
            for window_id in session.windows:
                window = self.windows[window_id]
                for pane_id in window.panes:
                    found.append(self._row(session, window, self.panes[pane_id]))
        return found

    def _row(self, session: FakeSession, window: FakeWindow, pane: FakePane) -> dict[str, str]:
        def option(key: str) -> str:  # tmux looks a user option up window first, then session
            return window.options.get(key) or session.options.get(key, "")

        values = {
            "session_id": session.id,
            "session_name": session.name,
            "window_id": window.id,
            "window_name": window.name,
            "window_index": str(window.index),
            "pane_id": pane.id,
            "pane_pid": str(pane.pid),
            "pane_dead": "1" if pane.dead else "0",
            "pane_dead_status": "" if pane.dead_status is None else str(pane.dead_status),
            "pane_dead_signal": "",
            "roost_id": option("@roost_id"),
            "roost_keeper": option("@roost_keeper"),
            "roost_home": option("@roost_home"),
            "server_pid": str(PID_BASE - 1),
            "window_activity": "" if window.activity is None else str(int(window.activity)),
            "pane_title": pane.title,
        }
        return {key: values[key] for key in FIELDS}

    # ---- homes and windows ----------------------------------------------------------------
    def new_home(
        self, name: str, cwd: str, keeper_argv: Sequence[str], env: Mapping[str, str]
    ) -> tuple[str, str]:
        self._record("new_home", name)
        name = name.replace(".", "_").replace(":", "_")  # as tmux rewrites session names
        if any(s.name == name for s in self.sessions.values()):
            raise DuplicateSession(f"duplicate session: {name}", f"duplicate session: {name}")
        session = FakeSession(self._id("$"), name, env=dict(env), options={"@roost_home": "1"})
        self.sessions[session.id] = session
        window = self._add_window(session, "home", cwd, keeper_argv)
        window.options["@roost_keeper"] = "1"
        return session.id, window.panes[0]

    def new_window(
        self,
        session_id: str,
        name: str,
        cwd: str,
        argv: Sequence[str],
        agent_id: str,
        redraw_keeper_of: str | None = None,
    ) -> tuple[str, str, int]:
        self._record("new_window", session_id, name, agent_id)
        window = self._add_window(self._session(session_id), name, cwd, argv)
        window.options.update({"@roost_id": agent_id, "@roost_state": "running"})
        self._redraw(redraw_keeper_of)
        pane = self.panes[window.panes[0]]
        self._started(pane)
        return window.id, pane.id, pane.pid

    def respawn(
        self,
        pane_id: str,
        window_id: str,
        cwd: str,
        argv: Sequence[str],
        redraw_keeper_of: str | None = None,
    ) -> int:
        self._record("respawn", pane_id)
        pane = self._pane(pane_id)
        if not pane.dead:
            raise TmuxError(f"tmux respawn-pane failed: pane {pane_id} still active")
        pane.argv, pane.cwd, pane.pid = list(argv), cwd, self._pid()
        pane.dead, pane.dead_status, pane.screen = False, None, ""
        self._window(window_id).options["@roost_state"] = "running"
        self._redraw(redraw_keeper_of)
        self._started(pane)
        return pane.pid

    def refresh_keeper(self, session_id: str) -> None:
        self._record("refresh_keeper", session_id)

    def set_window_option(self, window_id: str, key: str, value: str) -> None:
        self._record("set_window_option", window_id, key, value)
        self._window(window_id).options[key] = value

    def window_option(self, window_id: str, key: str) -> str:
        self._record("window_option", window_id, key)
        window = self.windows.get(window_id)
        return window.options.get(key, "") if window is not None else ""

    def kill_window(self, window_id: str) -> None:
        self._record("kill_window", window_id)
        window = self._window(window_id)
        session = self.sessions[window.session_id]
        session.windows.remove(window_id)
        self._forget_window(window)
        if not session.windows:  # a session dies with its last window
            del self.sessions[session.id]

    def kill_session(self, session_id: str) -> None:
        self._record("kill_session", session_id)
        session = self._session(session_id)
        for window_id in session.windows:
            self._forget_window(self.windows[window_id])
        del self.sessions[session.id]

    def select_window(self, window_id: str) -> None:
        self._record("select_window", self._window(window_id).id)

    # ---- screens and input ----------------------------------------------------------------
    def capture(self, pane_id: str, lines: int) -> str:
        self._record("capture", pane_id)
        rows = self._pane(pane_id).screen.rstrip("\n").split("\n")
        while rows and not rows[-1].strip():
            rows.pop()
        return "\n".join(rows[-lines:]) + ("\n" if rows else "")

    def capture_many(self, pane_ids: list[str], marker: str) -> dict[str, str]:
        self._record("capture_many", *pane_ids)
        return {
            p: "\n".join(self.panes[p].screen.split("\n")[-CAPTURE_LINES:])
            for p in pane_ids
            if p in self.panes
        }

    def paste(self, pane_id: str, text: str, buffer: str) -> None:
        self._pane(pane_id)
        self.calls += 1  # load-buffer, then paste-buffer
        self._record("paste", pane_id, paste_safe(text))

    def send_enter(self, pane_id: str) -> None:
        self._record("send_enter", pane_id)
        pane = self._pane(pane_id)
        if self.on_enter is not None and not pane.dead:
            self.on_enter(pane)

    def capture_colours(self, pane_id: str) -> str:
        self._record("capture_colours", pane_id)
        return self._pane(pane_id).screen

    def press(self, pane_id: str, key: str) -> None:
        self._pane(pane_id)
        self._record("press", pane_id, key)

    # ---- clients and views ----------------------------------------------------------------
    def attach_argv(self, target: str) -> list[str]:
        return ["tmux", "-L", self.socket, "attach-session", "-t", target]

    def switch_argv(self, target: str) -> list[str]:
        return ["tmux", "-L", self.socket, "switch-client", "-t", target]

    def view_client(self) -> TmuxClient:
        if self.view is None:
            self.view = FakeTmux(f"{self.socket}-view", self._version, self.env)
        return self.view

    def views(self) -> list[tuple[str, int]]:
        self.calls += 1
        return [(s.name, 0) for s in self.sessions.values()]  # the fake has no clients

    def clients(self) -> list[tuple[str, str]]:
        self.calls += 1
        return []  # the fake has no clients

    def apply_user_config(self) -> list[str]:
        self.calls += 1
        return []  # the fake has no user settings

    def pane_ttys(self) -> dict[str, bool]:
        self.calls += 1
        return {}

    def open_view(self, name: str, title: str, width: int, height: int, argv: Sequence[str]) -> str:
        self.calls += 2  # kill-session, new-session, set-option
        self._record("open_view", name, title)
        for session in [s for s in self.sessions.values() if s.name == name]:
            for window_id in session.windows:
                self._forget_window(self.windows[window_id])
            del self.sessions[session.id]
        session = FakeSession(self._id("$"), name, options={"status-left": title})
        self.sessions[session.id] = session
        return self._add_window(session, name, "", argv).panes[0]

    def split_pane(
        self, pane_id: str, side_by_side: bool, percent: int, argv: Sequence[str]
    ) -> str:
        self._record("split_pane", pane_id, side_by_side, percent)
        window = self._window(self._pane(pane_id).window_id)
        pane = FakePane(
            self._id("%"),
            window.id,
            list(argv),
            "",
            self._pid(),
            split=(pane_id, side_by_side, percent),
        )
        self.panes[pane.id] = pane
        window.panes.append(pane.id)
        return pane.id

    # ---- inside ---------------------------------------------------------------------------
    def _record(self, *call: object) -> None:
        self.calls += 1
        self.history.append(call)

    def _redraw(self, session_id: str | None) -> None:
        if session_id:  # chained into the same tmux call as the operation
            self.history.append(("refresh_keeper", session_id))

    def _started(self, pane: FakePane) -> None:
        if self.on_start is not None:
            self.on_start(pane)

    def _id(self, kind: str) -> str:
        number = self._ids[kind]
        self._ids[kind] = number + 1
        return f"{kind}{number}"

    def _pid(self) -> int:
        self._pids += 1
        return self._pids

    def _add_window(
        self, session: FakeSession, name: str, cwd: str, argv: Sequence[str]
    ) -> FakeWindow:
        used = {self.windows[w].index for w in session.windows}
        window = FakeWindow(
            self._id("@"),
            session.id,
            name,
            index=next(i for i in range(len(used) + 1) if i not in used),
        )
        pane = FakePane(self._id("%"), window.id, list(argv), cwd, self._pid())
        window.panes.append(pane.id)
        self.panes[pane.id] = pane
        self.windows[window.id] = window
        session.windows.append(window.id)
        session.windows.sort(key=lambda w: self.windows[w].index)
        return window

    def _forget_window(self, window: FakeWindow) -> None:
        for pane_id in window.panes:
            del self.panes[pane_id]
        del self.windows[window.id]

    def _session(self, session_id: str) -> FakeSession:
        try:
            return self.sessions[session_id]
        except KeyError:
            raise TmuxError(f"can't find session: {session_id}") from None

    def _window(self, window_id: str) -> FakeWindow:
        try:
            return self.windows[window_id]
        except KeyError:
            raise TmuxError(f"can't find window: {window_id}") from None

    def _pane(self, pane_id: str) -> FakePane:
        try:
            return self.panes[pane_id]
        except KeyError:
            raise TmuxError(f"can't find pane: {pane_id}") from None
