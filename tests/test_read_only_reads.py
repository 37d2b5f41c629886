"""`ls`, `events` and `export` only read (issue 18 item 15): on a read-only or full filesystem
they still answer; a command that writes is still refused in one line (test_store_damage)."""

from __future__ import annotations

import json
import os

import pytest
from test_store_damage import can_mount, digest, full_home, read_only

from conftest import Env

pytestmark = pytest.mark.tmux

READS = (("ls",), ("ls", "--json"), ("events",), ("events", "keep", "--json"), ("export",))


def assert_reads_work(world: Env) -> None:
    for args in READS:
        proc = world.roost(*args, check=False)
        assert proc.returncode == 0, (args, proc.stderr)
    assert json.loads(world.roost("ls", "--json").stdout)[0]["name"] == "keep"
    assert [a["name"] for a in json.loads(world.roost("export").stdout)["agents"]] == ["keep"]
    assert "spawned" in world.roost("events", "keep").stdout


@pytest.mark.skipif(not can_mount(), reason="root without mount: modes do not bind root")
def test_reads_work_on_a_read_only_roost_home(world: Env) -> None:
    world.roost("spawn", "keep", "--cwd", str(world.tmp / "work"))
    db = world.home / "roost.db"
    before = digest(db)
    with read_only(world.home):
        assert_reads_work(world)
        refused = world.roost("kill", "keep", check=False)
        assert refused.returncode == 3 and "read-only" in refused.stderr, refused.stderr
    assert digest(db) == before


@pytest.mark.skipif(os.geteuid() != 0, reason="a full filesystem is a small tmpfs: needs root")
def test_reads_work_on_a_full_disk(world: Env) -> None:
    with full_home(world):
        assert_reads_work(world)
