"""The interface of roost's tmux layer, and its errors.

Two implementations: `client.Tmux` (a private tmux server, through subprocess) and `fake.FakeTmux`
(in memory, for fast tests). Operations take a `TmuxClient`, never a concrete one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from roost.core.errors import RoostError
from roost.core.pane import Pane


class TmuxError(RoostError):
    def __init__(self, message: str, stderr: str = "") -> None:
        super().__init__(message, code=5)
        self.stderr = stderr


class DuplicateSession(TmuxError):
    pass


class TmuxTimeout(TmuxError):
    """tmux did not answer within the limit (tmux.timeout). Never taken for "the pane or
    window is gone": the calls that shrug off a vanished target let this one through."""


class TmuxClient(Protocol):
    socket: str  # the server's -L name
    env: dict[str, str]  # the caller's environment, for the client a user attaches with; the
    # calls themselves run with a minimal one (client.server_environment): no secret in tmux
    calls: int  # tmux calls made, so benchmarks and tests can check the O(1) promises

    # ---- server ---------------------------------------------------------------------------
    def version(self) -> tuple[int, int]: ...

    def require_version(self) -> tuple[int, int]:
        """The version, or a TmuxError when it is too old for roost."""
        ...

    def socket_path(self) -> str: ...

    def list_panes(self) -> list[Pane]:
        """Every pane on the server in one call; [] when no server runs."""
        ...

    def list_pane_rows(self) -> list[dict[str, str]]:
        """list_panes as plain rows (format.FIELDS), as `roost ls` reads them."""
        ...

    # ---- homes and windows ------------------------------------------------------------------
    def new_home(
        self, name: str, cwd: str, keeper_argv: Sequence[str], env: Mapping[str, str]
    ) -> tuple[str, str]:
        """A tagged home session running the keeper: (session id, keeper pane id). Raises
        DuplicateSession when a session of that name exists."""
        ...

    def new_window(
        self,
        session_id: str,
        name: str,
        cwd: str,
        argv: Sequence[str],
        agent_id: str,
        redraw_keeper_of: str | None = None,
    ) -> tuple[str, str, int]:
        """An agent's window tagged @roost_id, @roost_state=running: (window, pane, pid)."""
        ...

    def respawn(
        self,
        pane_id: str,
        window_id: str,
        cwd: str,
        argv: Sequence[str],
        redraw_keeper_of: str | None = None,
    ) -> int:
        """Run argv in a dead pane, in place; the new pid."""
        ...

    def refresh_keeper(self, session_id: str) -> None: ...

    def set_window_option(self, window_id: str, key: str, value: str) -> None: ...

    def window_option(self, window_id: str, key: str) -> str:
        """A window's user option (e.g. @roost_state); "" when unset or the window is gone."""
        ...

    def kill_window(self, window_id: str) -> None: ...

    def kill_session(self, session_id: str) -> None: ...

    def select_window(self, window_id: str) -> None: ...

    # ---- screens and input ------------------------------------------------------------------
    def capture(self, pane_id: str, lines: int) -> str:
        """The last `lines` lines of a pane, trailing blank lines dropped."""
        ...

    def capture_many(self, pane_ids: list[str], marker: str) -> dict[str, str]:
        """Many panes' last lines in one call; a pane that died meanwhile is left out."""
        ...

    def paste(self, pane_id: str, text: str, buffer: str) -> None:
        """Bracketed paste of `text` into a pane; no Enter."""
        ...

    def send_enter(self, pane_id: str) -> None: ...

    def capture_colours(self, pane_id: str) -> str:
        """The pane's visible screen with its SGR colour escapes (roost web renders them)."""
        ...

    def press(self, pane_id: str, key: str) -> None:
        """Press one key of a dialog's answer (core/questions.py's keys, never a person's text):
        a named key (Up, Down, Enter: tmux.client.DIALOG_KEYS) or one character, literally."""
        ...

    # ---- clients and views ------------------------------------------------------------------
    def attach_argv(self, target: str) -> list[str]:
        """The argv of a client attaching to a session (an id, or =name)."""
        ...

    def switch_argv(self, target: str) -> list[str]:
        """The argv that moves the current client of this server to a session."""
        ...

    def view_client(self) -> TmuxClient:
        """The same tmux on the view server (`<socket>-view`), where `roost open` builds tabs:
        a server of its own, so no client is ever nested inside its own server."""
        ...

    def views(self) -> list[tuple[str, int]]:
        """This (view) server's sessions, each with how many clients look at it; [] when no
        server runs."""
        ...

    def clients(self) -> list[tuple[str, str]]:
        """(pane id, tty) of each client attached to this server that a person may look
        through: the active pane of the window it shows, and its terminal; control-mode
        clients (roost's own) left out; [] when no server runs."""
        ...

    def pane_ttys(self) -> dict[str, bool]:
        """Each pane's tty -> whether a client looks at its session; {} when no server runs."""
        ...

    def open_view(self, name: str, title: str, width: int, height: int, argv: Sequence[str]) -> str:
        """A fresh session `name` (replacing one of that name) whose one pane runs argv and whose
        status line starts with `title`. Returns the pane id."""
        ...

    def split_pane(
        self, pane_id: str, side_by_side: bool, percent: int, argv: Sequence[str]
    ) -> str:
        """Split a pane (side by side, or one over the other); the new pane takes `percent` of
        it and runs argv. Returns the new pane id."""
        ...

    def apply_user_config(self) -> list[str]:
        """Source the user's tmux.conf into the running server now (an edit, live): what is
        wrong with it (then nothing is sourced), [] when applied, absent, or no server runs
        (the next start sources it)."""
        ...
