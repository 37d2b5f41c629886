"""The fake tmux keeps to the real one: each scenario runs against `tmux.client.Tmux` on a private
server and against `tmux.fake.FakeTmux`, and must see the same things. The fake's make-believe
programs are driven by the test (`exit`, `set_screen`); the real ones are `sh` scripts."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from roost.tmux.fake import FakeTmux
from roost.tmux.protocol import DuplicateSession, TmuxClient, TmuxError

from conftest import Env


@dataclass
class Side:
    """One tmux and how its programs are made to show a screen or exit."""

    tmux: TmuxClient
    world: Env | None  # the real server's test world; None for the fake

    def program(self, screen: str = "", status: int | None = None) -> list[str]:
        """argv of a program that shows `screen`, then exits with `status` (or runs on)."""
        end = f"exit {status}" if status is not None else "exec sleep 60"
        return ["sh", "-c", f"printf %s {shlex.quote(screen)}; {end}"]

    def settle(self, pane: str, screen: str = "", status: int | None = None) -> None:
        """Until the program has shown its screen (and exited)."""
        if isinstance(self.tmux, FakeTmux):
            self.tmux.set_screen(pane, screen)
            if status is not None:
                self.tmux.exit(pane, status)
            return
        assert self.world is not None
        self.world.wait_for(
            lambda: self._settled(pane, screen, status),
            what=f"pane {pane} to show {screen!r} and exit {status}",
        )

    def _settled(self, pane: str, screen: str, status: int | None) -> bool:
        found = next((p for p in self.tmux.list_panes() if p.pane_id == pane), None)
        if found is None:
            return False
        if status is not None:
            return found.dead and found.dead_status == status
        return screen.strip() in self.tmux.capture(pane, 10)


@pytest.fixture(params=[pytest.param("real", marks=pytest.mark.tmux), "fake"])
def side(request: pytest.FixtureRequest) -> Iterator[Side]:
    if request.param == "fake":
        yield Side(FakeTmux(), None)
        return
    from roost.tmux.client import Tmux

    world: Env = request.getfixturevalue("world")
    yield Side(Tmux(world.socket, environ=world.env), world)


KEEPER = ["sh", "-c", "exec sleep 60"]


def test_no_server_lists_no_panes(side: Side) -> None:
    assert side.tmux.list_panes() == []


def test_a_home_is_one_keeper_pane_and_its_name_is_taken(side: Side) -> None:
    session, keeper = side.tmux.new_home("alpha", "/tmp", KEEPER, {})
    [pane] = side.tmux.list_panes()
    assert (
        pane.pane_id,
        pane.session_id,
        pane.session_name,
        pane.is_keeper,
        pane.agent_id,
        pane.dead,
    ) == (keeper, session, "alpha", True, "", False)
    with pytest.raises(DuplicateSession):
        side.tmux.new_home("alpha", "/tmp", KEEPER, {})


def test_an_agent_window_is_tagged_and_its_options_read_back(side: Side) -> None:
    session, _ = side.tmux.new_home("h", "/tmp", KEEPER, {})
    window, pane, pid = side.tmux.new_window(session, "a", "/tmp", side.program("> "), "id-a")
    rows = {p.pane_id: p for p in side.tmux.list_panes()}
    assert rows[pane].agent_id == "id-a" and rows[pane].window_id == window
    assert rows[pane].pid == pid and not rows[pane].is_keeper
    assert side.tmux.window_option(window, "@roost_state") == "running"
    side.tmux.set_window_option(window, "@roost_state", "stopped")
    assert side.tmux.window_option(window, "@roost_state") == "stopped"
    assert side.tmux.window_option(window, "@roost_unset") == ""


def test_a_program_that_exits_leaves_a_dead_pane_with_its_status(side: Side) -> None:
    session, _ = side.tmux.new_home("h", "/tmp", KEEPER, {})
    window, pane, _ = side.tmux.new_window(session, "a", "/tmp", side.program("bye", 3), "id-a")
    side.settle(pane, "bye", 3)
    dead = next(p for p in side.tmux.list_panes() if p.pane_id == pane)
    assert (dead.dead, dead.dead_status) == (True, 3)
    pid = side.tmux.respawn(pane, window, "/tmp", side.program("again"))
    side.settle(pane, "again")
    alive = next(p for p in side.tmux.list_panes() if p.pane_id == pane)
    assert (alive.dead, alive.dead_status, alive.pid) == (False, None, pid)


def test_respawning_a_live_pane_is_refused(side: Side) -> None:
    session, _ = side.tmux.new_home("h", "/tmp", KEEPER, {})
    window, pane, _ = side.tmux.new_window(session, "a", "/tmp", side.program("> "), "id-a")
    with pytest.raises(TmuxError):
        side.tmux.respawn(pane, window, "/tmp", side.program("> "))


def test_capture_drops_trailing_blank_lines_and_keeps_the_last_ones(side: Side) -> None:
    session, _ = side.tmux.new_home("h", "/tmp", KEEPER, {})
    _, pane, _ = side.tmux.new_window(
        session, "a", "/tmp", side.program("one\ntwo\nthree\n\n"), "id-a"
    )
    side.settle(pane, "one\ntwo\nthree\n\n")
    assert side.tmux.capture(pane, 2) == "two\nthree\n"
    assert side.tmux.capture(pane, 10).rstrip("\n").endswith("one\ntwo\nthree")


def test_killing_the_last_window_ends_the_session_and_a_gone_window_reads_empty(side: Side) -> None:
    session, _ = side.tmux.new_home("h", "/tmp", KEEPER, {})
    window, _, _ = side.tmux.new_window(session, "a", "/tmp", side.program("> "), "id-a")
    side.tmux.kill_window(window)
    assert side.tmux.window_option(window, "@roost_state") == ""
    assert [p.agent_id for p in side.tmux.list_panes()] == [""]  # the keeper stays
    side.tmux.kill_session(session)
    assert side.tmux.list_panes() == []


def test_capture_many_leaves_out_a_pane_that_is_gone(side: Side) -> None:
    session, _ = side.tmux.new_home("h", "/tmp", KEEPER, {})
    _, first, _ = side.tmux.new_window(session, "a", "/tmp", side.program("first"), "id-a")
    window, second, _ = side.tmux.new_window(session, "b", "/tmp", side.program("second"), "id-b")
    side.settle(first, "first")
    side.settle(second, "second")
    side.tmux.kill_window(window)
    screens = side.tmux.capture_many([first, second], "@@marker@@")
    assert list(screens) == [first] and "first" in screens[first]
