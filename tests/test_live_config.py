"""Live config (issue 36 point 5, begun): the running service reads config.toml again when it
changes and tells the components that react to it. A `[budget] max_live` written while
agents idle is applied at once; before, it waited for the next turn's end (or a restart)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_stop_intent import IDLE, configure, query, spawn, statuses

from conftest import Env

pytestmark = pytest.mark.tmux


def test_a_max_live_written_while_the_service_runs_is_applied_without_a_turn(world: Env) -> None:
    configure(world)
    world.start_service()
    names = ["a", "b", "c"]
    spawn(world, names, IDLE)
    world.wait_for(
        lambda: all(statuses(world).get(n) == "idle" for n in names), 60, "every agent idle"
    )
    configure(world, max_live=1)
    hibernated = world.wait_for(
        lambda: (
            (found := [n for n, s in statuses(world).items() if s == "hibernated"])
            and len(found) == 2
            and found
        ),
        30,
        "two agents hibernated by the new max_live",
    )
    assert len(set(hibernated)) == 2
    assert sum(statuses(world)[n] == "idle" for n in names) == 1


def test_a_broken_edit_is_refused_with_an_alert_and_the_last_good_settings_stay(
    world: Env,
) -> None:
    """An edit with a problem keeps what the service runs by and tells the person once: an
    event and an alert on every channel, with the file's line and key (the CLI's commands
    refuse the file meanwhile, each with that line). A fixed file is applied at once."""
    configure(world, max_live=3)
    world.start_service()
    names = ["a", "b", "c"]
    spawn(world, names, IDLE)
    world.wait_for(
        lambda: all(statuses(world).get(n) == "idle" for n in names), 60, "every agent idle"
    )
    config = world.home / "config.toml"
    good = config.read_text()
    config.write_text(good.replace("max_live = 3", 'max_live = "1"'))
    refused = world.wait_for(
        lambda: [e for e in events(world) if e["kind"] == "config-refused"], 30, "the refusal"
    )
    assert 'budget.max_live must be a whole number of at least 1, not "1"' in refused[0]["reason"]
    alert = world.wait_for(
        lambda: [e for e in events(world) if e["kind"] == "alert"], 30, "its alert"
    )
    assert alert[0]["title"] == "roost: config.toml was refused"
    assert "budget.max_live" in alert[0]["body"]
    assert alert[0]["body"].endswith("the last good settings stay in force")
    assert all(statuses(world)[n] == "idle" for n in names)  # max_live 3 holds
    config.write_text(good.replace("max_live = 3", "max_live = 1"))
    world.wait_for(
        lambda: sum(s == "hibernated" for s in statuses(world).values()) == 2,
        60,
        "two agents hibernated by the fixed file's max_live",
    )
    said = query(world, "SELECT at, kind, detail FROM events WHERE agent_name = 'config.toml'")
    kinds = [kind for _, kind, _ in said]
    # the rows in full: a second config-applied was seen once on a loaded CI machine
    runs = service_runs(world)
    assert kinds == ["config-refused", "alert", "config-applied"], (said, runs)


def service_runs(world: Env) -> list[tuple[object, ...]]:
    return [tuple(r) for r in query(world, "SELECT * FROM service_runs ORDER BY id")]


def events(world: Env) -> list[dict[str, Any]]:
    rows = query(world, "SELECT agent_name, kind, detail FROM events ORDER BY id")
    return [{"agent": name, "kind": kind, **json.loads(detail)} for name, kind, detail in rows]


def test_a_tmux_conf_edit_is_sourced_live_and_a_broken_one_refused(world: Env) -> None:
    """tmux.conf in ROOST_HOME is sourced into roost's running server when it changes (before,
    at the next agent's start); one with a line tmux rejects is not sourced, and said once."""
    configure(world)
    world.start_service()
    spawn(world, ["a"], IDLE)  # roost's tmux server runs
    user_conf = world.home / "tmux.conf"
    user_conf.write_text("set-option -g @roost-live yes\n")
    world.wait_for(
        lambda: world.tmux("show-options", "-gv", "@roost-live", check=False).strip() == "yes",
        30,
        "the edit sourced into the running server",
    )
    user_conf.write_text("set-option -g @roost-live no\nno-such-command here\n")
    refused = world.wait_for(
        lambda: [
            e for e in events(world) if e["agent"] == "tmux.conf" and e["kind"] == "config-refused"
        ],
        30,
        "the refusal",
    )
    assert "no-such-command" in refused[0]["reason"]
    world.wait_for(
        lambda: [e for e in events(world) if e["agent"] == "tmux.conf" and e["kind"] == "alert"],
        30,
        "its alert",
    )
    assert world.tmux("show-options", "-gv", "@roost-live").strip() == "yes"  # nothing sourced
