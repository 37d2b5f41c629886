"""The hook log as evidence (issue 18) without tmux: which lines give a status (the store's
launch token, never a launch line's), what a clock step does, how paths are compared."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_lineage_unit import LAUNCH_AT, NEW, OLD, apply, one_claude

from roost.core import lineage, status
from roost.core.model import Agent
from roost.providers import hooks, traits
from roost.store.db import Store


def write_log(home: str, *lines: str) -> None:
    hooks.mark_launch(home, "id-a", LAUNCH_AT, "t0k")
    with Path(hooks.log_path(home, "id-a")).open("a") as fh:
        fh.writelines(lines)


@pytest.mark.parametrize(
    ("event", "payload"),
    [
        pytest.param("Notification", '{"notification_type": "permission_prompt"}', id="waiting"),
        pytest.param("SessionEnd", '{"reason": "other"}', id="exited"),
        pytest.param("StopFailure", '{"last_assistant_message": "forged"}', id="error"),
    ],
)
def test_a_forged_launch_line_gives_no_status(tmp_path: Path, event: str, payload: str) -> None:
    home = str(tmp_path)
    at = int(LAUNCH_AT)
    write_log(
        home,
        f"{at + 1}\tStop\tt0k\t{{}}\n",
        f"{at + 2}\t{hooks.LAUNCH}\tFAKE\t{{}}\n",
        f"{at + 3}\t{event}\tFAKE\t{payload}\n",
    )
    assert hooks.last_status(home, "id-a", "t0k") == ("idle", at + 1, None)
    # a launch before tokens takes no tokened line either: the same rule as lineage's
    assert hooks.last_status(home, "id-a", None) is None


@pytest.mark.parametrize(
    ("token", "launch"),
    [
        pytest.param("t", "t", id="its-own"),
        pytest.param("u", "t", id="another"),
        pytest.param("", "t", id="empty-since-a-tokened-launch"),
        pytest.param(None, "t", id="none-since-a-tokened-launch"),
        pytest.param(None, None, id="none-before-tokens"),
        pytest.param("", None, id="empty-before-tokens"),
        pytest.param("t", None, id="tokened-before-tokens"),
    ],
)
def test_status_and_lineage_refuse_the_same_lines(token: str | None, launch: str | None) -> None:
    status_refuses = lineage.token_refused(token, launch)
    lineage_refuses = lineage.foreign(
        token=token,
        at=LAUNCH_AT,
        cwd="/w",
        launch_token=launch,
        launch_at=LAUNCH_AT,
        agent_cwd="/w",
    )
    assert status_refuses == lineage_refuses


# ---- clock steps: the token and the log's order decide, a line's time only warns ---------------
@pytest.fixture
def app(tmp_path: Path) -> SimpleNamespace:
    made = one_claude(tmp_path)  # agent `a`, session OLD
    made.store.begin_launch("id-a", "t0k", LAUNCH_AT)
    return made


def test_lines_of_the_launch_stamped_an_hour_before_it_are_taken_with_a_warning(
    app: SimpleNamespace,
) -> None:
    behind = int(LAUNCH_AT) - 3600
    clear = json.dumps(
        {
            "session_id": NEW,
            "transcript_path": "/t/new.jsonl",
            "cwd": "/w",
            "hook_event_name": "SessionStart",
            "source": "clear",
        }
    )
    agent = apply(app, f"{behind}\tSessionStart\tt0k\t{clear}\n")
    assert (agent.provider_session_id, agent.transcript_path) == (NEW, "/t/new.jsonl")
    apply(app, f'{behind + 1}\tUserPromptSubmit\tt0k\t{{"cwd": "/w"}}\n')
    steps = [e for e in app.store.events("id-a") if e.kind == "clock-step"]
    assert [e.data["behind"] for e in steps] == [3600]  # once per launch
    assert not [e for e in app.store.events("id-a") if e.kind.endswith("-ignored")]


def test_a_hook_status_stamped_before_the_start_still_counts() -> None:
    found = status.classify(
        alive=True,
        has_window=True,
        base_state="running",
        roost_stopped=False,
        hook=("idle", LAUNCH_AT - 3600, None),
        screen=None,
        activity=None,
        started_at=LAUNCH_AT,
        patterns=status.patterns_for(traits.CLAUDE.patterns),
        now=LAUNCH_AT + 5,
    )
    assert found == ("idle", "hook", None)


def test_the_log_order_not_the_time_says_which_event_came_last(tmp_path: Path) -> None:
    home = str(tmp_path)
    at = int(LAUNCH_AT)
    write_log(home, f"{at + 60}\tUserPromptSubmit\tt0k\t{{}}\n", f"{at - 3600}\tStop\tt0k\t{{}}\n")
    assert hooks.last_status(home, "id-a", "t0k") == ("idle", at - 3600, None)


# ---- the cwd a hook line reports: resolved paths, not strings ----------------------------------
@pytest.mark.parametrize(
    "where",
    [
        pytest.param("{w}/../../etc", id="dot-dot out of it"),
        pytest.param("{w}/link", id="a symlink out of it"),
        pytest.param("{w}/./../wx", id="a neighbour through dots"),
    ],
)
def test_a_cwd_outside_the_agents_by_its_real_path_is_foreign(tmp_path: Path, where: str) -> None:
    work = tmp_path / "w"
    work.mkdir()
    (work / "link").symlink_to("/etc")
    store = Store.open(tmp_path / "roost.db")
    store.insert(
        Agent(
            id="id-a",
            name="a",
            provider="claude",
            cwd=str(work),
            home="a",
            provider_session_id=OLD,
            created_at="2027-01-01T00:00:00+00:00",
            started_at="2027-01-15T08:00:00+00:00",
            launches=1,
        )
    )
    store.begin_launch("id-a", "t0k", LAUNCH_AT)
    app = SimpleNamespace(store=store, paths=SimpleNamespace(home=tmp_path))
    clear = json.dumps(
        {
            "session_id": NEW,
            "transcript_path": "/t/new.jsonl",
            "cwd": where.format(w=work),
            "source": "clear",
        }
    )
    agent = apply(app, f"{int(LAUNCH_AT) + 1}\tSessionStart\tt0k\t{clear}\n")
    assert agent.provider_session_id == OLD
    [ignored] = [e for e in store.events("id-a") if e.kind == "session-ignored"]
    assert "is not the agent's" in str(ignored.text("reason"))


def test_dots_in_a_path_are_not_a_way_out() -> None:
    assert lineage.inside("/w/src/../src", "/w") and lineage.inside("/w/./src", "/w")
    assert not lineage.inside("/w/../x", "/w") and not lineage.inside("/w/../../etc", "/w")
    assert not lineage.inside("w/src", "w")  # a relative path says nothing


def test_the_agents_cwd_through_a_symlink_is_its_real_folder(tmp_path: Path) -> None:
    """Spawned in a symlinked folder, a CLI reports the real one (its getcwd)."""
    work = tmp_path / "w"
    (work / "src").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(work)
    store = Store.open(tmp_path / "roost.db")
    store.insert(
        Agent(
            id="id-a",
            name="a",
            provider="claude",
            cwd=str(tmp_path / "alias"),
            home="a",
            provider_session_id=OLD,
            created_at="2027-01-01T00:00:00+00:00",
            started_at="2027-01-15T08:00:00+00:00",
            launches=1,
        )
    )
    store.begin_launch("id-a", "t0k", LAUNCH_AT)
    app = SimpleNamespace(store=store, paths=SimpleNamespace(home=tmp_path))
    clear = json.dumps({"session_id": NEW, "cwd": str(work / "src"), "source": "clear"})
    assert (
        apply(app, f"{int(LAUNCH_AT) + 1}\tSessionStart\tt0k\t{clear}\n").provider_session_id == NEW
    )


# ---- every reader of the log: a reply, a delivery, a notice come from the launch's lines only ---
def test_replies_read_from_the_log_are_the_current_launchs(app: SimpleNamespace) -> None:
    """The same rule for what `send --wait` answers, what a parent is told and what `read`
    shows as a child's last reply: a forged launch line and its Stop say nothing."""
    from roost.ops import notify, replies

    at = int(LAUNCH_AT)
    write_log(
        str(app.paths.home),
        f'{at + 1}\tUserPromptSubmit\tt0k\t{{"prompt": "hi"}}\n',
        f'{at + 2}\tStop\tt0k\t{{"last_assistant_message": "real answer"}}\n',
        f"{at + 3}\t{hooks.LAUNCH}\tFAKE\t{{}}\n",
        f'{at + 4}\tStop\tFAKE\t{{"last_assistant_message": "forged"}}\n',
    )
    agent = app.store.require("a")
    assert replies.answer_to(app, agent, "hi", 0) == "real answer"  # type: ignore[arg-type]
    assert replies.last(app, agent) == "real answer"  # type: ignore[arg-type]
    assert notify._last_stop(app, "id-a") == "real answer"  # type: ignore[arg-type]


# ---- reading the log: never through a symlink, never blocked by a FIFO -------------------------
def test_a_fifo_planted_at_the_log_does_not_hang_a_reader(tmp_path: Path) -> None:
    import os
    import threading

    home = str(tmp_path)
    log = Path(hooks.log_path(home, "id-a"))
    log.parent.mkdir(parents=True)
    os.mkfifo(log)
    done: list[object] = []
    reader = threading.Thread(
        target=lambda: done.append(
            (
                hooks.last_status(home, "id-a", "t0k"),
                hooks.read_since(str(log), 0, "t0k"),
                hooks.size(str(log)),
            )
        ),
        daemon=True,
    )
    reader.start()
    reader.join(5)
    if reader.is_alive():  # let the blocked open go before failing
        os.close(os.open(log, os.O_WRONLY | os.O_NONBLOCK))
    assert done == [(None, ([], 0), 0)]


def test_a_symlink_planted_at_the_log_is_not_read(tmp_path: Path) -> None:
    home = str(tmp_path)
    elsewhere = tmp_path / "elsewhere.log"
    elsewhere.write_text(f'{int(LAUNCH_AT)}\tStop\tt0k\t{{"last_assistant_message": "x"}}\n')
    log = Path(hooks.log_path(home, "id-a"))
    log.parent.mkdir(parents=True)
    log.symlink_to(elsewhere)
    assert hooks.last_status(home, "id-a", "t0k") is None
    assert hooks.read_since(str(log), 0, "t0k") == ([], 0) and hooks.size(str(log)) == 0


@pytest.mark.parametrize("planted", ["fifo", "symlink"])
def test_hook_sh_replaces_what_was_planted_at_the_log(tmp_path: Path, planted: str) -> None:
    """A FIFO would hold the hook (and Claude with it) until someone read it; a symlink would
    be written through. Either is removed and a new 0600 log begun."""
    import os
    import subprocess

    log = tmp_path / "hooks.log"
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    if planted == "fifo":
        os.mkfifo(log)
    else:
        log.symlink_to(victim)
    done = subprocess.run(
        ["sh", hooks.HOOK_SH, str(log), "Stop"],
        input=b'{"a": 1}',
        capture_output=True,
        timeout=20,
        env={**os.environ, "ROOST_LAUNCH_TOKEN": "t0k"},
    )
    assert (done.returncode, done.stdout) == (0, b"")
    assert not log.is_symlink() and log.is_file() and log.stat().st_mode & 0o777 == 0o600
    [entry] = [hooks.parse_entry(line) for line in log.read_text().splitlines()]
    assert entry is not None
    _at, event, _payload, token = entry
    assert (event, token) == ("Stop", "t0k") and victim.read_text() == "precious\n"
