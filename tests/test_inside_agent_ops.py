"""A stop asked from inside the agent it stops, by a path that cannot hand it over (the MCP
server an agent runs, the TUI, a descendant in `kill --tree`): refused with one line before
anything changes, never "was not running" with nothing stopped, nor a removal cut off half-way
(issue 19, item 4). The fake tmux; the fake process table puts this roost in the agent's pane."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fake_app import procs_of

from roost.core.errors import RoostError
from roost.ops import lifecycle
from roost.ops.context import App
from roost.tmux.fake import FakeTmux

STOPS: dict[str, Callable[[App, str], object]] = {
    "kill": lifecycle.kill,
    "rm": lifecycle.rm,
    "hibernate": lifecycle.hibernate,
}


@pytest.mark.parametrize("verb", sorted(STOPS))
def test_a_stop_of_the_agent_running_it_is_refused_and_changes_nothing(
    app: App, fake: FakeTmux, verb: str
) -> None:
    agent = lifecycle.spawn(
        app, "me", provider="command", cwd=str(app.paths.home), args=("sh",)
    ).agent
    pane = fake.pane_of(agent.id)
    procs_of(app).own.add(pane.pid)  # the agent's process runs this very operation
    before = app.store.require("me")
    with pytest.raises(RoostError) as refused:
        STOPS[verb](app, "me")
    assert str(refused.value) == (
        f"cannot {verb} me from inside its own processes (this "
        f"command runs in it): run roost {verb} me from elsewhere"
    )
    assert app.store.require("me") == before
    assert not pane.dead and pane.window_id in fake.windows
    assert [e.kind for e in app.store.events(agent.id)][-1] == "started"
    assert procs_of(app).signals == []  # nothing was signalled


def test_a_stop_of_another_agent_is_not_refused(app: App, fake: FakeTmux) -> None:
    lifecycle.spawn(app, "other", provider="command", cwd=str(app.paths.home), args=("sh",))
    assert lifecycle.kill(app, "other")
    assert app.store.require("other").intent == "stopped"
