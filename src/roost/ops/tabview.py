"""`roost open TAB`: a plain tmux view of a tab, one pane per tile in the stored layout, each
pane a tmux client attached to that agent's home. The agents stay in their homes; the view lives
on a server of its own (`<socket>-view`), so no client is ever nested inside its own server.
"""

from __future__ import annotations

from roost.core import workspace as ws
from roost.core.errors import RoostError
from roost.core.reconcile import agent_panes
from roost.ops import holding, lifecycle
from roost.ops.context import App
from roost.store import workspace as wsdb
from roost.tmux import view


def open_tab(app: App, tab: str, width: int = 200, height: int = 50) -> list[str]:
    """Wake the tab's tiles, (re)build its view session, and return the argv that attaches."""
    t = wsdb.require_tab(app.store.conn, tab)
    if t.layout is None:
        raise RoostError(f"tab {tab} has no tiles", code=2)
    names = {a.id: a.name for a in app.store.agents()}
    sessions: dict[str, str] = {}
    watch = holding.Watch(app)  # the starts are watched together, not one after the other
    for agent_id in ws.leaves(t.layout):
        woken = lifecycle.wake(app, names[agent_id], hold=False)  # wake on use
        if woken.started:
            watch.add(woken.agent)
    watch.settle()  # one that died at once is failed with its reason; its tile shows its screen
    panes = agent_panes(app.tmux.list_panes())
    for agent_id in ws.leaves(t.layout):
        pane = panes[agent_id]
        app.tmux.select_window(pane.window_id)
        sessions[agent_id] = pane.session_id

    def client(agent_id: str) -> list[str]:
        # env -u TMUX: the view pane's own $TMUX points at the view server
        return ["env", "-u", "TMUX", *app.tmux.attach_argv(sessions[agent_id])]

    return view.build(
        app.tmux.view_client(), f"view-{tab}", f"roost tab {tab} ", t.layout, client, width, height
    )
