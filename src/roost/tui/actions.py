"""The TUI's keys, in one table: the bindings, the footer and the help screen come from it.

An action is either an operation of the source (run on a worker thread; its line, the CLI's
words, becomes a notification), on the selected agent or on the whole workspace, or one of the
app's own (a form, a screen, a toggle), which RoostApp implements as `action_<name>`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from roost.core import present
from roost.core.status import Status
from roost.tmux.client import DETACH_KEY
from roost.tui.source import Source


@dataclass(frozen=True, slots=True)
class Action:
    key: str  # Textual's name of the key
    name: str
    label: str  # in the footer
    help: str  # in the help screen
    footer: bool = False  # shown in the footer (the help screen shows every key)
    agent_op: Callable[[Source, str], str] | None = None  # on the selected agent (by name)
    workspace_op: Callable[[Source], str] | None = None

    @property
    def binding(self) -> str:
        """The binding's Textual action: an operation, or the app's own `action_<name>`."""
        if self.agent_op is not None or self.workspace_op is not None:
            return f"operate('{self.name}')"
        return self.name


ACTIONS = (
    Action(
        "enter",
        "attach",
        "attach",
        f"Attach (waking it first); {DETACH_KEY} detaches and brings you back here",
    ),
    Action(
        "n",
        "new",
        "new",
        "New agent (name, provider, cwd, tab, first prompt, arguments)",
        footer=True,
    ),
    Action(
        "k",
        "kill",
        "kill",
        "Kill: stop its processes, keep its home and record",
        footer=True,
        agent_op=lambda source, name: source.kill(name),
    ),
    Action(
        "w",
        "wake",
        "wake",
        "Wake: start it again, resuming its conversation",
        footer=True,
        agent_op=lambda source, name: source.wake(name),
    ),
    Action(
        "p",
        "park",
        "park",
        "Park: off screen, keeps running",
        agent_op=lambda source, name: source.park(name),
    ),
    Action(
        "b",
        "bury",
        "bury",
        "Bury: close its tile, stop it, keep it for revival",
        agent_op=lambda source, name: source.bury(name),
    ),
    Action(
        "u",
        "unbury",
        "unbury",
        "Unbury: back where it was",
        agent_op=lambda source, name: source.unbury(name),
    ),
    Action(
        "a",
        "place",
        "place",
        "Place a parked or buried agent on a tab (asks which; the current one by default)",
    ),
    Action("P", "pin", "pin", "Pin / unpin", agent_op=lambda source, name: source.toggle_pin(name)),
    Action("s", "send", "send", "Send a prompt", footer=True),
    Action(
        "A",
        "answer",
        "answer",
        "Answer a waiting agent's question: pick one of its choices",
        footer=True,
    ),
    Action(
        "r",
        "restore",
        "restore",
        "Restore: start the tiles' agents, hibernate the rest",
        # not in the footer (80 columns hold ten keys): the banner names r when a restore would
        # bring agents back, which is when it is needed
        workspace_op=lambda source: source.restore(),
    ),
    Action(
        "t",
        "tabs",
        "tabs",
        "Tab view: the current tab's tiles as live previews (Tab: the next tab)",
        footer=True,
    ),
    Action("E", "balance", "balance", "Balance the current tab: an even grid of its tiles"),
    Action("o", "open", "open", "Open the current tab in plain tmux, one pane per tile"),
    Action("B", "toggle_buried", "buried", "Show / hide buried agents"),
    Action(
        "D",
        "diff",
        "diff",
        "The agent's change against its base (c comments on a line, S sends the comments)",
    ),
    Action(
        "slash", "filter", "filter", "Filter by name, provider, status, cwd or tab", footer=True
    ),
    Action("question_mark", "help", "help", "This help, with every key", footer=True),
    Action("q", "quit", "quit", "Quit", footer=True),
)
BY_NAME = {a.name: a for a in ACTIONS}
KEY_NAMES = {"slash": "/", "question_mark": "?"}  # how the help screen writes them


def key_name(action: Action) -> str:
    return KEY_NAMES.get(action.key, action.key)


def help_lines() -> list[str]:
    return [f"  {key_name(a):>6}  {a.help}" for a in ACTIONS]


def refusal(
    action: str, name: str, placement: str | None, tab: str | None, status: str | None = None
) -> str | None:
    """Why a key does not apply to this agent, saying what to do instead; None when it does."""
    if action == "answer" and status != Status.WAITING:
        return f"{name} asks nothing: it is {status or 'unknown'}, not waiting for an answer"
    if action == "unbury" and placement == "detached":
        return f"{name} is parked, not buried: press a to place it on a tab"
    if action == "unbury" and placement != "buried":
        return f"{name} is {present.placement_words(placement, tab)}, not buried: nothing to unbury"
    if action == "place" and placement == "tile":
        return f"{name} is a tile of {tab} already: t shows its tab, p parks it"
    return None


EMPTY = "No agents yet.\n\nPress [b]n[/b] for a new agent,\nor run: roost spawn NAME --cwd DIR"
