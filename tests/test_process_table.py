"""One set of scenarios for both process tables, the real one (system/procs.py, on real
processes) and the fake one the operations' tests use (tests/fake_procs.py): the fake is held to
what the real one does. Then the operations that stop processes, on the fake one."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
from fake_app import WORLD_START, procs_of
from fake_procs import OTHER_UID, FakeProcesses

from roost.core.clock import ManualClock
from roost.core.errors import RoostError
from roost.core.model import INTENT_RUNNING, Agent
from roost.core.processes import Process, ProcessTable
from roost.ops import lifecycle
from roost.ops.context import App
from roost.system.procs import HOME_TAG, TAG, SystemProcesses
from roost.tmux.fake import FakeTmux

DEADLINE = 10.0


@dataclass
class World:
    """A process table and a way to start processes in it."""

    table: ProcessTable
    home: str
    # start(agent_id, in_a_tree): a process tagged as the agent's; with a child when in_a_tree,
    # returning (root pid, child pid or None)
    start: Callable[[str, bool], tuple[int, int | None]]
    zombie: Callable[[str], int]  # a tagged process that exited and was never reaped


def _wait_for(found: Callable[[], object]) -> object:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        value = found()
        if value:
            return value
        time.sleep(0.01)
    raise AssertionError("not within the deadline")


@pytest.fixture
def real(tmp_path: Path) -> Iterator[World]:
    home = str(tmp_path / f"home-{uuid.uuid4().hex}")  # no other test's processes carry it
    started: list[subprocess.Popen[bytes]] = []

    def popen(agent_id: str, argv: list[str]) -> subprocess.Popen[bytes]:
        env = {**os.environ, TAG: agent_id, HOME_TAG: home}
        env.pop("TMUX", None)
        started.append(subprocess.Popen(argv, env=env))
        return started[-1]

    def start(agent_id: str, in_a_tree: bool) -> tuple[int, int | None]:
        if not in_a_tree:
            return popen(agent_id, ["sleep", "30"]).pid, None
        root = popen(agent_id, ["sh", "-c", "sleep 30 & wait"])
        child = _wait_for(lambda: psutil.Process(root.pid).children())
        assert isinstance(child, list)
        return root.pid, child[0].pid

    def zombie(agent_id: str) -> int:
        proc = popen(agent_id, ["true"])  # this test never waits for it: a zombie
        _wait_for(lambda: psutil.Process(proc.pid).status() == psutil.STATUS_ZOMBIE)
        return proc.pid

    yield World(SystemProcesses(), home, start, zombie)
    for proc in started:
        proc.kill()
        proc.wait()


@pytest.fixture
def fake_world() -> World:
    table = FakeProcesses(FakeTmux(), "/home/roost", ManualClock(WORLD_START))

    def start(agent_id: str, in_a_tree: bool) -> tuple[int, int | None]:
        root = table.add({TAG: agent_id, HOME_TAG: table.home})
        child = table.add(parent=root.pid) if in_a_tree else None
        return root.pid, child.pid if child else None

    def zombie(agent_id: str) -> int:
        return table.add({TAG: agent_id, HOME_TAG: table.home}, zombie=True).pid

    return World(table, table.home, start, zombie)


@pytest.fixture(params=["real", "fake"])
def world_of(request: pytest.FixtureRequest) -> World:
    world = request.getfixturevalue("real" if request.param == "real" else "fake_world")
    assert isinstance(world, World)
    return world


def pids(found: Sequence[Process]) -> set[int]:
    return {p.pid for p in found}


def test_a_snapshot_holds_the_tree_and_the_strays_tagged_as_the_agent(world_of: World) -> None:
    table, home = world_of.table, world_of.home
    root, child = world_of.start("a", True)
    stray, _ = world_of.start("a", False)  # escaped its tree (nohup, setsid)
    other, _ = world_of.start("b", False)
    assert pids(table.snapshot(root, "a", home)) == {root, child, stray}
    assert {f.pid for _p, f in table.tagged(home, "b")} == {other}
    assert {f.agent_id for _p, f in table.tagged(home)} == {"a", "b"}
    assert table.tagged(home + "-elsewhere") == []  # another roost home's are not ours
    assert os.getpid() not in pids(table.snapshot(os.getpid(), "a", home))  # never this roost


def test_kill_tree_ends_them_and_a_gone_pid_is_no_error(world_of: World) -> None:
    table, home = world_of.table, world_of.home
    root, _child = world_of.start("a", True)
    tree = table.snapshot(root, "a", home)
    assert table.kill_tree(tree) == []
    assert table.tagged(home, "a") == []
    assert table.kill_tree(tree) == []  # gone already: nothing to signal, nothing survived


def test_a_zombie_is_dead_to_the_table(world_of: World) -> None:
    table, home = world_of.table, world_of.home
    zombie = world_of.zombie("a")
    assert table.tagged(home, "a") == []
    assert table.kill_tree(table.snapshot(zombie, "a", home)) == []


def test_an_unknown_pid_has_no_tree() -> None:
    assert SystemProcesses().snapshot(2**22 + 5, "nobody", "/nowhere") == []
    table = FakeProcesses(FakeTmux(), "/h", ManualClock(WORLD_START))
    assert table.snapshot(2**22 + 5, "nobody", "/h") == []
    assert SystemProcesses().open_files(2**22 + 5) == table.open_files(2**22 + 5) == []


# ---- the operations that stop processes, on the fake table ------------------------------
def spawn(app: App, name: str) -> Agent:
    return lifecycle.spawn(
        app, name, provider="command", cwd=str(app.paths.home), args=("sh",)
    ).agent


def test_kill_stops_an_escaped_child_deaf_to_sigterm_waiting_on_the_clock(
    app: App, fake: FakeTmux, clock: ManualClock
) -> None:
    agent = spawn(app, "w1")
    table = procs_of(app)
    pane = fake.pane_of(agent.id)
    deaf = table.add(parent=pane.pid, deaf=True)
    assert sorted(lifecycle.kill(app, "w1")) == sorted([pane.pid, deaf.pid])
    assert (deaf.pid, 15) in table.signals and (deaf.pid, 9) in table.signals
    assert not deaf.alive and pane.dead and pane.dead_status == 143
    assert 3.0 in clock.slept  # the grace was the clock's


def test_kill_refuses_to_call_a_process_it_cannot_signal_stopped(app: App, fake: FakeTmux) -> None:
    agent = spawn(app, "w1")
    table = procs_of(app)
    theirs = table.add(parent=fake.pane_of(agent.id).pid, uid=OTHER_UID)  # setuid, say
    with pytest.raises(RoostError, match=f"processes \\[{theirs.pid}\\] survived SIGKILL"):
        lifecycle.kill(app, "w1")
    assert theirs.alive and app.store.require("w1").intent == INTENT_RUNNING


def test_a_wake_first_stops_what_a_dead_server_left_running(app: App, fake: FakeTmux) -> None:
    agent = spawn(app, "w1")
    table = procs_of(app)
    pane = fake.pane_of(agent.id)
    left = table.add(
        {TAG: agent.id, HOME_TAG: str(app.paths.home), "TMUX": "/gone/socket,77,0"}, deaf=True
    )
    fake.exit(pane.id, 129)  # the server died; what was deaf to its hangup lives on
    assert lifecycle.wake(app, "w1").started
    assert not left.alive
    stopped = [e for e in app.store.events(agent.id) if e.kind == "orphans-stopped"]
    assert stopped and stopped[0].data["pids"] == [left.pid]


def test_a_kill_asked_from_inside_the_agent_is_handed_outside(app: App, fake: FakeTmux) -> None:
    agent = spawn(app, "w1")
    table = procs_of(app)
    table.own.add(fake.pane_of(agent.id).pid)  # this roost runs in the agent's pane
    assert lifecycle.handed_over(app, "w1", ["kill", "w1"])
    ((argv, env),) = table.outside
    assert argv[-2:] == ["kill", "w1"] and TAG not in env
    with pytest.raises(RoostError, match="from inside its own processes"):
        lifecycle.kill(app, "w1")
    assert table.signals == []


def test_what_runs_outside_works_in_no_ones_folder(tmp_path: Path) -> None:
    """`roost _notify` and the like, started from an agent's hook in its folder, must not keep
    that folder busy (a worktree `rm` would refuse to remove)."""
    out = tmp_path / "where"
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        script = 'pwd > "$1.tmp" && mv "$1.tmp" "$1"'  # whole once it is there
        SystemProcesses().run_outside(["sh", "-c", script, "sh", str(out)], {})
    finally:
        os.chdir(here)
    deadline = time.monotonic() + DEADLINE
    while not out.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert out.read_text() == "/\n"
