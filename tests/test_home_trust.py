"""ROOST_HOME's own folders and every folder above it (issue 18 items 10 and 11): a home inside a
folder others may write to (not sticky) could be renamed away and replaced by someone else, so it
is refused the way OpenSSH refuses such a ~/.ssh; a home that is not a folder is one line."""

from __future__ import annotations

import json
import os

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux


def test_a_home_inside_a_folder_others_may_write_is_refused_and_doctor_names_it(world: Env) -> None:
    shared = world.tmp / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # world-writable, not sticky: anyone may rename roost's home away
    home = shared / "roost"
    env = {"ROOST_HOME": str(home)}
    for args in (("spawn", "a", "--cwd", str(world.tmp / "work")), ("ls",), ("ls", "--json")):
        refused = world.roost(*args, check=False, env=env)
        assert refused.returncode == 2, (args, refused.stdout, refused.stderr)
        assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
        assert str(shared) in refused.stderr and "others" in refused.stderr, refused.stderr
    assert not home.exists()  # nothing made there
    assert world.tmux("list-sessions", check=False) == ""
    report = json.loads(world.roost("doctor", "--json", check=False, env=env).stdout)
    check = next(c for c in report["checks"] if c["name"] == "roost home")
    assert not check["ok"] and str(shared) in check["detail"], check


def test_a_home_inside_a_sticky_shared_folder_is_fine(world: Env) -> None:
    shared = world.tmp / "sticky"
    shared.mkdir()
    shared.chmod(0o1777)  # like /tmp: others may add entries but not rename ours
    env = {"ROOST_HOME": str(shared / "roost")}
    world.roost("spawn", "a", "--cwd", str(world.tmp / "work"), env=env)
    out = world.roost("ls", env=env).stdout
    assert "a" in out.split()


@pytest.mark.parametrize("target", ["file", "/dev/null", "/proc/self"])
def test_a_home_that_is_not_a_folder_is_one_line(world: Env, target: str) -> None:
    if target == "file":
        target = str(world.tmp / "a-file")
        with open(target, "w") as fh:
            fh.write("x")
    env = {"ROOST_HOME": target}
    for args in (("ls",), ("spawn", "a", "--cwd", str(world.tmp / "work")), ("doctor",)):
        refused = world.roost(*args, check=False, env=env)
        assert refused.returncode != 0, (args, refused.stdout)
        assert "Traceback" not in refused.stderr, refused.stderr
        if args[0] != "doctor":
            assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
            assert "ROOST_HOME" in refused.stderr, refused.stderr
        else:
            assert "BAD  roost home" in refused.stdout, refused.stdout
    assert os.path.exists("/dev/null")
