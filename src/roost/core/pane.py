"""A pane of roost's tmux server, as its one `list-panes -a` call reports it, and which pane is
each agent's. Import-light (no dataclasses): `roost ls` reads panes on its fast path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable


class Pane:
    """One row of the listing (tmux/format.py parses it). A dead pane is kept by tmux
    (remain-on-exit) with its exit status; `pid` is the process it ran."""

    __slots__ = (
        "activity",
        "agent_id",
        "dead",
        "dead_status",
        "is_home",
        "is_keeper",
        "pane_id",
        "pid",
        "session_id",
        "session_name",
        "title",
        "window_id",
        "window_index",
        "window_name",
    )

    def __init__(
        self,
        session_id: str,
        session_name: str,
        window_id: str,
        window_name: str,
        window_index: int,
        pane_id: str,
        pid: int | None,
        dead: bool,
        dead_status: int | None,
        agent_id: str,
        is_keeper: bool,
        is_home: bool,
        activity: float | None = None,
        title: str = "",
    ) -> None:
        self.session_id = session_id
        self.session_name = session_name
        self.window_id = window_id
        self.window_name = window_name
        self.window_index = window_index
        self.pane_id = pane_id
        self.pid = pid
        self.dead = dead
        self.dead_status = dead_status
        self.agent_id = agent_id  # @roost_id of the window, "" when untagged
        self.is_keeper = is_keeper
        self.is_home = is_home  # the session carries @roost_home
        self.activity = activity  # epoch seconds of the window's last output
        self.title = title  # the terminal title its program set: untrusted text, only read

    @property
    def live_pid(self) -> int | None:
        """The pid of the process running in the pane; None once it died."""
        return None if self.dead else self.pid

    def __repr__(self) -> str:
        state = f"dead ({self.dead_status})" if self.dead else f"pid {self.pid}"
        return (
            f"Pane({self.pane_id} in {self.session_name}:{self.window_name}, {state}, "
            f"agent {self.agent_id or '-'})"
        )


def agent_panes(panes: Iterable[Pane]) -> dict[str, Pane]:
    """Each agent's pane by roost id: the first live one, else the first dead one (a dead pane
    left behind elsewhere never hides the live one)."""
    found: dict[str, Pane] = {}
    for pane in panes:
        if not pane.agent_id:
            continue
        seen = found.get(pane.agent_id)
        if seen is None or (seen.dead and not pane.dead):
            found[pane.agent_id] = pane
    return found
