"""Issue 23, part 2 on a real tmux with the fake Claude: resume at a usage limit's reset, opt-in
and durable. The clock roost reads is injected (a real clock moved ahead: tmux, the agents and
sends run in real time), so no test sleeps until a real reset."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from unittest import mock

import pytest

from roost.ops.context import App
from roost.system.clock import SystemClock

from conftest import Env

pytestmark = pytest.mark.tmux


class AheadClock(SystemClock):
    """The real clock, `ahead` seconds later: roost's view of a later time, while tmux, the
    agents and the waits of a send run in real time."""

    def __init__(self, ahead: float) -> None:
        self.ahead = ahead

    def now(self) -> datetime:
        return super().now() + timedelta(seconds=self.ahead)


@contextmanager
def app_at(world: Env, ahead: float) -> Iterator[App]:
    """The App a roost command in `world` would have, its clock `ahead` seconds late."""
    from roost.ops.root import open_app

    with mock.patch.dict(os.environ, world.env, clear=True):
        app = open_app(dict(world.env))
        app.clock = AheadClock(ahead)
        try:
            yield app
        finally:
            app.close()


def limit_words(hours: float) -> tuple[str, float]:
    """Claude's words for a limit that resets about `hours` from now (on the hour, UTC), and
    that reset as an epoch."""
    reset = (datetime.now(UTC) + timedelta(hours=hours)).replace(minute=0, second=0, microsecond=0)
    clock = f"{reset.hour % 12 or 12}{'am' if reset.hour < 12 else 'pm'}"
    return f"You've hit your session limit · resets {clock} (UTC)", reset.timestamp()


def configure(world: Env, text: str) -> None:
    world.home.mkdir(parents=True, exist_ok=True)
    (world.home / "config.toml").write_text(text)


def received(folder: Path) -> list[str]:
    return sorted(p.read_text() for p in folder.glob("*.txt")) if folder.exists() else []


def limited_agent(world: Env, name: str, prompt: str, hours: float = 3) -> tuple[float, Path]:
    """Agent `name` (fake Claude) whose account is limited: `prompt`, sent by roost, hit the
    limit. Its reset, and the file whose existence is the limit (remove it: the reset)."""
    words, reset = limit_words(hours)
    limit_file = world.tmp / "limit-holds"
    inbox = world.tmp / f"received-{name}"
    # every command's environment: a restore's starts have them too
    world.env.update(
        FAKE_AGENT_LIMIT_WORDS=words,
        FAKE_AGENT_LIMIT_FILE=str(limit_file),
        FAKE_AGENT_RECEIVED_DIR=str(inbox),
    )
    world.roost("spawn", name, "--cwd", str(world.tmp / "work"))
    world.wait_status(name, "idle")
    limit_file.touch()
    world.roost("send", name, prompt, check=False)
    world.wait_status(name, "limited")
    return reset, limit_file


def test_resume_at_reset_through_a_server_death_once(world: Env) -> None:
    configure(world, "[limits]\njitter = 0\n")
    reset, limit_file = limited_agent(world, "cl", "write the report")
    assert "then: nothing: on-limit is off" in world.roost("limits").stdout  # off by default
    world.roost("policy", "cl", "--on-limit", "resume")  # opted in while it is limited
    [listed] = json.loads(world.roost("limits", "--json").stdout)
    assert listed["resume_at"] == reset, listed
    assert listed["then"].startswith("resume at ")
    assert "then: resume at " in world.roost("limits").stdout

    inbox = world.tmp / "received-cl"
    with app_at(world, 0) as app:  # before the reset: nothing is due
        from roost.ops import resume

        assert resume.run_due(app) == []
    world.tmux("kill-server")
    limit_file.unlink()  # the provider's reset
    ahead = reset - datetime.now(UTC).timestamp() + 60
    with app_at(world, ahead) as app:  # a reboot later, past the reset: roost restore
        from roost.ops import restore

        report = restore.restore(app)
        assert report.started == ["cl"], report
    # the cut prompt, again (its echo comes a moment after the send's confirmation)
    world.wait_for(lambda: received(inbox), what="the resumed prompt")
    assert received(inbox) == ["write the report"]
    with app_at(world, ahead + 3600) as app:  # later passes: it went on, nothing more
        from roost.ops import resume

        assert resume.run_due(app) == []
        assert resume.run_due(app) == []
    assert received(inbox) == ["write the report"]
    assert world.roost("limits", "--json").stdout.strip() == "[]"


def test_a_persons_send_after_the_reset_cancels_the_resume(world: Env) -> None:
    configure(world, '[limits]\non_limit = "resume"\njitter = 0\n')  # on for every agent
    reset, limit_file = limited_agent(world, "cl", "write the report")
    [listed] = json.loads(world.roost("limits", "--json").stdout)
    assert listed["resume_at"] == reset  # planned when the limit was recorded
    refused = world.roost("send", "cl", "hello?", check=False)  # before the reset: refused
    assert refused.returncode != 0 and "limited until" in refused.stderr
    limit_file.unlink()
    ahead = reset - datetime.now(UTC).timestamp() + 5  # past the reset, before any pass ran
    inbox = world.tmp / "received-cl"
    with app_at(world, ahead) as app:
        from roost.ops import resume, send

        assert send.send(app, "cl", "do this instead").delivered  # the person's own send
        app.clock = AheadClock(ahead + 3600)
        assert resume.run_due(app) == []
    world.wait_for(lambda: received(inbox), what="the person's message")
    assert received(inbox) == ["do this instead"]  # and no resume of the cut prompt


def test_on_limit_policy_of_a_tab_and_bad_input(world: Env) -> None:
    world.roost("spawn", "cl", "--cwd", str(world.tmp / "work"))
    cases = [
        (("policy", "cl"), 2, "give a restart POLICY, --on-limit, --budget or --tree-budget"),
        (("policy", "cl", "--on-limit", "maybe"), 2, "'maybe' is not one of"),
        (("policy", "main", "--tab", "never"), 2, "a tab has no restart policy"),
        (("policy", "nosuch", "--tab", "--on-limit", "resume"), 1, "no tab named nosuch"),
    ]
    for args, code, words in cases:
        done = world.roost_inprocess(*args)
        assert done.returncode == code and words in done.stderr, (args, done)
        assert len(done.stderr.strip().splitlines()) <= 3, done.stderr  # click adds its usage
    listed = world.roost("limits", "--json").stdout
    assert json.loads(listed) == []
    with app_at(world, 0) as app:
        from roost.store import resumes

        assert resumes.policies(app.store.conn) == {}

    # the tab's policy applies to its agents, the agent's own wins over it
    tab = world.ls()["cl"]["tab"]
    world.roost("policy", tab, "--tab", "--on-limit", "resume")
    with app_at(world, 0) as app:
        from roost.ops import resume
        from roost.store import resumes

        agent = app.store.require("cl")
        assert resume.policy_of(agent, resumes.policies(app.store.conn), app.settings) == "resume"
    world.roost("policy", "cl", "--on-limit", "off")
    with app_at(world, 0) as app:
        agent = app.store.require("cl")
        assert resume.policy_of(agent, resumes.policies(app.store.conn), app.settings) == "off"
