"""The TUI's diff pane (issue 38): the selected agent's change (the review room's diff) as one
scrollable, coloured list of lines, Textual's own OptionList; `c` keeps a comment on the
highlighted line, `S` sends the comments to the agent as one acknowledged message, `m` marks
the hunk under the cursor (again: unmarks it) and `M` merges the marked hunks after a confirm
(`roost merge NAME --hunks`, each with the fingerprint it was drawn with: a hunk that changed
since is refused, never another one taken).

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
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Footer, Label, OptionList, Static
from textual.widgets.option_list import Option

from roost.core.present import shown
from roost.review import rules

_STYLE = {"+": "green", "-": "red", "\\": "dim", " ": ""}


Pick = tuple[str, int, str]  # a hunk: (file, its number from 1 in the file, its fingerprint)


@dataclass(frozen=True, slots=True)
class Line:
    text: Text
    at: tuple[str, int] | None = None  # (file, line of its new side): a comment may go here
    hunk: Pick | None = None  # the hunk this row shows (its head or one of its lines)


def lines(
    d: rules.Diff, comments: Sequence[rules.Seen], marked: frozenset[tuple[str, int]] = frozenset()
) -> list[Line]:
    """The rows of the pane: a head per file, each hunk's lines numbered on their new side,
    each comment under its line (outdated ones under their file's head); a hunk `marked`
    (file, number) shows ✔ on its head."""
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
        for n, h in enumerate(f.hunks, 1):
            pick = None if f.binary else (f.path, n, h.fingerprint)
            head = f"@@ -{h.old_start},{h.old_count} +{h.new_start},{h.new_count} @@"
            if (f.path, n) in marked:
                out.append(
                    Line(Text(f"✔ {head}  hunk {n}, marked", "bold reverse cyan"), None, pick)
                )
            else:
                out.append(Line(Text(f"{head}  hunk {n}", "cyan"), None, pick))
            new = h.new_start
            for raw in h.lines:
                mark = raw[:1]
                at = (f.path, new) if mark in ("+", " ") else None
                number = f"{new:>5} " if at is not None else "      "
                text = Text(number + shown(raw), style=_STYLE.get(mark, ""))
                out.append(Line(text, at, pick))
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


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question: y or the Yes button says yes; n, Esc or No says no."""

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    #confirm { width: 74; max-width: 100%; height: auto; border: thick $warning;
               background: $surface; padding: 1 2; }
    #confirm Horizontal { height: auto; margin-top: 1; }
    #confirm Button { margin-right: 2; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "yes"),
        Binding("n,escape", "answer(False)", "no"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm"):
            yield Label(Text(self.question))
            with Horizontal():
                yield Button("Yes (y)", id="yes", variant="warning")
                yield Button("No (n)", id="no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class DiffScreen(Screen[None]):
    """One agent's change. Arrows/PgUp/PgDn scroll; c comments on the highlighted line of a
    file's new side; S sends the open comments; m marks (or unmarks) the hunk under the
    cursor, M merges the marked hunks after a confirm; r reads it again; Esc goes back."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,D", "app.pop_screen", "back"),
        Binding("c", "comment", "comment on the line"),
        Binding("S", "send_review", "send the comments"),
        Binding("m", "mark", "mark the hunk"),
        Binding("M", "merge_marked", "merge the marked hunks"),
        Binding("r", "reload", "reload"),
    ]

    def __init__(
        self,
        name: str,
        read: Callable[[], tuple[rules.Diff, list[rules.Seen]]],
        comment: Callable[[str, int, str], str],
        send_review: Callable[[], str],
        ask: Callable[[str, Callable[[str], str]], None],
        merge_hunks: Callable[[list[Pick]], str] | None = None,
    ) -> None:
        super().__init__()
        self.agent = name
        self._read, self._comment, self._send, self._ask = read, comment, send_review, ask
        self._merge = merge_hunks
        self.rows: list[Line] = []
        self.marked: dict[tuple[str, int], Pick] = {}  # with the fingerprint it was drawn with
        self._drawn: tuple[rules.Diff, list[rules.Seen]] | None = None

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
        self.app.call_from_thread(self._drawn_now, d, comments)

    def _drawn_now(self, d: rules.Diff, comments: list[rules.Seen]) -> None:
        """A fresh read: the marks of hunks it still shows as they were stay, others go."""
        self._drawn = (d, comments)
        now = {
            (f.path, n): (f.path, n, h.fingerprint)
            for f in d.files
            if not f.binary
            for n, h in enumerate(f.hunks, 1)
        }
        self.marked = {k: v for k, v in self.marked.items() if now.get(k) == v}
        self._show(lines(d, comments, frozenset(self.marked)))

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
        marks = f" · {len(self.marked)} marked" if self.marked else ""
        self.query_one("#diff-title", Static).update(
            Text(
                f"{self.agent}'s change · c comment · S send comments · m mark hunk · "
                f"M merge marked · r reload · Esc back{marks}"
            )
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

    def action_mark(self) -> None:
        box = self.query_one("#diff", OptionList)
        pick = self.rows[box.highlighted].hunk if box.highlighted is not None else None
        if pick is None or self._drawn is None:
            self.app.notify(
                "put the cursor on a hunk (its @@ line or its lines)", severity="warning"
            )
            return
        key = (pick[0], pick[1])
        if key in self.marked:
            del self.marked[key]
        else:
            self.marked[key] = pick
        self._show(lines(*self._drawn, frozenset(self.marked)))

    def action_merge_marked(self) -> None:
        if self._merge is None:
            self.app.notify("merging hunks is not offered here", severity="warning")
            return
        if not self.marked:
            self.app.notify("no hunk marked: m marks the hunk under the cursor", severity="warning")
            return
        picks = [self.marked[k] for k in sorted(self.marked)]
        labels = ", ".join(f"{shown(p)}:{n}" for p, n, _ in picks[:5])
        more = f" and {len(picks) - 5} more" if len(picks) > 5 else ""
        question = (
            f"Merge {len(picks)} hunk{'s' if len(picks) != 1 else ''} of {self.agent}'s change "
            f"({labels}{more}) into the main checkout's branch, as one commit?"
        )

        def answered(yes: bool | None) -> None:
            if yes:
                self._merge_now(picks)

        self.app.push_screen(ConfirmScreen(question), answered)

    @work(thread=True, exclusive=True, group="merge")
    def _merge_now(self, picks: list[Pick]) -> None:
        assert self._merge is not None
        try:
            said = self._merge(picks)
        except Exception as exc:  # noqa: BLE001 - a refusal: its words, nothing changed
            self.app.call_from_thread(self.app.notify, str(exc), severity="error", timeout=10)
            return
        self.app.call_from_thread(self._merged, said)

    def _merged(self, said: str) -> None:
        self.marked.clear()
        self.app.notify(said, timeout=8)
        self.action_reload()
