"""Issue 20, "Keep such facts in the store": the `in-tree` marker hook.sh reads is a copy of the
store's orchestration links, written again at every launch, so a home that lost it (an import
into a fresh home writes none) gets it back at the next wake. The fake tmux."""

from __future__ import annotations

from pathlib import Path

from roost.ops import lifecycle
from roost.ops.context import App
from roost.providers.mcpwire import IN_TREE
from roost.tmux.fake import FakeTmux


def test_a_lost_in_tree_marker_comes_back_at_the_next_launch(app: App, fake: FakeTmux) -> None:
    def spawn(name: str, orchestrated_by: str | None = None) -> str:
        return lifecycle.spawn(
            app,
            name,
            provider="command",
            cwd=str(app.paths.home),
            args=("sh",),
            place=lifecycle.Place(orchestrated_by=orchestrated_by),
        ).agent.id

    lead, kid, alone = spawn("lead"), spawn("kid", orchestrated_by="lead"), spawn("alone")
    marker = {i: Path(app.paths.agent_dir(i)) / IN_TREE for i in (lead, kid, alone)}
    assert marker[lead].exists() and marker[kid].exists() and not marker[alone].exists()
    for name in ("lead", "kid", "alone"):
        lifecycle.kill(app, name)
    for path in marker.values():
        path.unlink(missing_ok=True)  # as in a fresh home an export was imported into
    lifecycle.wake(app, "lead")  # a parent: it has children in the store
    assert marker[lead].exists() and not marker[kid].exists()
    marker[lead].unlink()
    lifecycle.wake(app, "kid")  # a child: both ends of its link
    assert marker[kid].exists() and marker[lead].exists()
    lifecycle.wake(app, "alone")
    assert not marker[alone].exists()
