"""What the service's monitor relies on tmux for (core/panewatch.py), on a real tmux: the look
names agents' panes only; output or a bell is news once per look, so a window that streams
output costs a hook a look, and a write after a look's clear is never missed; a session someone
is attached to is quiet (no bell for its activity) and armed again once they have gone."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from roost.core import panewatch
from roost.core.service import SESSION

pytestmark = pytest.mark.tmux

Run = Callable[..., str]


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    env = {"PATH": os.environ["PATH"], "TMUX_TMPDIR": str(tmp_path)}
    tmux = [shutil.which("tmux") or "tmux", "-L", "panewatch", "-f", "/dev/null"]

    def run(*args: str) -> str:
        return subprocess.run(
            [*tmux, *args], env=env, capture_output=True, text=True, check=True, timeout=30
        ).stdout

    try:
        yield run
    finally:
        subprocess.run([*tmux, "kill-server"], env=env, capture_output=True, check=False)


def agent_window(run: Run, session: str, *command: str) -> str:
    """A home with its keeper and an agent's window (tagged as roost tags it); its pane id."""
    run("new-session", "-d", "-s", session, "sleep", "100")
    return run(
        "new-window",
        "-t",
        f"{session}:",
        "-P",
        "-F",
        "#{pane_id}",
        *command,
        ";",
        "set-option",
        "-w",
        "@roost_id",
        session,
    ).strip()


def test_a_look_names_agents_panes_only(run: Run) -> None:
    """An agent's window, not its home's keeper, an untagged window, or the service's own
    session."""
    agent = agent_window(run, "home", "sleep", "100")
    run("new-window", "-t", "home:", "sleep", "100")  # nothing of roost's
    run("new-session", "-d", "-s", SESSION, "sleep", "100")
    run("set-option", "-w", "-t", f"={SESSION}:", "@roost_id", "not-an-agent")
    assert list(panewatch.parse(run(*panewatch.look_argv([], []))).panes) == [agent]


def wait(predicate: Callable[[], object], what: str, timeout: float = 15) -> None:
    """The world fixture's wait_for, for these tests' bare tmux servers."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_output_is_news_once_per_look(run: Run) -> None:
    pane = agent_window(run, "home", "cat")
    other = agent_window(run, "other", "sh", "-c", "while read x; do printf '\\a'; done")
    for words in panewatch.SETUP:
        run(*words)

    def news() -> int:
        return int(run("show-options", "-sqv", panewatch.NEWS) or 0)

    def shown(p: str, text: str) -> bool:
        return text in run("capture-pane", "-p", "-t", p)

    start = news()
    run("send-keys", "-t", pane, "-l", "first")
    wait(lambda: news() > start, "news of the first write")
    after_first = news()
    run("wait-for", panewatch.CHANNEL)  # signalled too (kept until a wait): returns at once

    # A second write before any look: shown, and (a command later, so tmux's loop has run its
    # alerts) no news: the flag is up until a look clears it.
    run("send-keys", "-t", pane, "-l", "second")
    wait(lambda: shown(pane, "second"), "the second write on screen")
    run("display-message", "-p", "x")
    assert news() == after_first

    look = panewatch.parse(run(*panewatch.look_argv([], [])))
    home = run("display-message", "-p", "-t", pane, "#{session_id}").strip()
    assert look.flagged == {home}
    assert (look.unarmed, look.attached) == (frozenset(), False)

    # The next look clears the flag first: a write after it is news again, and the look saw
    # the screen as it was when it listed (the second write).
    cleared = panewatch.parse(run(*panewatch.look_argv(look.flagged, [])))
    assert cleared.flagged == set()
    assert cleared.panes[pane] == look.panes[pane]
    run("send-keys", "-t", pane, "-l", "third")
    wait(lambda: news() > after_first, "news of a write after the clear")

    # A bell counts on its window and is news.
    before_bell = news()
    run("send-keys", "-t", other, "Enter")
    wait(lambda: news() > before_bell, "news of the bell")
    wait(lambda: panewatch.parse(run(*panewatch.look_argv([], []))).panes[other].bells, "bell")


def test_an_attached_session_is_quiet_and_armed_again_when_left(run: Run, tmp_path: Path) -> None:
    """tmux's client-attached hook sets `activity-action none` (with `any`, tmux would ring the
    person's terminal for each write they watch); the look sees the session attached (the
    ATTACHED subscription's cue) and, once the person has gone, arms it again."""
    pane = agent_window(run, "home", "cat")
    run("set-hook", "-g", "client-attached", "set-option -s @mine 1")  # a user's own hook
    for words in panewatch.SETUP:
        run(*words)

    def action() -> str:
        return run("display-message", "-p", "-t", pane, "#{activity-action}").strip()

    assert action() == "any"
    env = {"PATH": os.environ["PATH"], "TMUX_TMPDIR": str(tmp_path)}
    person = subprocess.Popen(
        [shutil.which("tmux") or "tmux", "-L", "panewatch", "-C", "attach", "-t", "=home"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
    )
    try:
        wait(lambda: action() == "none", "the attached session quiet")
        assert run("show-options", "-sqv", "@mine").strip() == "1"  # kept, and run
        look = panewatch.parse(run(*panewatch.look_argv([], [])))
        assert look.attached and look.unarmed == set() and look.loud == set()
        # attached before the hooks were set: `any` still; the look quiets it
        run("set-option", "-t", pane, "activity-action", "any")
        loud = panewatch.parse(run(*panewatch.look_argv([], []))).loud
        assert loud == {run("display-message", "-p", "-t", pane, "#{session_id}").strip()}
        run(*panewatch.look_argv([], [], loud))
        assert action() == "none"
        assert pane.encode() in run("display-message", "-p", panewatch.ATTACHED_FORMAT).encode()
    finally:
        assert person.stdin is not None
        person.stdin.close()
        person.wait(15)
    home = run("display-message", "-p", "-t", pane, "#{session_id}").strip()
    wait(lambda: panewatch.parse(run(*panewatch.look_argv([], []))).unarmed == {home}, "left")
    armed = panewatch.parse(run(*panewatch.look_argv([], [home])))
    assert armed.unarmed == set() and not armed.attached
    assert action() == "any"
    assert run("display-message", "-p", panewatch.ATTACHED_FORMAT).strip() == ""


def test_roost_quiets_a_window_it_shows_and_counts_its_respawns(run: Run, tmp_path: Path) -> None:
    """roost's tmux client: a window about to be shown to a person has its session quiet
    before anyone attaches (the hook only follows the attach); a pane roost respawns is news
    (tmux 3.3a runs no hook for respawn-pane)."""
    from roost.tmux.client import Tmux

    pane = agent_window(run, "home", "sh", "-c", "read x")
    for words in panewatch.SETUP:
        run(*words)
    tmux = Tmux("panewatch", environ={"PATH": os.environ["PATH"], "TMUX_TMPDIR": str(tmp_path)})
    window = run("display-message", "-p", "-t", pane, "#{window_id}").strip()
    run("set-option", "-w", "-t", window, "remain-on-exit", "on")
    run("send-keys", "-t", pane, "Enter")
    wait(lambda: run("display-message", "-p", "-t", pane, "#{pane_dead}").strip() == "1", "exit")
    tmux.select_window(window)
    assert run("display-message", "-p", "-t", pane, "#{activity-action}").strip() == "none"

    before = int(run("show-options", "-sqv", panewatch.NEWS) or 0)
    tmux.respawn(pane, window, str(tmp_path), ["sleep", "100"])
    assert int(run("show-options", "-sqv", panewatch.NEWS)) == before + 1


def test_arming_sets_its_own_session_and_a_gone_one_fails_only_that_look(
    run: Run, tmp_path: Path
) -> None:
    """The arm inside if-shell names its session (if-shell does not hand its target on: the
    most recently used session would be armed, a person's perhaps); a look naming a session
    that is gone fails in tmux, and the monitor lists again without it."""
    from roost.service import monitor
    from roost.tmux.client import Tmux

    pane = agent_window(run, "home", "cat")
    other = agent_window(run, "other", "cat")  # made last: tmux's "best" session
    for words in panewatch.SETUP:
        run(*words)
    for p in (pane, other):
        run("set-option", "-t", p, "activity-action", "none")
    home = run("display-message", "-p", "-t", pane, "#{session_id}").strip()
    run(*panewatch.look_argv([], [home]))

    def action(p: str) -> str:
        return run("display-message", "-p", "-t", p, "#{activity-action}").strip()

    assert (action(pane), action(other)) == ("any", "none")

    run("kill-session", "-t", "=other")
    with pytest.raises(subprocess.CalledProcessError):
        run(*panewatch.look_argv(["$999"], []))
    tmux = Tmux("panewatch", environ={"PATH": os.environ["PATH"], "TMUX_TMPDIR": str(tmp_path)})
    gone = panewatch.Look({}, frozenset({"$999"}), frozenset(), frozenset(), False)
    look = monitor._look(tmux, gone)
    assert look is not None and list(look.panes) == [pane]
