"""The TUI's search mode (issue 39: `F`): a query over every agent's recorded conversations
(recall's index), its hits in Textual's OptionList; Enter goes to the hit's agent in the list,
`f` forks the agent at that turn (`roost fork NAME@TURN NEW`), Esc goes back.

The source is asked on a worker thread, never on the event loop."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from roost.recall.operations import MARKS, Hit


def hit_text(h: Hit) -> Text:
    """One hit on two lines: its agent@turn, who spoke and when; then its words, the match bold."""
    head = Text(f"{h.ref}  ", style="bold")
    head.append(f"{h.role} · {h.provider} · {h.when}", style="dim")
    words = Text("\n  ")
    rest = h.snippet
    while MARKS[0] in rest and MARKS[1] in rest.split(MARKS[0], 1)[1]:
        before, rest = rest.split(MARKS[0], 1)
        found, rest = rest.split(MARKS[1], 1)
        words.append(before)
        words.append(found, style="bold yellow")
    words.append(rest)
    return head + words


class SearchScreen(Screen[str | None]):
    """Dismissed with the name of the agent to go to (Enter), or None (Esc)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "back"),
        Binding("f", "fork", "fork at this turn"),
    ]

    def __init__(
        self,
        find: Callable[[str], Sequence[Hit]],
        fork: Callable[[str], None],
    ) -> None:
        super().__init__()
        self._find, self._fork = find, fork
        self.hits: list[Hit] = []

    def compose(self) -> ComposeResult:
        yield Static(
            'Search every conversation: words, "a phrase", prefix*, a OR b · Enter: go to the '
            "agent · f: fork at that turn · Esc: back",
            id="search-title",
        )
        yield Input(placeholder="search conversations", id="search-query")
        yield OptionList(id="hits")
        yield Footer()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self._search(event.value)

    @work(thread=True, exclusive=True, group="search")
    def _search(self, query: str) -> None:
        try:
            hits = list(self._find(query))
        except Exception as exc:  # noqa: BLE001 - a query FTS5 cannot read: said, not a crash
            self.app.call_from_thread(self._said, str(exc), True)
            return
        self.app.call_from_thread(self._show, hits)

    def _said(self, text: str, bad: bool = False) -> None:
        self.query_one("#search-title", Static).update(Text(text, style="red" if bad else ""))

    def _show(self, hits: list[Hit]) -> None:
        self.hits = hits
        box = self.query_one("#hits", OptionList)
        box.clear_options()
        box.add_options([Option(hit_text(h)) for h in hits])
        self._said(f"{len(hits)} hits" if hits else "nothing said matches")
        if hits:
            box.highlighted = 0
            box.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.hits[event.option_index].agent)

    def action_fork(self) -> None:
        box = self.query_one("#hits", OptionList)
        if box.highlighted is None or not self.hits:
            self.app.notify("search, then pick a hit to fork at", severity="warning")
            return
        self._fork(self.hits[box.highlighted].ref)
