"""The status pipeline's steps and the providers' traits: pure or on temp files, no tmux, no
sleeping, a fixed clock."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from roost.core import observation, present, settings, status
from roost.core.model import Agent
from roost.core.observation import Observation
from roost.core.pane import Pane
from roost.ops import learn, observe
from roost.providers import base, hooks, traits
from roost.store import status as listing
from roost.store import workspace as wsdb
from roost.store.db import Store
from roost.tmux import format as panefmt

NOW = 1_000_000.0
SRC = Path(__file__).resolve().parent.parent / "src" / "roost"


def record(name: str = "a", provider: str = "claude", **kw: object) -> Agent:
    return Agent(f"id-{name}", name, provider, "/w", name, **kw)  # type: ignore[arg-type]


def pane(
    agent_id: str = "id-a",
    pane_id: str = "%1",
    dead: bool = False,
    dead_status: int | None = None,
    activity: float | None = None,
) -> Pane:
    return Pane(
        session_id="$1",
        session_name="a",
        window_id="@1",
        window_name="a",
        window_index=1,
        pane_id=pane_id,
        pid=42,
        dead=dead,
        dead_status=dead_status,
        agent_id=agent_id,
        is_keeper=False,
        is_home=True,
        activity=activity,
    )


def one(rec: Agent, *panes: Pane) -> Observation:
    [found] = observation.join([rec], list(panes))
    return found


# ---- join ---------------------------------------------------------------------------------------
def test_join_takes_the_live_pane_and_its_pid() -> None:
    found = one(
        record(last_exit=1),
        pane(pane_id="%1", dead=True, dead_status=3),
        pane(pane_id="%2"),
        pane(pane_id="%3", dead=True, dead_status=4),
    )
    assert found.pane is not None and found.pane.pane_id == "%2"
    # a running agent has no exit code: the recorded one is a past run's (issue 11)
    assert (found.alive, found.state, found.pid, found.exit_code) == (True, "running", 42, None)


def test_a_dead_pane_gives_its_exit_code_and_no_pid() -> None:
    found = one(record(last_exit=1), pane(dead=True, dead_status=3))
    assert (found.alive, found.state, found.pid, found.exit_code) == (False, "stopped", None, 3)
    uncollected = one(record(last_exit=1), pane(dead=True))
    assert uncollected.exit_code == 1  # tmux has no status yet: the recorded one stands


@pytest.mark.parametrize(
    ("kw", "state"),
    [
        pytest.param({}, "stopped", id="home-gone"),
        pytest.param({"placement": "detached"}, "hibernated", id="parked-without-window"),
        pytest.param({"intent": "hibernated", "placement": "tile"}, "hibernated", id="hibernated"),
        pytest.param({"last_error": "no such cwd"}, "failed", id="failed-start"),
    ],
)
def test_join_without_a_pane(kw: dict[str, str], state: str) -> None:
    found = one(record(last_exit=7, **kw))
    assert (found.pane, found.alive, found.state, found.pid, found.exit_code) == (
        None,
        False,
        state,
        None,
        7,
    )


def test_before_classifying_the_status_is_the_stored_one() -> None:
    found = one(record(status="idle", status_source="hook", status_since="t0"), pane())
    assert (found.status, found.status_source, found.status_since) == ("idle", "hook", "t0")
    assert observation.changes([found]) == []


# ---- which screens ------------------------------------------------------------------------------
def has_hooks(provider: str) -> bool:
    return traits.of(provider).hooks


@pytest.mark.parametrize(
    ("provider", "hook", "activity", "wanted"),
    [
        pytest.param("codex", None, NOW, True, id="no-hooks"),
        pytest.param("claude", None, NOW, True, id="no-hook-event-yet"),
        pytest.param(
            "claude", ("idle", NOW - 10, None), NOW - 20, False, id="quiet-since-the-hook"
        ),
        pytest.param("claude", ("idle", NOW - 10, None), NOW - 2, True, id="output-after-the-hook"),
    ],
)
def test_screens_needed(
    provider: str, hook: tuple[str, float, str | None] | None, activity: float, wanted: bool
) -> None:
    seen = [one(record(provider=provider), pane(activity=activity))]
    hooked = {"id-a": hook} if hook else {}
    assert observation.screens_needed(seen, hooked, has_hooks) == (["%1"] if wanted else [])


def test_dead_and_windowless_agents_need_no_screen() -> None:
    seen = [
        one(record("a", "codex"), pane("id-a", dead=True, dead_status=0)),
        one(record("b", "codex")),
    ]
    assert observation.screens_needed(seen, {}, has_hooks) == []


# ---- classify, changes, events ------------------------------------------------------------------
def test_classify_then_tell_and_record_the_change() -> None:
    seen = one(
        record(
            provider="codex",
            status="working",
            status_source="screen",
            status_since="t0",
            started_at="1970-01-01T00:00:00+00:00",
        ),
        pane(activity=NOW - 30),
    )
    patterns = {k: list(v) for k, v in traits.CODEX.patterns.items()}
    found = observation.classify(seen, None, "• done\n\n❯ ", patterns, NOW)
    assert (found.status, found.status_source, found.status_since) == ("idle", "screen", "t0")
    assert seen.status == "working"  # steps return new values
    assert observation.changes([seen, found]) == [found]
    assert observation.status_event(found) == {
        "status": "idle",
        "previous": "working",
        "source": "screen",
    }
    stored = observation.recorded(found, "t1")
    assert (stored.status, stored.status_since) == ("idle", "t1")


def test_an_exit_is_logged_with_its_code() -> None:
    seen = one(
        record(intent="running", status="idle", status_source="hook"),
        pane(dead=True, dead_status=2),
    )
    found = observation.classify(seen, None, None, {"waiting": [], "working": [], "idle": []}, NOW)
    assert (found.status, found.status_source) == ("exited", "process")
    assert observation.status_event(found) == {
        "status": "exited",
        "previous": "idle",
        "source": "process",
        "exit_code": 2,
    }


# ---- the read-only pipeline (ops/observe.statuses), on temp hook logs ---------------------------
class Recorder:
    """A capture that returns canned screens and remembers what it was asked for."""

    def __init__(self, screens: Mapping[str, str]) -> None:
        self.screens = screens
        self.asked: list[list[str]] = []

    def __call__(self, pane_ids: list[str]) -> Mapping[str, str]:
        self.asked.append(pane_ids)
        return {p: self.screens[p] for p in pane_ids if p in self.screens}


def test_statuses_read_hooks_and_capture_only_the_screens_needed(tmp_path: Path) -> None:
    home = str(tmp_path)
    log = Path(hooks.log_path(home, "id-cl"))
    log.parent.mkdir(parents=True)
    log.write_text(f"{NOW - 10}\tStop\t{{}}\n")
    seen = observation.join(
        [
            record("cl", "claude"),
            record("cx", "codex"),
            record("ai", "aider"),
            record("gone", "command", status="exited", status_source="process"),
        ],
        [
            pane("id-cl", "%1", activity=NOW - 20),
            pane("id-cx", "%2", activity=NOW - 30),
            pane("id-ai", "%3", activity=NOW - 30),
        ],
    )
    capture = Recorder({"%2": "Approve this? (yes/no)", "%3": "> "})
    overrides = settings.parse(  # codex's own patterns would read a quiet screen
        {"status": {"patterns": {"codex": {"waiting": ["Approve this?"]}}}}
    ).patterns
    found = observe.statuses(seen, home, capture, overrides, NOW)
    assert capture.asked == [["%2", "%3"]]  # claude's hook is newer than its screen
    assert [(o.agent.name, o.status, o.status_source) for o in found] == [
        ("cl", "idle", "hook"),
        ("cx", "waiting", "screen"),
        ("ai", "idle", "screen"),
        ("gone", "stopped", "process"),
    ]
    assert [o.agent.name for o in observation.changes(found)] == ["cl", "cx", "ai", "gone"]


AIDER_TOP = "Aider v0.86.2\nRepo-map: disabled\n" + "─" * 50 + "\n"
LONG = "x" * 9000  # one line longer than the first read from the history's end


@pytest.mark.parametrize(
    ("history", "screen", "expected"),
    [
        # taken, its model client still loading (seconds on a loaded machine), no spinner yet
        pytest.param(
            "#### hello  \n\nhi there\n\n> Tokens: 9 sent\n\n#### slow one  \n",
            "> slow one",
            "working",
            id="taken-not-yet-shown",
        ),
        pytest.param(f"#### {LONG}  \n", "x" * 40, "working", id="a-long-one-line-prompt"),
        pytest.param(
            "#### two  \n#### \n#### lines  \n", "lines", "working", id="a-multi-line-prompt"
        ),
        pytest.param(
            "#### slow one  \n\nanswered\n\n> Tokens: 9 sent\n",
            "> draft words",
            "idle",
            id="draft-after-an-answered-turn",
        ),
        pytest.param(
            "#### slow one  \n\n> litellm.APIError: boom\n", "> next", "idle", id="error-noted"
        ),
        pytest.param("#### slow one  \n", ">", "idle", id="its-idle-prompt-wins"),
        pytest.param(
            "#### answered  \n\nyes\n\n#### <blank>  \n", "> draft", "idle", id="blank-enter"
        ),
        pytest.param("#### /add  \n", "ask>", "idle", id="a-command-in-ask-mode"),
        pytest.param(
            "#### slow one  \n\n# aider chat started at 2026-01-02 10:00:00\n",
            "> x",
            "idle",
            id="started-again",
        ),
        pytest.param(None, "> slow one", "idle", id="no-history-yet"),
    ],
)
def test_a_prompt_aider_took_reads_working_while_its_screen_stands_still(
    tmp_path: Path, history: str | None, screen: str, expected: str
) -> None:
    agent = record("ai", "aider")
    file = tmp_path / "agents" / agent.id / "aider.chat.history.md"
    file.parent.mkdir(parents=True)
    if history is not None:
        file.write_text("\n# aider chat started at 2026-01-01 10:00:00\n\n" + history)
    seen = observation.join([agent], [pane("id-ai", "%3", activity=NOW - 30)])
    found = observe.statuses(seen, str(tmp_path), Recorder({"%3": AIDER_TOP + screen}), {}, NOW)
    assert [(o.status, o.status_source) for o in found] == [(expected, "screen")]


def test_pattern_overrides_are_the_settings_typed_table() -> None:
    assert settings.parse({}).patterns == {}
    given = {"status": {"patterns": {"codex": {"idle": ["$ "]}}}}
    assert settings.parse(given).patterns == {"codex": {"idle": ("$ ",)}}
    for broken in ({"status": "oops"}, {"status": {"patterns": ["oops"]}}):
        with pytest.raises(settings.Invalid):
            settings.parse(broken)


# ---- the store's side: the listing and the recorded changes -------------------------------------
def test_listing_reads_names_of_tabs_and_links_and_records_changes(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "r.db")
    parent = Agent(
        id="id-p",
        name="p",
        provider="claude",
        cwd="/w",
        home="p",
        created_at="2026-01-01T00:00:00+00:00",
        args=("--model", "opus"),
        dangerous=True,
        launches=2,
    )
    store.insert(parent, then=lambda c: wsdb.tile(c, "id-p", wsdb.ensure_tab(c, "ui")))
    store.insert(
        Agent(
            id="id-k",
            name="k",
            provider="codex",
            cwd="/w",
            home="p",
            created_at="2026-01-01T00:00:01+00:00",
            linked_parent="id-p",
            orchestration_parent="id-p",
            orchestration_root="id-p",
        )
    )
    with store.write() as c:
        wsdb.pin(c, "id-p")
    p, k = listing.records(store.conn)
    assert (p.name, p.tab, p.pinned, p.dangerous, p.args, p.launches) == (
        "p",
        "ui",
        True,
        True,
        ("--model", "opus"),
        2,
    )
    names = (k.linked_parent_name, k.orchestration_parent_name, k.orchestration_root_name)
    assert names == ("p", "p", "p") and not k.pinned
    assert (k.linked_parent, k.orchestration_parent, k.orchestration_root) == ("id-p",) * 3

    found = observation.classify(
        one(k), None, None, {"waiting": [], "working": [], "idle": []}, NOW
    )
    with store.write() as c:
        listing.record_changes(c, [found], "2026-01-02T00:00:00+00:00")
    again = next(r for r in listing.records(store.conn) if r.name == "k")
    assert (again.status, again.status_source, again.status_since) == (
        "stopped",
        "process",
        "2026-01-02T00:00:00+00:00",
    )
    [event] = store.events("id-k")
    assert (event.kind, event.data["status"], event.data["previous"], event.data["source"]) == (
        "status",
        "stopped",
        None,
        "process",
    )


# ---- presentation -------------------------------------------------------------------------------
def test_json_keeps_its_fields_in_order_with_plain_types() -> None:
    found = one(
        record(
            args=("--x", "y z"),
            dangerous=True,
            pinned=False,
            tab="main",
            placement="tile",
            status="idle",
            status_source="hook",
        ),
        pane(),
    )
    out = present.agent_json(found)
    assert tuple(out) == present.JSON_FIELDS
    assert (out["args"], out["dangerous"], out["pinned"], out["pid"], out["state"]) == (
        ["--x", "y z"],
        True,
        False,
        42,
        "running",
    )
    assert json.loads(present.render([found], as_json=True)) == [out]


def test_table_shows_status_with_exit_code_and_place() -> None:
    found = one(
        record(status="exited", placement="detached", pinned=True), pane(dead=True, dead_status=1)
    )
    text = present.render([found], as_json=False)
    assert text.splitlines()[1].split()[:5] == ["*", "a", "crashed", "(1)", "claude"]
    assert "parked" in text


# ---- parsing tmux's listing ---------------------------------------------------------------------
def test_panes_parse_the_listing() -> None:
    line = panefmt.SEP.join(
        [
            "$1",
            "home",
            "@2",
            "w",
            "3",
            "%4",
            "",
            "1",
            "",
            "9",
            "id-a",
            "",
            "1",
            "77",
            "1000.5",
            "✳ Claude Code",
        ]
    )
    [p] = panefmt.panes(line + "\nnot a pane row\n")
    assert (
        p.window_index,
        p.pid,
        p.dead,
        p.dead_status,
        p.agent_id,
        p.is_home,
        p.is_keeper,
        p.activity,
        p.live_pid,
        p.title,
    ) == (3, None, True, 137, "id-a", True, False, 1000.5, None, "✳ Claude Code")


# ---- providers' traits --------------------------------------------------------------------------
def test_every_provider_carries_its_traits() -> None:
    providers = base.registry()
    assert tuple(providers) == base.NAMES == tuple(traits.BY_NAME)
    for name, provider in providers.items():
        quirks = provider.traits
        assert quirks is traits.of(name) and quirks.name == name == provider.name
        # every screen kind it names is one core/status.py reads ("error", "turn", "loading"
        # optional)
        kinds = {*status.KINDS, status.TURN, status.LOADING}
        assert {"waiting", "working", "idle"} <= set(quirks.patterns) <= kinds
        # the version its traits were verified against: every CLI but an arbitrary command
        assert bool(re.fullmatch(r"\d+\.\d+\.\d+", quirks.verified)) == (name != "command")
        assert quirks.enter_delay > 0
        assert quirks.session_id in (traits.MINTED, traits.DISCOVERED, traits.NO_SESSION_ID)
        minted = provider.new_session_id()
        assert (minted is not None) == (quirks.session_id == traits.MINTED)
        discovers = type(provider).discover_session_id is not base.Provider.discover_session_id
        assert discovers == (quirks.session_id == traits.DISCOVERED)
        # a CLI resumed by its session id says so when that conversation is gone
        assert bool(quirks.conversation_gone) == (quirks.session_id != traits.NO_SESSION_ID)


def test_an_unknown_provider_gets_a_plain_commands_traits() -> None:
    assert traits.of("newer-cli") is traits.COMMAND


def test_what_there_is_to_learn_first(tmp_path: Path) -> None:
    assert learn.awaits_session_id(record(provider="codex", launches=1))
    assert not learn.awaits_session_id(record(provider="codex", launches=0))
    assert not learn.awaits_session_id(
        record(provider="gemini", launches=1, provider_session_id="s")
    )
    assert not learn.awaits_session_id(record(provider="claude", launches=1))
    home = str(tmp_path)
    assert not learn.unread_hook_events(home, record(provider="claude"))  # no log, offset 0
    log = Path(hooks.log_path(home, "id-a"))
    log.parent.mkdir(parents=True)
    log.write_text("1.0\tStop\t{}\n")
    assert learn.unread_hook_events(home, record(provider="claude"))
    read = log.stat().st_size
    assert not learn.unread_hook_events(home, record(provider="claude", hook_offset=read))
    assert not learn.unread_hook_events(home, Agent("id-a", "a", "aider", "/w", "a"))


def test_more_hook_events_map_to_statuses() -> None:
    assert hooks.status_of("Notification", {"notification_type": "elicitation_dialog"}) == "waiting"
    assert hooks.status_of("SessionEnd", {}) == "exited"


# ---- contracts ----------------------------------------------------------------------------------
def test_no_module_outside_providers_tests_a_provider_name() -> None:
    name_test = re.compile(
        r"""provider\w*\s*(?:==|!=|\bin\b|\bnot in\b)\s*[(\[{]?\s*["']""", re.IGNORECASE
    )
    offenders = [
        f"{path.relative_to(SRC)}:{n}"
        for path in SRC.rglob("*.py")
        if path.parent.name != "providers"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if name_test.search(line)
    ]
    assert offenders == []


def test_the_fast_path_stays_import_light() -> None:
    heavy = (
        "typing",
        "dataclasses",
        "subprocess",
        "click",
        "json",
        "pathlib",
        "shutil",
        "uuid",
        "roost.providers.base",
        "roost.store.db",
        # re (and enum under it): a few ms of `roost ls`'s start-up; patterns compile on use
        "re",
        "enum",
    )
    code = (
        "import sys\nimport roost.cli.fast\n"
        f"print(','.join(m for m in {heavy!r} if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == ""
