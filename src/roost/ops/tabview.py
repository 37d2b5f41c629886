"""`roost open TAB`: a plain tmux view of a tab, one pane per tile in the stored layout, each
pane a tmux client attached to that agent's home. The agents stay in their homes; the view lives
on a server of its own (`<socket>-view`), so no client is ever nested inside its own server.
"""

from __future__ import annotations

from roost.ops import lifecycle
from roost.store import workspace as wsdb
from roost.core import workspace as ws
from roost.ops.context import App
from roost.core.errors import RoostError
from roost.core.reconcile import agent_panes
from roost.tmux.client import Tmux


def view_tmux(app: App) -> Tmux:
    return Tmux(f"{app.tmux.socket}-view", binary=app.tmux.binary, environ=app.environ)


def open_tab(app: App, tab: str, width: int = 200, height: int = 50) -> list[str]:
    """Wake the tab's tiles, (re)build its view session, and return the argv that attaches."""
    t = wsdb.require_tab(app.store.conn, tab)
    if t.layout is None:
        raise RoostError(f"tab {tab} has no tiles", code=2)
    names = {a.id: a.name for a in app.store.agents()}
    sessions: dict[str, str] = {}
    for agent_id in ws.leaves(t.layout):
        lifecycle.wake(app, names[agent_id])  # wake on use
    panes = agent_panes(app.tmux.list_panes())
    for agent_id in ws.leaves(t.layout):
        pane = panes[agent_id]
        app.tmux.select_window(pane.window_id)
        sessions[agent_id] = pane.session_id

    def client(agent_id: str) -> list[str]:
        # env -u TMUX: the view pane's own $TMUX points at the view server
        return ["env", "-u", "TMUX", *app.tmux.argv("attach-session", "-t", sessions[agent_id])]

    view = view_tmux(app)
    name = f"view-{tab}"
    try:
        view.run("kill-session", "-t", f"={name}")
    except RoostError:
        pass  # no such view yet
    first = ws.leaves(t.layout)[0]
    pane = view.run("new-session", "-d", "-s", name, "-x", str(width), "-y", str(height),
                    "-P", "-F", "#{pane_id}", *client(first)).strip()
    view.run("set-option", "-t", name, "status-left", f"roost tab {tab} ")

    def build(node: ws.Node, pane_id: str) -> None:
        if "leaf" in node:
            return
        first_b = ws.leaves(node["b"])[0]
        percent = max(10, min(90, round((1 - node["ratio"]) * 100)))
        flag = "-h" if node["split"] == "v" else "-v"
        pane_b = view.run("split-window", flag, "-t", pane_id, "-l", f"{percent}%", "-P", "-F",
                          "#{pane_id}", *client(first_b)).strip()
        build(node["a"], pane_id)
        build(node["b"], pane_b)

    build(t.layout, pane)
    return view.argv("attach-session", "-t", f"={name}")
