"""The roost TUI: every agent at a glance, one key to attach, the workspace you can see.

Keyboard-first. The list, the preview and the details refresh about once a second, on worker
threads (a refresh is two tmux calls whatever the number of agents; the preview captures only the
selected agent). The keys are tui/actions.py's table; each operation is the CLI's own code
(tui/live.py) and shows the CLI's words (core/present.py); errors show as notifications.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime, tzinfo
from functools import partial
from typing import ClassVar

from rich.text import Text
from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import DataTable, Footer, Input, Label, OptionList, Select, Static
from textual.widgets.option_list import Option

from roost.core import present
from roost.core.errors import RoostError
from roost.core.fleet import HostView
from roost.core.observation import Observation
from roost.core.questions import Question
from roost.core.status import Status
from roost.core.workspace import Node
from roost.providers import traits
from roost.system.clock import local_zone
from roost.tui import actions
from roost.tui import rows as rowlib
from roost.tui.diffview import DiffScreen
from roost.tui.searchview import SearchScreen
from roost.tui.source import Snapshot, Source
from roost.usage.rules import count

HOSTS_EVERY = 10.0  # seconds between two looks at the remote hosts (ssh: slower than local)
Field = tuple[str, str, str | Sequence[str]]  # key, label, default text or the choices
Cells = tuple[Text | str, ...]  # name, provider, status, active (and tokens, issue 23)


def badge(text: str, status: str | None) -> Text:
    return Text(f" {text} ", style=rowlib.BADGE_STYLE.get(status or Status.UNKNOWN, ""))


def screen(text: str, height: int) -> Text:
    """The bottom of an agent's screen, one row per line (the CSS cuts wider lines rather than
    wrap them, so the prompt stays in view)."""
    return Text(rowlib.screen_tail(text, height))


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        lines = "\n".join(actions.help_lines())
        with VerticalScroll(id="help"):  # focused: arrows scroll it on a small terminal
            yield Static(f"[b]roost keys[/b]\n\n{lines}\n\n  Esc closes this help.")


class FormScreen(ModalScreen[str | None]):
    """A small form: one Input per field (a Select for choices). Enter in a field submits: the
    form runs `submit` with the values (on a worker) and closes with its line; when it fails, the
    form stays open with what was typed and says what is wrong. Esc cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(
        self, title: str, fields: list[Field], submit: Callable[[dict[str, str]], str]
    ) -> None:
        super().__init__()
        self.title_text = title
        self.fields = fields
        self.submit = submit

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="form", can_focus=False):
            yield Label(f"[b]{self.title_text}[/b]  (Enter submits, Esc cancels)")
            for key, label, default in self.fields:
                yield Label(label, classes="field")
                if isinstance(default, str):
                    yield Input(value=default, id=f"f-{key}", compact=True)
                else:
                    yield Select(
                        [(c, c) for c in default],
                        value=default[0],
                        id=f"f-{key}",
                        allow_blank=False,
                        compact=True,
                    )
            yield Static("", id="form-error")

    def values(self) -> dict[str, str]:
        values = {}
        for key, _label, default in self.fields:
            if isinstance(default, str):
                values[key] = self.query_one(f"#f-{key}", Input).value
            else:
                values[key] = str(self.query_one(f"#f-{key}", Select).value)
        return values

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.say("…")
        self._submit(self.values())

    @work(thread=True, exclusive=True, group="form")
    def _submit(self, values: dict[str, str]) -> None:
        try:
            line = self.submit(values)
        except Exception as exc:  # noqa: BLE001 - said in the form, which keeps its values
            self.app.call_from_thread(self.say, str(exc) or type(exc).__name__, True)
            return
        self.app.call_from_thread(self._close, line)

    def _close(self, line: str) -> None:
        if self.is_attached and self.app.screen is self:  # not cancelled meanwhile
            self.dismiss(line)

    def say(self, text: str, error: bool = False) -> None:
        box = self.query_one("#form-error", Static)
        box.update(Text(text))
        box.set_class(error, "error")

    def action_cancel(self) -> None:
        self.dismiss(None)


class AnswerScreen(ModalScreen[str | None]):
    """An agent's question and its choices, the selected one highlighted: Enter (or a click, or
    a choice's own key) closes it with that choice's key; Esc with None."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, name: str, question: Question) -> None:
        super().__init__()
        self.agent_name = name
        self.question = question

    def compose(self) -> ComposeResult:
        q = self.question
        with Vertical(id="answer"):
            yield Label(
                Text.assemble(
                    (f"{self.agent_name} asks", "bold"),
                    "  (Enter or a choice's key answers, Esc cancels)",
                )
            )
            yield Static(Text(q.text), id="answer-question")
            yield OptionList(
                *(Option(f"{c.key}. {c.label}", id=c.key) for c in q.choices),
                id="answer-choices",
                compact=True,
            )

    def on_mount(self) -> None:
        choices = self.query_one("#answer-choices", OptionList)
        choices.highlighted = self.question.selected or 0
        choices.focus()

    @on(OptionList.OptionSelected, "#answer-choices")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def on_key(self, event: events.Key) -> None:
        """A choice's key (its number, y or n) picks it at once, as in the CLI's own dialog."""
        for choice in self.question.choices:
            if event.character is not None and event.character.lower() == choice.key:
                event.stop()
                self.dismiss(choice.key)
                return


class TabScreen(Screen[None]):
    """A tab's tiles side by side in the stored layout, as live previews; Tab / Shift+Tab go to
    the other tabs. Tile edits here change the stored layout; the view redraws whenever the
    app's snapshot shows a layout other than the one drawn (after each edit: operate refreshes
    it before it ends)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,t", "app.pop_screen", "back"),
        Binding("tab", "switch_tab(1)", "next tab", key_display="Tab"),
        Binding("shift+tab", "switch_tab(-1)", "prev tab", show=False),
        Binding("left,h", "focus_tile(-1)", "prev tile", key_display="←"),
        Binding("right,l", "focus_tile(1)", "next tile", key_display="→"),
        Binding("bracketright", "edit('next')", "move right", key_display="]"),
        Binding("bracketleft", "edit('prev')", "move left", key_display="["),
        Binding("v", "edit('split-v')", "side by side"),
        Binding("minus", "edit('split-h')", "stacked", key_display="-"),
        Binding("plus,equals_sign", "edit('grow')", "grow", key_display="+"),
        Binding("underscore", "edit('shrink')", "shrink", key_display="_"),
        Binding("E", "balance", "balance"),
        Binding("x", "edit('close')", "close tile"),
    ]

    def __init__(self, tab: str) -> None:
        super().__init__()
        self.tab = tab
        self.focus_index = 0
        self.focus_name: str | None = None  # the focused tile follows its agent when it moves
        self._drawn: tuple[str, Node | None] | None = None  # the tab and layout on screen
        self._drawing = asyncio.Lock()  # one redraw at a time: tiles keep their ids across them

    def compose(self) -> ComposeResult:
        yield Static("", id="tab-title")
        yield Vertical(id="tiles")
        yield Footer(compact=True)

    async def on_mount(self) -> None:
        await self.rebuild()
        self.set_interval(1.0, self._tick_previews)

    @property
    def roost(self) -> RoostApp:
        app = self.app
        assert isinstance(app, RoostApp)
        return app

    @property
    def tabs(self) -> list[str]:
        return list(self.roost.snapshot.layouts) or [
            name for name, _ in self.roost.snapshot.tab_tiles
        ]

    @property
    def tiles(self) -> list[str]:
        return dict(self.roost.snapshot.tab_tiles).get(self.tab, [])

    @property
    def focused_tile(self) -> str | None:
        tiles = self.tiles
        if self.focus_name in tiles:
            return self.focus_name
        return tiles[min(self.focus_index, len(tiles) - 1)] if tiles else None

    def snapshot_changed(self) -> None:
        """The app has a new snapshot: redraw when this tab's layout is not the one shown."""
        if self._drawn != (self.tab, self.roost.snapshot.layouts.get(self.tab)):
            self.call_later(self.rebuild)

    async def rebuild(self) -> None:
        async with self._drawing:
            layout = self.roost.snapshot.layouts.get(self.tab)
            self._drawn = (self.tab, layout)
            tabs = self.tabs
            where = (
                f"  ({tabs.index(self.tab) + 1} of {len(tabs)}: Tab for the next)"
                if self.tab in tabs and len(tabs) > 1
                else ""
            )
            self.query_one("#tab-title", Static).update(f"tab {self.tab}{where}")
            holder = self.query_one("#tiles")
            await holder.remove_children()  # gone before tiles with the same ids come
            if layout is not None:
                root = self._node(layout)
                root.styles.height = "1fr"  # a lone tile too fills the tab, not one line
                await holder.mount(root)
            else:
                await holder.mount(
                    Static(
                        f"tab {self.tab} has no tiles: a on a parked agent places it here",
                        classes="tile",
                    )
                )
        self.refresh_previews()

    def _node(self, node: Node) -> Widget:
        if "leaf" in node:
            tile = Static("", classes="tile", id=f"tile-{node['leaf']}")
            tile.border_title = node["leaf"]
            return tile
        box: Widget = Horizontal() if node["split"] == "v" else Vertical()
        a, b = self._node(node["a"]), self._node(node["b"])
        share = round(node["ratio"] * 100)
        for child, part in ((a, share), (b, 100 - share)):
            child.styles.width = f"{part}fr" if node["split"] == "v" else "1fr"
            child.styles.height = f"{part}fr" if node["split"] == "h" else "1fr"
        box.compose_add_child(a)
        box.compose_add_child(b)
        return box

    def _tick_previews(self) -> None:
        """The timer's, on the UI thread: recapture the tiles (on a worker) only when something
        changed (see RoostApp.stale)."""
        if self.roost.stale("tiles"):
            self.refresh_previews()

    @work(thread=True, exclusive=True, group="tab-preview")
    def refresh_previews(self) -> None:
        self._capture_tiles()

    def _capture_tiles(self) -> None:
        app = self.roost
        texts = {name: app.source.preview(name, 40) for name in self.tiles}
        app.call_from_thread(self._show, texts)

    def _show(self, texts: dict[str, str]) -> None:
        focused = self.focused_tile
        for name in self.tiles:
            for tile in self.query(f"#tile-{name}").results(Static):
                if name in texts:
                    tile.update(screen(texts[name], tile.content_size.height or 40))
                tile.set_class(name == focused, "focused")

    async def action_switch_tab(self, step: int) -> None:
        tabs = self.tabs
        if len(tabs) > 1:
            at = tabs.index(self.tab) if self.tab in tabs else 0
            self.tab = tabs[(at + step) % len(tabs)]
            self.focus_index, self.focus_name = 0, None
            await self.rebuild()

    def action_focus_tile(self, step: int) -> None:
        tiles = self.tiles
        if tiles:
            at = tiles.index(self.focused_tile) if self.focused_tile in tiles else 0
            self.focus_index = (at + step) % len(tiles)
            self.focus_name = tiles[self.focus_index]
            self._show({})

    def action_edit(self, edit: str) -> None:
        name = self.focused_tile
        if name is None:
            return
        self.focus_index, self.focus_name = self.tiles.index(name), name
        app = self.roost
        app.operate(partial(app.source.edit_layout, self.tab, name, edit))

    def action_balance(self) -> None:
        app = self.roost
        app.operate(partial(app.source.balance_tab, self.tab))


class RoostCommands(Provider):
    """The command palette (ctrl+p) offers roost's own actions: the key table's, with their keys."""

    def _entries(self) -> Iterator[tuple[str, actions.Action]]:
        for action in actions.ACTIONS:
            yield f"{action.label} ({actions.key_name(action)})", action

    async def _run(self, action: actions.Action) -> None:
        await self.app.run_action(action.binding)

    async def discover(self) -> Hits:
        for text, action in self._entries():
            yield DiscoveryHit(text, partial(self._run, action), help=action.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for text, action in self._entries():
            score = max(matcher.match(text), matcher.match(action.help) * 0.8)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(text),
                    partial(self._run, action),
                    text=text,
                    help=action.help,
                )


class RoostApp(App[None]):
    TITLE = "roost"
    CSS = """
    #banner { background: $warning; color: $text; padding: 0 1; display: none; }
    #banner.show { display: block; }
    #counts { padding: 0 1; background: $boost; }
    #main { height: 1fr; }
    #left { width: 55%; }
    #agents { height: 1fr; }
    #agents > .datatable--cursor, #agents:focus > .datatable--cursor {
        background: $accent; color: $text; text-style: bold; }
    #empty { display: none; padding: 1 2; }
    #empty.show { display: block; }
    #side { width: 45%; }
    .-narrow #left { width: 1fr; }
    .-narrow #side { width: 28; }
    #preview, .tile { text-wrap: nowrap; text-overflow: ellipsis; }
    #preview { height: 2fr; border: round $accent; overflow: hidden; }
    #details { height: 1fr; border: round $secondary; padding: 0 1; }
    #filter { display: none; }
    #filter.show { display: block; }
    #help { width: 80; max-width: 100%; height: auto; max-height: 100%; border: thick $accent;
            padding: 0 1; background: $panel; }
    HelpScreen, FormScreen, AnswerScreen { align: center middle; }
    #answer { width: 74; max-width: 100%; height: auto; max-height: 100%; border: thick $accent;
              padding: 0 1; background: $panel; }
    #answer-question { margin: 1 0; }
    #answer-choices { height: auto; max-height: 12; }
    #form { width: 74; max-width: 100%; height: auto; max-height: 100%; border: thick $accent;
            padding: 0 1; background: $panel; }
    #form .field { margin-top: 1; color: $text-muted; }
    #form-error { margin-top: 1; }
    #form-error.error { color: $error; text-style: bold; }
    .tile { border: round $secondary; overflow: hidden; }
    .tile.focused { border: round $accent; }
    #tiles { height: 1fr; }
    #tab-title { padding: 0 1; background: $boost; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(a.key, a.binding, a.label, show=a.footer)
        for a in actions.ACTIONS
        if a.key != "enter"
    ]  # enter: the table's RowSelected
    COMMANDS = App.COMMANDS | {RoostCommands}
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]  # narrow: the list gets room

    def __init__(
        self,
        source: Source | None = None,
        attacher: Callable[[list[str]], None] | None = None,
        refresh_every: float = 1.0,
        clock: Callable[[], datetime] | None = None,
        zone: tzinfo | None = None,
        hosts_every: float = HOSTS_EVERY,
    ) -> None:
        """`attacher` runs a tmux command line in the terminal (default: suspend the app and
        run it); `clock` gives "now" for the ages shown (default: the system's); `zone` the
        time zone of the times shown (default: the user's, $TZ); `hosts_every`: seconds between
        two looks at the remote hosts' agents (0: only at start and on r)."""
        super().__init__()
        self.zone = zone or local_zone(os.environ)
        if source is None:
            from roost.tui.live import LiveSource  # the operations: loaded once the app runs

            source = LiveSource()
        self.source: Source = source
        self.attacher = attacher or self._run_attached
        self.refresh_every = refresh_every
        self.snapshot = Snapshot()
        self.rows: list[rowlib.Row] = []
        self.filter_text = ""
        self.buried_open = False
        self.clock = clock
        self._cells_shown: list[Cells] = []
        self._widths: tuple[int, ...] = ()
        self._shown: str | None = None  # the agent the details and preview show
        self._git: tuple[str, dict[str, object] | None] | None = None  # its worktree's counts
        self._screen_text = ("", "")  # the preview's agent and its last capture
        self._name_width = 64  # the name column's room (render_rows sets it from the width)
        self._stamps: dict[str, object] = {}  # what each timed look last saw of source.stamp
        self.hosts_every = hosts_every
        self.host_views: dict[str, HostView] = {}  # each host's last answer, in the hosts' order
        self._asking: set[str] = set()  # hosts whose answer is awaited (one ask at a time each)

    # ---- layout -------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static("", id="banner")
        yield Static("", id="counts")
        yield Input(placeholder="filter (Esc clears)", id="filter")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield Static(actions.EMPTY, id="empty")
                yield DataTable(id="agents", cursor_type="row")
            with Vertical(id="side"):
                yield Static("", id="preview")
                yield Static("", id="details")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        table = self.query_one("#agents", DataTable)
        self.query_one("#preview").border_title = "screen"
        self.query_one("#details").border_title = "details"
        table.focus()
        self.refresh_data()
        if self.refresh_every:
            self.set_interval(self.refresh_every, self._tick_data)
            self.set_interval(self.refresh_every, self._tick_preview)
        self.ask_hosts()
        if self.hosts_every:
            self.set_interval(self.hosts_every, self.ask_hosts)

    def write_terminal(self, text: str) -> None:
        """Raw bytes to the terminal (an alert's OSC sequences), as App.bell writes its BEL."""
        if not self.is_headless and self._driver is not None:
            self._driver.write(text)

    # ---- data ---------------------------------------------------------------------------------
    def stale(self, what: str) -> bool:
        """Whether `what` ("data", "preview", "tiles") may show something old: always without
        a cue from the source; with the roost service's cue, only when it changed since `what`
        last looked. So an idle TUI asks tmux nothing while the service runs."""
        stamp = getattr(self.source, "stamp", lambda: None)()
        if stamp is None:
            return True
        if self._stamps.get(what) == stamp:
            return False
        self._stamps[what] = stamp
        return True

    def _tick_data(self) -> None:
        """The timer's, on the UI thread: a worker only when something changed (an idle TUI
        starts no thread: the cue is two `stat`s)."""
        if self.stale("data"):
            self.refresh_data()

    @work(thread=True, exclusive=True, group="refresh")
    def refresh_data(self) -> None:
        self._refresh_here()

    def _refresh_here(self) -> None:
        """On a worker: a new snapshot, applied on the UI thread before this returns."""
        try:
            snap = self.source.snapshot()
        except Exception as exc:  # noqa: BLE001 - shown, never fatal
            self.call_from_thread(self.notify, f"refresh failed: {exc}", severity="error")
            return
        self.call_from_thread(self.apply_snapshot, snap)

    # ---- remote hosts (docs/HOSTS.md): asked in the background, never blocking the list ------
    def ask_hosts(self) -> None:
        """Look at the hosts again: their list (one SELECT), then each host on a thread of its
        own (`roost ls --json` over ssh), so a host that does not answer costs its own time
        limits and delays neither the others nor this machine's refreshes."""
        if getattr(self.source, "hosts", None) is not None:
            self._list_hosts()

    @work(thread=True, exclusive=True, group="hosts")
    def _list_hosts(self) -> None:
        try:
            names = self.source.hosts()
        except Exception:  # noqa: BLE001 - e.g. a busy database: the next look lists them
            return
        self.call_from_thread(self._ask_each, names)

    def _ask_each(self, names: list[str]) -> None:
        known = {n: self.host_views[n] for n in names if n in self.host_views}
        if list(known) != list(self.host_views):  # a host was removed, or the order changed
            self.host_views = known
            self.render_rows()
        for name in names:
            if name not in self._asking:
                self._asking.add(name)
                # A daemon thread of its own, not a Textual worker: those share a few pool
                # threads (silent hosts would starve this machine's refreshes), and quitting
                # waits for them (it would wait for ssh's time limit).
                threading.Thread(
                    target=self._ask_host,
                    args=(name, names),
                    name=f"roost-host-{name}",
                    daemon=True,
                ).start()

    def _ask_host(self, name: str, order: list[str]) -> None:
        try:
            view = self.source.host_view(name)
        except Exception as exc:  # noqa: BLE001 - e.g. the host was removed meanwhile
            view = HostView(name, unreachable=str(exc) or type(exc).__name__)
        if not self.is_running:  # the app ended meanwhile
            return
        try:
            self.call_from_thread(self._got_host, view, order)
        except RuntimeError:  # it ended just now
            return

    def _got_host(self, view: HostView, order: list[str]) -> None:
        self._asking.discard(view.host)
        if view.host not in order:
            return
        found = {**self.host_views, view.host: view}
        self.host_views = {n: found[n] for n in order if n in found}
        try:
            self.render_rows()
        except NoMatches:  # an answer that lands while the app closes
            return

    def apply_snapshot(self, snap: Snapshot) -> None:
        self.snapshot = snap
        for (
            text
        ) in snap.alerts:  # notifications to the person (alerts/operations.py): as bell() does
            self.write_terminal(text)
        try:
            self._show_snapshot(snap)
        except NoMatches:  # a refresh that ends while the app closes: its widgets are gone
            return

    def _show_snapshot(self, snap: Snapshot) -> None:
        self.query_one("#counts", Static).update(rowlib.header_text(snap.items))
        self.query_one("#empty").set_class(not snap.items and not self.host_views, "show")
        banner = self.query_one("#banner", Static)
        if not snap.server_running and snap.would_start:
            names = ", ".join(snap.would_start[:6]) + ("…" if len(snap.would_start) > 6 else "")
            banner.update(
                f"roost's tmux server is not running (after a reboot?): restore would "
                f"bring back {len(snap.would_start)} agents ({names}). "
                "Press r to restore; nothing starts by itself."
            )
            banner.add_class("show")
        else:
            banner.remove_class("show")
        self.render_rows()
        for screen in self.screen_stack:
            if isinstance(screen, TabScreen):
                screen.snapshot_changed()

    def render_rows(self) -> None:
        table = self.query_one("#agents", DataTable)
        selected = self.selected_key()
        rows = rowlib.with_hosts(
            rowlib.build(
                self.snapshot.items,
                self.snapshot.tab_tiles,
                self.snapshot.pins,
                self.filter_text,
                self.buried_open,
            ),
            list(self.host_views.values()),
            self.filter_text,
        )
        providers = max(
            [8, *(len(i.agent.provider) for i in self.snapshot.items)]
            + [len(str(r.remote.get("provider"))) for r in rows if r.remote is not None]
        )
        self._name_width = rowlib.name_room(table.size.width, providers, self._tokens_room(rows))
        cells = [self._cells(row) for row in rows]
        if [r.key for r in rows] == [r.key for r in self.rows] and cells == self._cells_shown:
            self.rows = rows  # same rows, same text: nothing to redraw (no jump, no flicker)
            self.show_details()
            return
        self.rows, self._cells_shown = rows, cells
        scroll = table.scroll_y
        # a needs-you group: the name column takes the list's room, for the questions after
        # the names (so its width does not follow a question's length either)
        asking = any(r.key == f"group:{rowlib.NEEDS_GROUP}" for r in rows)
        widths = self._column_widths(cells, self._name_width if asking else None)
        table.clear(columns=widths != self._widths)
        if widths != self._widths:
            self._widths = widths
            labels = ("name", "provider", "status", "active", "tokens")[: len(widths)]
            for label, width in zip(labels, widths, strict=True):
                table.add_column(label, width=width)
        for row, cell in zip(rows, cells, strict=True):
            table.add_row(*cell, key=row.key)
        keys = [r.key for r in rows]
        if selected in keys:
            table.move_cursor(row=keys.index(selected), scroll=False)
        else:  # at start, or the selected agent went: the first agent
            table.move_cursor(row=next((i for i, r in enumerate(rows) if r.item), 0), scroll=False)
        table.scroll_to(y=scroll, animate=False)
        moved = self.selected_key() != self._shown
        self.show_details()
        if moved:
            self.refresh_preview()

    @staticmethod
    def _column_widths(cells: list[Cells], name: int | None = None) -> tuple[int, ...]:
        """Widths that change when agents come, go or move, never with a status: the name and
        provider columns fit the longest (the name column is `name` wide when given), status
        and age have fixed widths."""

        def longest(i: int, least: int) -> int:
            return max([least, *(len(str(c[i])) for c in cells)])

        widths = (
            longest(0, 10) if name is None else max(name, longest(0, 10)),
            longest(1, 8),
            rowlib.STATUS_WIDTH + 2,
            rowlib.ACTIVE_WIDTH,
        )
        # the tokens column shows once any agent used some (issue 23: read from CLIs' files)
        return widths + ((longest(4, 6),) if cells and len(cells[0]) > 4 else ())

    def _tokens_room(self, rows: list[rowlib.Row]) -> int:
        """The tokens column's width (0: it does not show): the longest count, at least 6."""
        if not self.snapshot.usage:
            return 0
        found = [count(n) for n in self.snapshot.usage.values()]
        for row in rows:
            used = row.remote.get("usage") if row.remote is not None else None
            total = used.get("total") if isinstance(used, Mapping) else None
            if isinstance(total, int) and total:
                found.append(count(total))
        return max([6, *(len(f) for f in found)])

    def _cells(self, row: rowlib.Row) -> Cells:
        if row.remote is not None:
            return self._remote_cells(row.remote)
        if row.key.startswith(rowlib.HOST_KEY):
            style = "bold red" if row.unreachable is not None else "bold reverse"
            title = rowlib.fit(rowlib.host_title(row), self._name_width)
            return (Text(title, style=style), "", "", "", *self._tokens(None))
        if row.item is None:
            closed = row.label == "Buried" and not self.buried_open
            return (
                Text(f"{'▸' if closed else '▾'} {row.label} ({row.count})", style="bold"),
                "",
                "",
                "",
                *self._tokens(None),
            )
        it = row.item
        indent = "   " * (row.depth - 1) + " └ " if row.depth else ""
        when = rowlib.ago(
            it.status_since or it.agent.last_active_at, self.clock() if self.clock else None
        )
        # a long name is cut (the details panel has all of it): the other columns stay in view;
        # a needs-you row says its question (or error) after the name, as far as it fits
        named = indent + it.agent.name
        name = Text(rowlib.name_cell(named, row.asks, self._name_width))
        name.stylize("italic", len(named))
        asked = rowlib.asks_fit(named, row.asks, self._name_width)
        return (
            name,
            it.agent.provider,
            badge(rowlib.fit(rowlib.status_cell(it, asked), rowlib.STATUS_WIDTH), it.status),
            when,
            *self._tokens(it.agent.id),
        )

    def _remote_cells(self, a: Mapping[str, object]) -> Cells:
        """A host's agent, as a local one shows (its tokens from its `ls --json` usage)."""
        since = a.get("status_since") or a.get("last_active_at")
        when = rowlib.ago(str(since) if since else None, self.clock() if self.clock else None)
        status = rowlib.fit(rowlib.remote_status(a), rowlib.STATUS_WIDTH)
        used = a.get("usage")
        total = used.get("total") if isinstance(used, Mapping) else None
        tokens = (count(total) if isinstance(total, int) and total else "",)
        return (
            Text(rowlib.fit(str(a.get("name")), self._name_width)),
            str(a.get("provider")),
            badge(status, str(a.get("status") or Status.UNKNOWN)),
            when,
            *(tokens if self.snapshot.usage else ()),
        )

    def _tokens(self, agent_id: str | None) -> tuple[str, ...]:
        """The tokens cell, when the column shows (some agent used tokens): the agent's, short."""
        used = self.snapshot.usage
        if not used:
            return ()
        return (count(used[agent_id]) if agent_id in used else "",)

    def selected_key(self) -> str | None:
        table: DataTable[Text | str] = self.query_one("#agents", DataTable)
        if not self.rows or table.cursor_row is None or table.cursor_row >= len(self.rows):
            return None
        return self.rows[table.cursor_row].key

    def selected(self) -> Observation | None:
        key = self.selected_key()
        return next((r.item for r in self.rows if r.key == key and r.item), None)

    def selected_row(self) -> rowlib.Row | None:
        key = self.selected_key()
        return next((r for r in self.rows if r.key == key), None)

    @on(DataTable.RowHighlighted)
    def _highlighted(self, _event: DataTable.RowHighlighted) -> None:
        try:
            if self.selected_key() != self._shown:  # a table rebuild re-highlights the same row
                self.show_details()
                self.refresh_preview()
        except NoMatches:  # a highlight queued before the app closed: its widgets are gone
            return

    def show_details(self) -> None:
        it = self.selected()
        details = self.query_one("#details", Static)
        key = self.selected_key()
        moved, self._shown = key != self._shown, key
        if it is None:
            row = self.selected_row()
            if row is not None and row.remote is not None and row.host is not None:
                details.update(rowlib.remote_details(row.remote, row.host))
            elif row is not None and row.key.startswith(rowlib.HOST_KEY):
                details.update(rowlib.host_details(row))
            else:
                details.update("")
            return
        if moved:  # git is asked when the panel comes to a worktree agent, not on each refresh
            self._git = None
            if it.agent.worktree_json:
                self.load_git(it.agent.name)
        git = self._git[1] if self._git and self._git[0] == it.agent.name else None
        details.update(rowlib.details(it, git))
        self.load_events(it.agent.name)

    @work(thread=True, exclusive=True, group="git")
    def load_git(self, name: str) -> None:
        ask = getattr(self.source, "git_counts", None)
        try:
            counts = ask(name) if ask is not None else None
        except Exception:  # noqa: BLE001 - e.g. a busy database: the panel goes without them
            return
        self.call_from_thread(self._show_git, name, counts)

    def _show_git(self, name: str, counts: dict[str, object] | None) -> None:
        it = self.selected()
        if it is not None and it.agent.name == name:
            self._git = (name, counts)
            self.show_details()

    @work(thread=True, exclusive=True, group="events")
    def load_events(self, name: str) -> None:
        try:
            events = self.source.events(name)
        except Exception:  # noqa: BLE001 - e.g. a busy database: no events this time
            return
        text = "\n".join(present.event_brief(e, self.zone) for e in events[-5:])
        self.call_from_thread(self._append_events, name, text)

    def _append_events(self, name: str, text: str) -> None:
        try:
            it = self.selected()
        except NoMatches:  # the app is closing (its list is gone)
            return
        if it is not None and it.agent.name == name and text:
            details = self.query_one("#details", Static)
            details.update(f"{details.content}\n[dim]{text.replace('[', chr(92) + '[')}[/dim]")

    def _tick_preview(self) -> None:
        """The timer's: the selection's screen, when something changed (see stale)."""
        try:
            it = self.selected()
        except NoMatches:  # the app is closing (its list is gone)
            return
        if it is not None and self.stale("preview"):  # a worker only when needed
            self._load_preview(it.agent.name, it.pane.pane_id if it.pane is not None else None)

    def refresh_preview(self) -> None:
        """Read the selection here, on the UI thread; capture on a worker."""
        it = self.selected()
        if it is not None:
            self._load_preview(it.agent.name, it.pane.pane_id if it.pane is not None else None)
            return
        row = self.selected_row()
        if row is not None and row.remote is not None:  # its screen is on the host: not asked
            self._show_preview(row.label, f"(on host {row.host}: Enter attaches over ssh)")

    @work(thread=True, exclusive=True, group="preview")
    def _load_preview(self, name: str, pane_id: str | None) -> None:
        try:
            text = self.source.preview(name, 60, pane_id=pane_id)
        except Exception as exc:  # noqa: BLE001 - a preview never breaks the app
            text = f"(no screen: {exc})"
        self.call_from_thread(self._show_preview, name, text)

    def _show_preview(self, name: str, text: str) -> None:
        """The bottom of the agent's screen, as much as the panel holds."""
        self._screen_text = (name, text)
        # on the main screen, under a pushed one (the diff pane, the search) too; none once the
        # app closed while the worker ran
        found = self.screen_stack[0].query("#preview") if self.screen_stack else None
        if not found:
            return
        preview = found.first(Static)
        preview.border_title = f"{name} — screen"
        preview.update(screen(text, preview.content_size.height or 60))

    def on_resize(self) -> None:
        self.call_after_refresh(self.render_rows)  # the names' room follows the list's width
        if self._screen_text[0]:
            self.call_after_refresh(self._show_preview, *self._screen_text)

    # ---- actions ------------------------------------------------------------------------------
    def action_operate(self, name: str) -> None:
        """Run the table's operation `name` (tui/actions.py) on the selected agent, or on the
        whole workspace."""
        action = actions.BY_NAME[name]
        if action.workspace_op is not None:
            self.operate(partial(action.workspace_op, self.source))
            self.ask_hosts()  # r: the hosts are looked at again too
        elif (
            action.agent_op is not None
            and (it := self.selected_or_warn()) is not None
            and not self.refused(name, it)
        ):
            self.operate(partial(action.agent_op, self.source, it.agent.name))

    def refused(self, action: str, it: Observation) -> bool:
        """Say so when the key does not apply to this agent, and what to do instead."""
        why = actions.refusal(
            action, it.agent.name, it.agent.placement, it.agent.tab, present.status_word(it)
        )
        if why is not None:
            self.notify(why, severity="warning")
        return why is not None

    @work(thread=True, group="actions")
    def operate(self, call: Callable[[], str]) -> None:
        """Run one of the source's operations on a worker; notify its line, or its error; then
        show the world as it is after it (the tab view redraws from that snapshot)."""
        try:
            self.call_from_thread(self.notify, call())
        except Exception as exc:  # noqa: BLE001 - errors show in the app, never crash it
            self.call_from_thread(self.notify, str(exc), severity="error", timeout=8)
        self._refresh_here()

    def _form_done(self, line: str | None) -> None:
        """A form's operation succeeded (its line) or the form was cancelled (None)."""
        if line:
            self.notify(line)
            self.refresh_data()

    def selected_or_warn(self) -> Observation | None:
        it = self.selected()
        row = self.selected_row()
        if it is None and row is not None and row.remote is not None and row.host is not None:
            self.notify(rowlib.remote_refusal(row.label, row.host), severity="warning")
        elif it is None:
            self.notify("select an agent first", severity="warning")
        return it

    def action_toggle_buried(self) -> None:
        self.buried_open = not self.buried_open
        self.render_rows()

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("show")
        box.focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value
        self.render_rows()

    @on(Input.Submitted, "#filter")
    def _filter_done(self, _event: Input.Submitted) -> None:
        self.query_one("#agents").focus()

    def key_escape(self) -> None:
        box = self.query_one("#filter", Input)
        if box.has_class("show"):
            box.value = ""
            box.remove_class("show")
            self.query_one("#agents").focus()

    def action_new(self) -> None:
        tab = self.current_tab() or "main"
        fields: list[Field] = [
            ("name", "name", ""),
            ("provider", "provider", list(traits.BY_NAME)),
            ("cwd", "working directory", "."),
            ("tab", "tab", tab),
            ("prompt", "first prompt (optional)", ""),
            ("args", "extra arguments (for command: the program and its arguments)", ""),
        ]

        def spawn(values: dict[str, str]) -> str:  # on the form's worker: errors shown there
            try:
                args = tuple(shlex.split(values["args"]))
            except ValueError as exc:
                raise RoostError(f"arguments: {exc}") from None
            return self.source.spawn(
                values["name"],
                values["provider"],
                values["cwd"] or None,
                values["tab"] or None,
                args,
                values["prompt"] or None,
            )

        self.push_screen(FormScreen("New agent", fields, spawn), self._form_done)

    def action_send(self) -> None:
        it = self.selected_or_warn()
        if it is None:
            return
        name = it.agent.name

        def send(values: dict[str, str]) -> str:
            if not values["text"].strip():
                raise RoostError(present.not_delivered(name, "nothing to send"))
            return self.source.send(name, values["text"])

        self.push_screen(
            FormScreen(f"Send to {name}", [("text", "prompt", "")], send), self._form_done
        )

    def action_diff(self) -> None:
        """The selected agent's change in a pane of its own (tui/diffview.py)."""
        it = self.selected_or_warn()
        if it is None:
            return
        name = it.agent.name

        def ask(title: str, submit: Callable[[str], str]) -> None:
            self.push_screen(
                FormScreen(title, [("text", "comment", "")], lambda values: submit(values["text"])),
                self._form_done,
            )

        self.push_screen(
            DiffScreen(
                name,
                partial(self.source.changes, name),
                partial(self.source.comment, name),
                partial(self.source.send_review, name),
                ask,
                partial(self.source.merge_hunks, name),
            )
        )

    def action_search(self) -> None:
        """Search every conversation (tui/searchview.py); Enter goes to the hit's agent."""

        def fork(ref: str) -> None:
            self.push_screen(
                FormScreen(
                    f"Fork at {ref}",
                    [("new", "new agent's name", "")],
                    lambda values: self.source.fork_at(ref, values["new"]),
                ),
                self._form_done,
            )

        def go(name: str | None) -> None:
            if name is None:
                return
            if not any(r.item and r.item.agent.name == name for r in self.rows):
                self.notify(f"{name} is not in the list (removed, or filtered out)")
                return
            index = next(i for i, r in enumerate(self.rows) if r.item and r.item.agent.name == name)
            self.query_one("#agents", DataTable).move_cursor(row=index)

        self.push_screen(SearchScreen(self.source.search, fork), go)

    def action_answer(self) -> None:
        """The selected agent's question in a modal (read off its screen now, on a worker);
        the choice picked there is answered for that question only (its fingerprint)."""
        it = self.selected_or_warn()
        if it is None or self.refused("answer", it):
            return
        self._ask(it.agent.name)

    @work(thread=True, exclusive=True, group="answer")
    def _ask(self, name: str) -> None:
        try:
            question = self.source.question(name)
        except Exception as exc:  # noqa: BLE001 - e.g. it asks nothing any more: said, no modal
            self.call_from_thread(self.notify, str(exc), severity="error", timeout=8)
            return
        self.call_from_thread(self._show_question, name, question)

    def _show_question(self, name: str, question: Question) -> None:
        def chosen(key: str | None) -> None:
            if key is None:
                return
            # roost waits for the question to go and for what the agent shows next: seconds
            label = next((c.label for c in question.choices if c.key == key), key)
            self.notify(f"answering {name}: {label}…", timeout=3)
            self.operate(partial(self.source.answer, name, key, question.fingerprint))

        self.push_screen(AnswerScreen(name, question), chosen)

    def action_place(self) -> None:
        it = self.selected_or_warn()
        if it is None or self.refused("place", it):
            return
        name = it.agent.name
        self.push_screen(
            FormScreen(
                f"Place {name} on a tab",
                [("tab", "tab (made if missing)", self.current_tab() or "main")],
                lambda values: self.source.place(name, values["tab"]),
            ),
            self._form_done,
        )

    def action_balance(self) -> None:
        tab = self.current_tab()
        if tab is not None:
            self.operate(partial(self.source.balance_tab, tab))

    def current_tab(self) -> str | None:
        it = self.selected()
        if it is not None and it.agent.placement == "tile":
            return it.agent.tab
        key = self.selected_key() or ""
        if key.startswith("group:Tab "):
            return key[len("group:Tab ") :]
        return self.snapshot.tab_tiles[0][0] if self.snapshot.tab_tiles else None

    def action_tabs(self) -> None:
        tab = self.current_tab()
        if tab is None:
            self.notify("no tab yet: roost spawn NAME makes a tile of tab main", severity="warning")
            return
        self.push_screen(TabScreen(tab))

    def action_attach(self) -> None:
        it = self.selected()
        row = self.selected_row()
        if it is not None:
            self._attach_to(it.agent.name)
        elif row is not None and row.remote is not None and row.host is not None:
            self._attach_remote(row.host, row.label)

    @on(DataTable.RowSelected)
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        key = event.row_key.value or ""
        if key == "group:Buried":
            self.action_toggle_buried()
        elif not key.startswith(("group:", rowlib.HOST_KEY)):
            self.action_attach()

    @work(thread=True, group="attach")
    def _attach_to(self, name: str) -> None:
        try:
            argv = self.source.attach_argv(name)  # wakes it first
        except Exception as exc:  # noqa: BLE001
            self.call_from_thread(self.notify, str(exc), severity="error", timeout=8)
            return
        self.call_from_thread(self.attacher, argv)

    @work(thread=True, group="attach")
    def _attach_remote(self, host: str, name: str) -> None:
        """`roost attach HOST:AGENT`'s own ssh line (hosts/operations.attach_argv): the host's roost
        attaches there, its C-q ends the ssh and brings the terminal back here."""
        try:
            argv = self.source.remote_attach_argv(host, name)
        except Exception as exc:  # noqa: BLE001
            self.call_from_thread(self.notify, str(exc), severity="error", timeout=8)
            return
        self.call_from_thread(self.attacher, argv)

    def action_open(self) -> None:
        tab = self.current_tab()
        if tab is None:
            return
        self._open(tab)

    @work(thread=True, group="attach")
    def _open(self, tab: str) -> None:
        try:
            argv = self.source.open_tab_argv(tab)
        except Exception as exc:  # noqa: BLE001
            self.call_from_thread(self.notify, str(exc), severity="error", timeout=8)
            return
        self.call_from_thread(self.attacher, argv)

    def _run_attached(self, argv: list[str]) -> None:
        """Hand the terminal to `tmux attach`; the TUI comes back when the user detaches."""
        import os

        from roost.system import programs
        from roost.system.locate import tmux_client_env

        try:
            with self.suspend():
                programs.on_terminal(argv, tmux_client_env(os.environ))
        except Exception as exc:  # noqa: BLE001 - e.g. no terminal to hand over
            self.notify(f"cannot attach here: {exc}", severity="error")
        self.refresh_data()
        self.ask_hosts()


def run() -> None:
    RoostApp().run()
