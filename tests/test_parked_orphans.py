"""A parked agent deaf to SIGHUP outlives a tmux server's death (issue 18 item 15): `ls` said
`hibernated` while it kept working unseen. Restore stops it, as it stops a tile's before
starting the tile again."""

from __future__ import annotations

import pytest
from test_orphans import agent_processes, outlive_the_server, spawn_deaf

from conftest import Env

pytestmark = pytest.mark.tmux


def test_restore_stops_what_a_parked_agent_left_running(world: Env) -> None:
    agent = spawn_deaf(world, "alpha", "--detached")  # parked: hibernated at the next restore
    tile = spawn_deaf(world, "beta")
    orphan = outlive_the_server(world, agent)
    world.roost("restore")
    assert world.wait_for(
        lambda: not agent_processes(str(world.home), agent["id"]),
        what="the parked agent's leftover stopped",
    ), orphan
    assert world.ls()["alpha"]["state"] == "hibernated"
    assert len(agent_processes(str(world.home), tile["id"])) == 1  # the tile: started once
    events = world.roost("events", "alpha").stdout
    assert "orphans-stopped" in events, events
