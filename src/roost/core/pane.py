"""A pane of roost's tmux server, as its one `list-panes -a` call reports it, and which pane is
each agent's. `roost ls` reads panes when it answers itself (its path without the service, which
loads dataclasses for the observation already); its warm path never imports this.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable


@dataclass(frozen=True, slots=True)
class Pane:
    """One row of the listing (tmux/format.py parses it). A dead pane is kept by tmux
    (remain-on-exit) with its exit status; `pid` is the process it ran."""

    session_id: str
    session_name: str
    window_id: str
    window_name: str
    window_index: int
    pane_id: str
    pid: int | None
    dead: bool
    dead_status: int | None
    agent_id: str  # @roost_id of the window, "" when untagged
    is_keeper: bool
    is_home: bool  # the session carries @roost_home
    activity: float | None = None  # epoch seconds of the window's last output
    title: str = ""  # the terminal title its program set: untrusted text, only read

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
