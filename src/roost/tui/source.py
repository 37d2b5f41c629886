"""What the TUI needs from the world, as a protocol: a snapshot of every agent and the workspace,
an agent's screen and events, and the operations its keys run. `LiveSource` (tui/live.py) is
roost's own; `StaticSource` (tui/demo.py) serves canned data for demos, snapshots and tests.

Each operation returns the line the TUI shows, in the CLI's words (core/present.py), and raises
RoostError (or any error: the app shows it) when it fails.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from roost.core.events import Event
from roost.core.fleet import HostView
from roost.core.observation import Observation
from roost.core.questions import Question
from roost.core.workspace import Node
from roost.recall.operations import Hit
from roost.review.rules import Diff, Seen


@dataclass
class Snapshot:
    items: list[Observation] = field(default_factory=list)
    tab_tiles: list[tuple[str, list[str]]] = field(default_factory=list)  # agent names, in order
    pins: list[str] = field(default_factory=list)
    server_running: bool = True
    would_start: list[str] = field(default_factory=list)  # what a restore would bring back
    layouts: dict[str, Node | None] = field(default_factory=dict)  # tab -> tree of names
    alerts: list[str] = field(default_factory=list)  # alerts/operations.terminal_text's
    usage: dict[str, int] = field(default_factory=dict)  # agent id -> tokens used (issue 23)


class Source(Protocol):
    def snapshot(self) -> Snapshot: ...

    def stamp(self) -> object | None:
        """A cheap token that changes when anything the app shows may have (the roost service
        pushes); None: no such cue, refresh on the timer."""
        ...

    def preview(self, name: str, lines: int = 60, pane_id: str | None = None) -> str:
        """The agent's last lines (by the pane id the snapshot saw, when known)."""
        ...

    def events(self, name: str, limit: int = 8) -> list[Event]: ...

    def git_counts(self, name: str) -> dict[str, object] | None:
        """A worktree agent's dirty / ahead / behind counts, asked of git now (None: none)."""
        ...

    # ---- remote hosts (docs/HOSTS.md): read-only but for attaching ----------------------------
    def hosts(self) -> list[str]:
        """The remote hosts' names (`roost host ls`), in order; [] on one machine."""
        ...

    def host_view(self, host: str) -> HostView:
        """The host's agents, or why it did not answer (within its ssh time limits)."""
        ...

    def remote_attach_argv(self, host: str, name: str) -> list[str]:
        """`roost attach HOST:AGENT`'s ssh command line."""
        ...

    # ---- operations: each returns the CLI's line for it ----------------------------------------
    def spawn(
        self,
        name: str,
        provider: str,
        cwd: str | None,
        tab: str | None,
        args: tuple[str, ...] = (),
        prompt: str | None = None,
    ) -> str: ...

    def wake(self, name: str) -> str: ...

    def kill(self, name: str) -> str: ...

    def park(self, name: str) -> str: ...

    def bury(self, name: str) -> str: ...

    def unbury(self, name: str) -> str: ...

    def place(self, name: str, tab: str) -> str:
        """A parked or buried agent becomes a tile of `tab` (made if missing), woken."""
        ...

    def toggle_pin(self, name: str) -> str: ...

    def send(self, name: str, text: str) -> str: ...

    def question(self, name: str) -> Question:
        """The agent's open question, read off its screen now (ops/answer.asked); raises
        RoostError when it asks none or its choices cannot be read."""
        ...

    def answer(self, name: str, choice: str, fingerprint: str) -> str:
        """Pick `choice` (a choice's key) of the question whose fingerprint is `fingerprint`
        (refused when the agent now asks another); the line: present.answered."""
        ...

    def restore(self) -> str: ...

    def edit_layout(self, tab: str, name: str, edit: str) -> str:
        """One of the tab view's tile edits (ops.workspace.LAYOUT_EDITS) on agent `name`."""
        ...

    def balance_tab(self, tab: str) -> str:
        """Lay the tab out as an even grid, its tiles in order."""
        ...

    # ---- review (issue 38): the agent's change and comments on it -------------------------------
    def changes(self, name: str) -> tuple[Diff, list[Seen]]:
        """The agent's change (review/operations.diff) and its comments as they stand now."""
        ...

    def comment(self, name: str, path: str, line: int, text: str) -> str:
        """Keep a comment on a line of the change; the line: what `roost comment` says."""
        ...

    def send_review(self, name: str) -> str:
        """Send the open comments as one acknowledged message; what `roost review send` says."""
        ...

    def merge_hunks(self, name: str, picks: list[tuple[str, int, str]]) -> str:
        """`roost merge NAME --hunks` of these (file, number, fingerprint) hunks into the main
        checkout's branch (refused if one is not the hunk shown); what the CLI says."""
        ...

    # ---- recall (issue 39): every conversation searched -----------------------------------------
    def search(self, query: str) -> list[Hit]:
        """Recall's best hits for `query` over every agent's conversation."""
        ...

    def fork_at(self, ref: str, new: str) -> str:
        """`roost fork NAME@TURN NEW`; the line: what the CLI says."""
        ...

    # ---- handing the terminal to tmux: the command line to run ---------------------------------
    def attach_argv(self, name: str) -> list[str]:
        """The command that attaches to the agent (waking it first)."""
        ...

    def open_tab_argv(self, tab: str) -> list[str]: ...
