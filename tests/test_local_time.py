"""Times for people in their own zone ($TZ); ISO 8601 with the offset for scripts (issue 11)."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta

import pytest

from roost.system.clock import local_zone

from conftest import Env


def test_the_zone_comes_from_tz_when_it_names_one() -> None:
    zone = local_zone({"TZ": ":Asia/Kolkata"})
    assert datetime(2026, 1, 1, tzinfo=zone).utcoffset() == timedelta(hours=5, minutes=30)
    assert local_zone({"TZ": "Europe/Berlin"}) is not None
    # not a zone name (a POSIX rule, or nothing): the process's own offset, never an error
    assert local_zone({"TZ": "no/such-zone"}).utcoffset(None) is not None
    assert local_zone({}).utcoffset(None) is not None


@pytest.mark.tmux
def test_events_show_local_time_and_json_keeps_the_offset(world: Env) -> None:
    world.roost("spawn", "alpha", "--cwd", str(world.tmp / "work"))
    india = {"TZ": "Asia/Kolkata"}
    stored = json.loads(world.roost("events", "alpha", "--json", env=india).stdout)
    first = datetime.fromisoformat(stored[0]["at"])
    assert first.utcoffset() == timedelta(0)  # ISO 8601 with its offset, whatever $TZ says
    local = first + timedelta(hours=5, minutes=30)
    line = world.roost("events", "alpha", env=india).stdout.splitlines()[0]
    assert line.startswith(local.strftime("%Y-%m-%d %H:%M:%S") + "  alpha  ")
    utc = world.roost("events", "alpha", env={"TZ": "UTC"}).stdout.splitlines()[0]
    assert utc.startswith(first.strftime("%Y-%m-%d %H:%M:%S") + "  alpha  ")
    assert not re.search(r"\+\d\d:\d\d", line)  # for people: no offset noise


@pytest.mark.tmux
def test_ls_json_times_are_iso_8601_with_an_offset(world: Env) -> None:
    world.roost("spawn", "alpha", "--cwd", str(world.tmp / "work"))
    world.wait_for(lambda: world.ls()["alpha"]["status"] == "idle", what="idle")
    agent = json.loads(world.roost("ls", "--json", env={"TZ": "Asia/Kolkata"}).stdout)[0]
    for key in ("created_at", "started_at", "last_active_at", "status_since"):
        assert datetime.fromisoformat(agent[key]).utcoffset() == timedelta(0), key
