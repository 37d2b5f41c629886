"""The TUI's diff pane (issue 38): the selected agent's change (the review room's diff) as one
scrollable, coloured list of lines, Textual's own OptionList; `c` keeps a comment on the
highlighted line, `S` sends the comments to the agent as one acknowledged message.

`lines` is pure (a Diff and its comments in, the rows out); the screen asks the source on a
worker thread, never on the event loop."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from roost.core.present import shown
from roost.review import rules

_STYLE = {"+": "green", "-": "red", "\\": "dim", " ": ""}


@dataclass(frozen=True, slots=True)
class Line:
    text: Text
    at: tuple[str, int] | None = None  # (file, line of its new side): a comment may go here


def lines(d: rules.Diff, comments: Sequence[rules.Seen]) -> list[Line]:
    """The rows of the pane: a head per file, each hunk's lines numbered on their new side,
    each comment under its line (outdated ones under their file's head)."""
    by_file: dict[str, list[rules.Seen]] = {}
    for s in comments:
        by_file.setdefault(s.comment.path, []).append(s)
    out = [Line(Text(rules.describe(d), style="bold"))]
    if not d.files:
        out.append(Line(Text("no changes", style="dim")))
    for f in d.files:
        out.append(Line(Text("")))
        counts = (
            f"binary, {f.size if f.size is not None else '?'} bytes"
            if f.binary
            else f"+{f.added or 0} -{f.removed or 0}"
        )
        out.append(Line(Text(f"{rules.status_word(f)}: {rules.label(f)}  {counts}", "bold")))
        mine = by_file.get(f.path, [])
        out.extend(_comment(s) for s in mine if s.end is None)
        if not f.binary and not f.read:
            out.append(Line(Text(f"… not shown: {rules.more_cmd(d.agent, f)}", style="dim")))
        for h in f.hunks:
            out.append(
                Line(
                    Text(f"@@ -{h.old_start},{h.old_count} +{h.new_start},{h.new_count} @@", "cyan")
                )
            )
            new = h.new_start
            for raw in h.lines:
                mark = raw[:1]
                at = (f.path, new) if mark in ("+", " ") else None
                number = f"{new:>5} " if at is not None else "      "
                out.append(Line(Text(number + shown(raw), style=_STYLE.get(mark, "")), at))
                if at is not None:
                    out.extend(_comment(s) for s in mine if s.end == new)
                    new += 1
            if h.more:
                out.append(Line(Text(f"      … {h.more} more lines", style="dim")))
        if f.more:
            out.append(Line(Text(f"… {f.more} more lines, {rules.more_cmd(d.agent, f)}", "dim")))
    return out


def _comment(s: rules.Seen) -> Line:
    c = s.comment
    where = rules.lines_word(c.anchor.start, c.anchor.end)
    style = "dim" if s.state == rules.OUTDATED else "yellow"
    return Line(Text(f"      ▸ #{c.id} {s.state} ({where}): {shown(c.body)}", style=style))


class DiffScreen(Screen[None]):
    """One agent's change. Arrows/PgUp/PgDn scroll; c comments on the highlighted line of a
    file's new side; S sends the open comments; r reads it again; Esc goes back."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,D", "app.pop_screen", "back"),
        Binding("c", "comment", "comment on the line"),
        Binding("S", "send_review", "send the comments"),
        Binding("r", "reload", "reload"),
    ]

    def __init__(
        self,
        name: str,
        read: Callable[[], tuple[rules.Diff, list[rules.Seen]]],
        comment: Callable[[str, int, str], str],
        send_review: Callable[[], str],
        ask: Callable[[str, Callable[[str], str]], None],
    ) -> None:
        super().__init__()
        self.agent = name
        self._read, self._comment, self._send, self._ask = read, comment, send_review, ask
        self.rows: list[Line] = []

    def compose(self) -> ComposeResult:
        yield Static(f"{self.agent}'s change: reading…", id="diff-title")
        yield OptionList(id="diff")
        yield Footer()

    def on_mount(self) -> None:
        self.action_reload()

    def action_reload(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="diff")
    def _load(self) -> None:
        try:
            d, comments = self._read()
        except Exception as exc:  # noqa: BLE001 - e.g. no git checkout: said on the pane
            self.app.call_from_thread(self._show_error, str(exc))
            return
        self.app.call_from_thread(self._show, lines(d, comments))

    def _show_error(self, text: str) -> None:
        self.query_one("#diff-title", Static).update(Text(text, style="red"))

    def _show(self, rows: list[Line]) -> None:
        self.rows = rows
        box = self.query_one("#diff", OptionList)
        at = box.highlighted
        box.clear_options()
        box.add_options([Option(r.text) for r in rows])
        if at is not None and at < len(rows):
            box.highlighted = at
        self.query_one("#diff-title", Static).update(
            Text(f"{self.agent}'s change · c comment · S send comments · r reload · Esc back")
        )
        box.focus()

    def action_comment(self) -> None:
        box = self.query_one("#diff", OptionList)
        at = self.rows[box.highlighted].at if box.highlighted is not None else None
        if at is None:
            self.app.notify("pick a line of a file's new side (+ or unchanged)", severity="warning")
            return
        path, line = at

        def keep(text: str) -> str:
            said = self._comment(path, line, text)
            self.app.call_from_thread(self.action_reload)
            return said

        self._ask(f"Comment on {shown(path)}:{line}", keep)

    def action_send_review(self) -> None:
        self._send_now()

    @work(thread=True, exclusive=True, group="review")
    def _send_now(self) -> None:
        try:
            said = self._send()
        except Exception as exc:  # noqa: BLE001 - its words, not a crash
            self.app.call_from_thread(self.app.notify, str(exc), severity="error", timeout=8)
            return
        self.app.call_from_thread(self.app.notify, said, timeout=6)
        self.app.call_from_thread(self.action_reload)
