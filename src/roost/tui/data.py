"""Where the TUI's data comes from and where its actions go: the same code as the CLI.

`LiveSource` opens a fresh roost context per call, so it can run on Textual's worker threads
(an SQLite connection belongs to the thread that opened it). Tests and snapshots swap in a
source with canned data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from roost.core.observation import Observation


@dataclass
class Snapshot:
    items: list[Observation] = field(default_factory=list)
    tab_tiles: list[tuple[str, list[str]]] = field(default_factory=list)
    pins: list[str] = field(default_factory=list)
    server_running: bool = True
    would_start: list[str] = field(default_factory=list)  # what a restore would bring back
    layouts: dict[str, dict | None] = field(default_factory=dict)  # tab -> tree of names


def _names_tree(node: dict | None, names: dict[str, str]) -> dict | None:
    if node is None:
        return None
    if "leaf" in node:
        return {"leaf": names.get(node["leaf"], node["leaf"])}
    return {**node, "a": _names_tree(node["a"], names), "b": _names_tree(node["b"], names)}


class LiveSource:
    def _app(self):  # noqa: ANN202
        from roost.ops.context import open_app

        return open_app()

    def snapshot(self) -> Snapshot:
        from roost.core import workspace as ws
        from roost.ops import observe
        from roost.store import workspace as wsdb

        app = self._app()
        try:
            items = observe.refresh(app)
            workspace = wsdb.load(app.store.conn)
            names = {o.agent.id: o.agent.name for o in items}
            running = [o.agent.id for o in items if o.alive]
            plan = ws.plan_restore(workspace, running)
            return Snapshot(
                items=items,
                tab_tiles=[(t.name, [names[a] for a in ws.leaves(t.layout) if a in names])
                           for t in workspace.tabs],
                pins=[names[p] for p in workspace.pins if p in names],
                server_running=any(o.pane is not None for o in items),
                would_start=[names[a] for a in plan.start if a in names],
                layouts={t.name: _names_tree(t.layout, names) for t in workspace.tabs},
            )
        finally:
            app.close()

    def preview(self, name: str, lines: int = 60, pane_id: str | None = None) -> str:
        """The agent's last lines: one capture by the pane id the snapshot saw, when known."""
        from roost.ops import lifecycle

        app = self._app()
        try:
            if pane_id:
                return app.tmux.capture(pane_id, lines)
            return lifecycle.capture(app, name, lines)
        except Exception as exc:  # noqa: BLE001 - a preview never breaks the app
            return f"(no screen: {exc})"
        finally:
            app.close()

    def events(self, name: str, limit: int = 8) -> list[dict]:
        app = self._app()
        try:
            agent = app.store.get(name)
            return app.store.events(agent.id, limit) if agent else []
        finally:
            app.close()

    def act(self, action: str, name: str | None = None, **kw: object) -> str:
        """Run one action by name; returns a line for the user. Raises RoostError on failure."""
        from roost.ops import lifecycle
        from roost.ops import workspace as wsops
        from roost.ops.restore import restore
        from roost.ops.send import send
        from roost.store import workspace as wsdb

        app = self._app()
        try:
            if action == "wake":
                r = lifecycle.wake(app, name)
                return f"woke {name}" if r.started else f"{name} is already running"
            if action == "kill":
                lifecycle.kill(app, name)
                return f"stopped {name}"
            if action == "park":
                wsops.park(app, name)
                return f"parked {name}"
            if action == "bury":
                wsops.bury(app, name)
                return f"buried {name}"
            if action == "unbury":
                tab = wsops.unbury(app, name)
                return f"{name} is back in tab {tab}" if tab else f"{name} is parked"
            if action == "pin":
                agent = app.store.require(name)
                pinned = wsdb.is_pinned(app.store.conn, agent.id)
                (wsops.unpin if pinned else wsops.pin)(app, name)
                return f"unpinned {name}" if pinned else f"pinned {name}"
            if action == "send":
                sent = send(app, name, str(kw["text"]))
                return f"delivered to {name}" if sent.delivered else f"not delivered: {sent.how}"
            if action == "restore":
                return restore(app).text().strip()
            if action == "spawn":
                place = lifecycle.Place(tab=str(kw.get("tab") or "") or None)
                r = lifecycle.spawn(app, name, provider=str(kw.get("provider") or "claude"),
                                cwd=str(kw.get("cwd") or "") or None, place=place)
                return f"spawned {name} (pid {r.pid})"
            if action == "layout":
                wsops.edit_layout(app, str(kw["tab"]), name, str(kw["edit"]))
                return f"{kw['edit']} {name}"
            raise ValueError(f"unknown action {action}")
        finally:
            app.close()

    def attach_argv(self, name: str) -> list[str]:
        from roost.ops import lifecycle

        app = self._app()
        try:
            return lifecycle.attach_plan(app, name)
        finally:
            app.close()

    def open_tab_argv(self, tab: str) -> list[str]:
        from roost.ops import tabview

        app = self._app()
        try:
            return tabview.open_tab(app, tab)
        finally:
            app.close()
