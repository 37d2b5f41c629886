"""The TUI's source on the real roost: the CLI's operations, and the CLI's words for what they
did (core/present.py).

Every call opens a fresh roost context, so it can run on Textual's worker threads (an SQLite
connection belongs to the thread that opened it).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from roost.core import present
from roost.core import workspace as ws
from roost.core.errors import RoostError
from roost.core.events import Event
from roost.core.fleet import HostView
from roost.core.questions import Question
from roost.ops import answer as answering
from roost.ops import lifecycle, observe, service, tabview
from roost.ops import send as sending
from roost.ops import workspace as wsops
from roost.ops.context import App
from roost.ops.restore import restore as restore_workspace
from roost.ops.root import open_app
from roost.recall.operations import Hit
from roost.review import operations as review
from roost.review import rules as review_rules
from roost.review.rules import Diff, Seen
from roost.store import workspace as wsdb
from roost.tui.source import Snapshot
from roost.usage import operations as ops_usage
from roost.worktrees import operations as worktrees


def _names_tree(node: ws.Node | None, names: dict[str, str]) -> ws.Node | None:
    if node is None:
        return None
    if "leaf" in node:
        return {"leaf": names.get(node["leaf"], node["leaf"])}
    return {**node, "a": _names_tree(node["a"], names), "b": _names_tree(node["b"], names)}


RECHECK = 5.0  # seconds between two looks for the roost service


SEARCH_HITS = 50


class LiveSource:
    """With the roost service running, `stamp` tells the app when anything changed (the service
    records every change tmux pushes), so an idle TUI asks tmux nothing; without it the app
    refreshes on its timer as before."""

    _service = False
    _looked: float | None = None
    _launched = False
    _alerted: int | None = None  # the last `alert` event this TUI wrote to its terminal

    @contextmanager
    def _app(self) -> Iterator[App]:
        app = open_app()
        try:
            yield app
        finally:
            app.close()

    def stamp(self) -> object | None:
        """A token that changes whenever the store does while the service runs (its monitor
        writes each change, and which panes' screens moved): two stats, no tmux call and no
        query, so the app asks it on its UI thread. None without the service (or before the
        first look at it): look every time. Whether the service runs is looked at every
        RECHECK seconds on a thread of its own (it opens the store, and the first look starts
        the service on demand)."""
        now = time.monotonic()
        if self._looked is None or now - self._looked >= RECHECK:
            self._looked = now
            threading.Thread(target=self._look_at_service, daemon=True).start()
        if not self._service:
            return None
        found: list[tuple[int, int, int] | None] = []
        for path in (self._db, self._db + "-wal"):
            try:
                info = os.stat(path)
            except OSError:
                found.append(None)
                continue
            found.append((info.st_size, info.st_mtime_ns, info.st_ino))
        return tuple(found)

    def _look_at_service(self) -> None:
        try:
            with self._app() as app:
                if not self._launched:  # started on demand, not waited for
                    self._launched = True
                    service.ensure_running(app, timeout=0)
                self._db = str(app.store.path)  # before _service: the stamp reads it then
                self._service = service.alive(app)
        except Exception:  # noqa: BLE001 - never fatal: the app then refreshes by itself
            self._service = False

    def snapshot(self) -> Snapshot:
        with self._app() as app:
            items = observe.refresh(app)
            workspace = wsdb.load(app.store.conn)
            texts = self._alerts(app)
            used = ops_usage.tokens_by_agent(app)
        names = {o.agent.id: o.agent.name for o in items}
        plan = ws.plan_restore(workspace, [o.agent.id for o in items if o.alive])
        return Snapshot(
            items=items,
            tab_tiles=[
                (t.name, [names[a] for a in ws.leaves(t.layout) if a in names])
                for t in workspace.tabs
            ],
            pins=[names[p] for p in workspace.pins if p in names],
            server_running=any(o.pane is not None for o in items),
            would_start=[names[a] for a in plan.start if a in names],
            layouts={t.name: _names_tree(t.layout, names) for t in workspace.tabs},
            alerts=texts,
            usage=used,
        )

    def _alerts(self, app: App) -> list[str]:
        """The alerts logged since the last look, as this terminal's text (the first look only
        marks where the log ends). The roost service decides and delivers them; the TUI only
        shows them."""
        from roost.alerts import operations as alerts

        if self._alerted is None:
            self._alerted = app.store.last_event_id()
            return []
        found = app.store.events_since(self._alerted, "alert")
        self._alerted = found[-1].seq if found else self._alerted
        if not app.settings.notify.terminal:
            return []
        return [
            alerts.terminal_text(str(e.data.get("title")), str(e.data.get("body")), app.environ)
            for e in found
        ]

    def preview(self, name: str, lines: int = 60, pane_id: str | None = None) -> str:
        """One capture by the pane id the snapshot saw, when known."""
        try:
            with self._app() as app:
                if pane_id:
                    return app.tmux.capture(pane_id, lines)
                return lifecycle.capture(app, name, lines)
        except Exception as exc:  # noqa: BLE001 - a preview never breaks the app
            return f"(no screen: {exc})"

    def events(self, name: str, limit: int = 8) -> list[Event]:
        with self._app() as app:
            agent = app.store.get(name)
            return app.store.events(agent.id, limit) if agent else []

    def git_counts(self, name: str) -> dict[str, object] | None:
        with self._app() as app:
            agent = app.store.get(name)
            return worktrees.agent_git_counts(app, agent) if agent else None

    # ---- operations ------------------------------------------------------------------------------
    def spawn(
        self,
        name: str,
        provider: str,
        cwd: str | None,
        tab: str | None,
        args: tuple[str, ...] = (),
        prompt: str | None = None,
    ) -> str:
        with self._app() as app:
            result = lifecycle.spawn(
                app,
                name,
                provider=provider,
                cwd=cwd,
                args=args,
                prompt=prompt,
                place=lifecycle.Place(tab=tab),
            )
        a = result.agent
        return present.spawned(a.name, a.provider, result.pid, a.home, a.launches == 1)

    def wake(self, name: str) -> str:
        with self._app() as app:
            result = lifecycle.wake(app, name)
        return present.woke(name, result.started, result.pid, result.agent.home)

    def kill(self, name: str) -> str:
        with self._app() as app:
            return present.stopped(name, len(lifecycle.kill(app, name)))

    def park(self, name: str) -> str:
        with self._app() as app:
            return present.parked(wsops.park(app, name))

    def bury(self, name: str) -> str:
        with self._app() as app:
            wsops.bury(app, name)
        return present.buried(name)

    def unbury(self, name: str) -> str:
        with self._app() as app:
            return present.unburied(name, wsops.unbury(app, name))

    def place(self, name: str, tab: str) -> str:
        with self._app() as app:
            placed = wsops.place(app, name, tab)
        return present.placed(name, tab, placed.result.pid, placed.was if placed.moved else None)

    def toggle_pin(self, name: str) -> str:
        with self._app() as app:
            if wsdb.is_pinned(app.store.conn, app.store.require(name).id):
                return present.unpinned(name, wsops.unpin(app, name))
            return present.pinned(name, wsops.pin(app, name))

    def send(self, name: str, text: str) -> str:
        with self._app() as app:
            sent = sending.send(app, name, text)
        if not sent.delivered:
            raise RoostError(present.not_delivered(name, sent.how))
        if sent.failure is not None:
            raise RoostError(present.turn_failed(name, sent.failure))
        return present.delivered(name, sent.how)

    def question(self, name: str) -> Question:
        with self._app() as app:
            return answering.asked(app, name).question

    def answer(self, name: str, choice: str, fingerprint: str) -> str:
        with self._app() as app:
            done = answering.answer(app, name, choice, expect=fingerprint)
        return present.answered(name, done.choice.label, done.status, done.reason, done.held)

    def restore(self) -> str:
        with self._app() as app:
            report = restore_workspace(app)
        if not report.ok:  # `roost restore` exits 1: an error here too
            raise RoostError(report.text().rstrip("\n"))
        return report.text().rstrip("\n")

    def edit_layout(self, tab: str, name: str, edit: str) -> str:
        with self._app() as app:
            wsops.edit_layout(app, tab, name, edit)
        return present.layout_edited(name, tab, edit)

    def balance_tab(self, tab: str) -> str:
        with self._app() as app:
            return present.tab_balanced(tab, len(wsops.tab_balance(app, tab)))

    # ---- remote hosts: the light path (no App: a config read and a SELECT), then ssh ---------
    def changes(self, name: str) -> tuple[Diff, list[Seen]]:
        with self._app() as app:
            return review.diff(app, name), review.comments(app, name)

    def comment(self, name: str, path: str, line: int, text: str) -> str:
        with self._app() as app:
            made = review.comment(app, name, path, line, line, text)
        return review_rules.comment_made(name, made)

    def send_review(self, name: str) -> str:
        with self._app() as app:
            done = review.send(app, name)
        return review_rules.sent_line(name, done.delivered, done.how, len(done.ids), done.left)

    def merge_hunks(self, name: str, picks: list[tuple[str, int, str]]) -> str:
        from roost.merge import operations as merging
        from roost.merge import rules as merge_rules

        chosen = [merge_rules.Pick(path, n, fingerprint) for path, n, fingerprint in picks]
        with self._app() as app:
            return "; ".join(merging.merge(app, name, "hunks", hunks=chosen).said())

    def search(self, query: str) -> list[Hit]:
        from roost.recall import operations as recall

        with self._app() as app:
            return recall.fresh_search(app, query, None, SEARCH_HITS)

    def fork_at(self, ref: str, new: str) -> str:
        from roost.ops import fork
        from roost.recall import operations as recall

        with self._app() as app:
            point = recall.fork_point(app, ref, new)
            a = fork.fork(app, point.name, new, session=point.session).agent
        return f"forked {new} from {ref} ({a.provider})"

    def hosts(self) -> list[str]:
        from roost.hosts import operations as hosts

        return [h.name for h in hosts.every(hosts.reach())]

    def host_view(self, host: str) -> HostView:
        from roost.hosts import operations as hosts

        reach = hosts.reach()
        return hosts.ask(reach, hosts.get(reach, host))

    def remote_attach_argv(self, host: str, name: str) -> list[str]:
        from roost.hosts import operations as hosts

        reach = hosts.reach()
        return hosts.attach_argv(reach, hosts.get(reach, host), ["attach", name])

    # ---- handing the terminal to tmux ---------------------------------------------------------
    def attach_argv(self, name: str) -> list[str]:
        with self._app() as app:
            return lifecycle.attach_plan(app, name)

    def open_tab_argv(self, tab: str) -> list[str]:
        with self._app() as app:
            return tabview.open_tab(app, tab)
