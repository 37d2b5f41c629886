"""tmux below 3.5 built with libutempter (Debian's 3.3a) loses the SIGCHLD of a child that
exits while a pane is being made or destroyed (tmux issue #311): the pane's process stays an
unreaped zombie, and its pane-died hook (roost's exit log, restart policy, notices) never runs.
Seen in CI: a window whose `sh -c "exit 3"` died at once told its hook only 60 s later, when the
keeper's own exit brought the next SIGCHLD. The client nudges the server (tmux/client.py's
reap_missed) after every pane it starts or destroys; the loss itself comes too rarely to be made
on purpose, so these check that each such command is followed by the nudge."""

from __future__ import annotations

import os
import signal

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux


def test_every_pane_started_or_destroyed_is_followed_by_a_sigchld_to_the_server(
    world: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    from roost.tmux import client as tmux_client

    sent: list[tuple[int, int]] = []
    monkeypatch.setattr(os, "kill", lambda pid, sig: sent.append((pid, sig)))
    tmux = tmux_client.Tmux(world.socket, environ=world.env)
    cwd = str(world.tmp / "work")
    session, _keeper = tmux.new_home("h", cwd, ["sleep", "60"], {})
    server = int(world.tmux("display-message", "-p", "#{pid}").strip())
    nudge = (server, signal.SIGCHLD)
    assert sent == [nudge]
    tmux.refresh_keeper(session)  # killed and started again
    assert sent == [nudge] * 2
    del sent[:]

    window, pane, _pid = tmux.new_window(session, "w", cwd, ["sh", "-c", "exit 3"], "id-1")
    assert sent == [nudge]
    world.wait_for(lambda: world.tmux("display-message", "-p", "-t", pane, "#{pane_dead}") == "1\n")
    assert tmux.respawn(pane, window, cwd, ["sleep", "60"]) > 0
    assert sent == [nudge] * 2
    tmux.kill_window(window)
    assert sent == [nudge] * 3
    tmux.kill_session(session)  # the last: the server ends (the nudge finds no one, quietly)
    assert sent == [nudge] * 4


def test_the_services_pane_started_is_followed_by_a_sigchld_too(
    world: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    from roost.tmux import client as tmux_client
    from roost.tmux import service

    sent: list[tuple[int, int]] = []
    monkeypatch.setattr(os, "kill", lambda pid, sig: sent.append((pid, sig)))
    tmux = tmux_client.Tmux(world.socket, environ=world.env)
    pane, _pid = service.create(tmux, ["sh", "-c", "exit 0"], {})
    server = int(world.tmux("display-message", "-p", "#{pid}").strip())
    assert sent == [(server, signal.SIGCHLD)]
    world.wait_for(lambda: world.tmux("display-message", "-p", "-t", pane, "#{pane_dead}") == "1\n")
    assert service.respawn(tmux, pane) > 0
    assert sent == [(server, signal.SIGCHLD)] * 2
    service.kill(tmux)


def test_a_nudge_to_a_server_gone_is_quiet() -> None:
    from roost.tmux.client import reap_missed

    reap_missed("")  # nothing read
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    reap_missed(str(pid))  # no such process any more
