"""A TUI source with canned data: deterministic, no tmux, no store. For demos and the README's
screenshot (`python -m roost.tui.demo`), the snapshot tests, and tests of the app's behaviour.

The agents' ages are relative to NOW: give the app `clock=lambda: NOW`, so what it shows does
not depend on today's date.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from roost.core import present, questions, restoring
from roost.core.errors import RoostError
from roost.core.events import Event
from roost.core.fleet import HostView
from roost.core.model import Agent
from roost.core.observation import Observation
from roost.core.status import Status
from roost.providers import traits
from roost.recall.operations import Hit
from roost.review.rules import Diff, FileChange, Hunk, Seen
from roost.tui.source import Snapshot

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
PID = 4242  # every running demo agent's


def item(
    name: str,
    status: str,
    provider: str = "claude",
    placement: str = "tile",
    tab: str | None = "main",
    minutes: int = 3,
    pinned: bool = False,
    linked_parent: str | None = None,
    orchestration_parent: str | None = None,
    exit_code: int | None = None,
    reason: str | None = None,
) -> Observation:
    """A demo agent with `status` (and its `reason`: a question's or an error's words), last
    active `minutes` before NOW."""
    alive = status in (Status.WORKING, Status.IDLE, Status.WAITING)
    when = (NOW - timedelta(minutes=minutes)).isoformat()
    record = Agent(
        id=f"id-{name}",
        name=name,
        provider=provider,
        cwd=f"/home/dev/src/{name}",
        home=name,
        provider_session_id=f"5f0c…{name}",
        placement=placement,
        tab=tab,
        pinned=pinned,
        linked_parent=linked_parent and f"id-{linked_parent}",
        orchestration_parent=orchestration_parent and f"id-{orchestration_parent}",
        linked_parent_name=linked_parent,
        orchestration_parent_name=orchestration_parent,
        last_active_at=when,
        intent="running" if alive else "stopped",
    )
    return Observation(
        record,
        pane=None,
        alive=alive,
        state="running" if alive else "hibernated" if status == Status.HIBERNATED else "stopped",
        pid=PID
        if status in (Status.WORKING, Status.IDLE, Status.WAITING, Status.STARTING)
        else None,
        exit_code=exit_code,
        status=status,
        status_source="hook" if traits.of(provider).hooks else "screen",
        status_since=when,
        status_reason=reason,
    )


ITEMS = [
    item("api-fix", "working", minutes=1, pinned=True),
    item(
        "api-tests",
        "waiting",
        orchestration_parent="api-fix",
        minutes=0,
        reason="Do you want to proceed?",
    ),
    item("frontend", "idle", provider="codex", tab="ui", minutes=12),
    item("docs", "idle", provider="gemini", tab="ui", minutes=40),
    item("migrations", "exited", placement="detached", tab=None, exit_code=1, minutes=90),
    item("spike-rust", "hibernated", placement="detached", tab=None, minutes=60 * 30),
    item("old-bisect", "hibernated", placement="buried", tab=None, minutes=60 * 24 * 9),
]

SNAPSHOT = Snapshot(
    items=ITEMS,
    tab_tiles=[("main", ["api-fix", "api-tests"]), ("ui", ["frontend", "docs"])],
    pins=["api-fix"],
    server_running=True,
    layouts={
        "main": {"split": "v", "ratio": 0.5, "a": {"leaf": "api-fix"}, "b": {"leaf": "api-tests"}},
        "ui": {"split": "h", "ratio": 0.6, "a": {"leaf": "frontend"}, "b": {"leaf": "docs"}},
    },
)

SCREENS = {
    "api-fix": "● Reading src/api/login.py\n● Running the tests\n\n✻ Working… (esc to interrupt)",
    "api-tests": "Bash(pytest -x tests/test_login.py)\n\nDo you want to proceed?\n❯ 1. Yes\n"
    "  2. No\n\nEsc to cancel",
    "frontend": "› add a loading spinner to the login form\n\n• Done.\n\n❯ ",
    "docs": "✦ Updated README.md\n\n> ",
}

EVENTS: list[Event] = [
    Event(1, "id-api-fix", "api-fix", "2026-11-29T11:58:00+00:00", "started", {}),
    Event(
        2,
        "id-api-fix",
        "api-fix",
        "2026-11-29T11:59:00+00:00",
        "status",
        {"status": Status.WORKING},
    ),
]


# A canned change for the diff pane (`D`): one modified file, one new binary one.
CHANGE = Diff(
    "api",
    "/home/me/src/api",
    "a202f5bf9f3f",
    "base",
    "c0ffee1234",
    "roost/api",
    (
        FileChange(
            "app/retry.py",
            None,
            "modified",
            2,
            1,
            hunks=(
                Hunk(
                    10,
                    4,
                    10,
                    5,
                    "def fetch(url):",
                    (
                        "     for attempt in range(3):",
                        "-        time.sleep(1)",
                        "+        time.sleep(2 ** attempt)",
                        "+        log.info('retry %d', attempt)",
                        "         return get(url)",
                    ),
                ),
            ),
            read=True,
        ),
        FileChange("docs/logo.png", None, "added", None, None, binary=True, size=2048),
    ),
)


# Canned hits for the search mode (`F`).
HITS = [
    Hit(
        "api",
        "id-api",
        "claude",
        "s1",
        12,
        "user",
        1795953600.0,
        "retry the «flaky» login redirect test",
        (),
        -3.1,
    ),
    Hit(
        "frontend",
        "id-fe",
        "codex",
        "s2",
        4,
        "agent",
        1795950000.0,
        "the «flaky» snapshot came from the clock",
        ("src/app.tsx",),
        -2.2,
    ),
]


class StaticSource:
    """Serves one snapshot, canned screens and events; records each operation asked of it in
    `calls` (its name and arguments) and answers with the CLI's words. `failures` maps an
    operation's name to the error it raises instead."""

    def __init__(
        self, snapshot: Snapshot = SNAPSHOT, failures: Mapping[str, str] | None = None
    ) -> None:
        self.snap = snapshot
        self.failures = dict(failures or {})
        self.calls: list[tuple[object, ...]] = []
        self.host_views: dict[str, HostView] = {}  # remote hosts' answers (none: one machine)

    def stamp(self) -> object | None:
        return None  # canned data: the timer refreshes it as before

    def snapshot(self) -> Snapshot:
        return self.snap

    def preview(self, name: str, lines: int = 60, pane_id: str | None = None) -> str:
        return SCREENS.get(name, f"({name} has no screen: it hibernates)")

    def events(self, name: str, limit: int = 8) -> list[Event]:
        return EVENTS[-limit:]

    def git_counts(self, name: str) -> dict[str, object] | None:
        return None  # canned agents have no worktree

    def hosts(self) -> list[str]:
        return list(self.host_views)

    def host_view(self, host: str) -> HostView:
        return self.host_views[host]

    def remote_attach_argv(self, host: str, name: str) -> list[str]:
        self._called("remote_attach", host, name)
        return ["ssh", "-tt", "--", host, f"roost attach {name}"]

    def changes(self, name: str) -> tuple[Diff, list[Seen]]:
        self._called("changes", name)
        return CHANGE, []

    def comment(self, name: str, path: str, line: int, text: str) -> str:
        self._called("comment", name, path, line, text)
        return f"comment #1 on {path}, line {line}; send it: roost review send {name}"

    def send_review(self, name: str) -> str:
        self._called("send_review", name)
        return f"sent 1 comment to {name} (hook)"

    def merge_hunks(self, name: str, picks: list[tuple[str, int, str]]) -> str:
        self._called("merge_hunks", name, tuple(picks))
        n = len(picks)
        return (
            f"merged {name} (roost/{name}) into main: {n} hunk{'s' if n != 1 else ''} as one commit"
        )

    def search(self, query: str) -> list[Hit]:
        self._called("search", query)
        return [h for h in HITS if query.strip("*").lower() in h.snippet.lower()]

    def fork_at(self, ref: str, new: str) -> str:
        self._called("fork_at", ref, new)
        return f"forked {new} from {ref} (claude)"

    def _called(self, operation: str, *args: object) -> None:
        self.calls.append((operation, *args))
        if operation in self.failures:
            raise RoostError(self.failures[operation])

    def _home(self, name: str) -> str:
        return next((o.agent.home for o in self.snap.items if o.agent.name == name), name)

    # ---- operations ------------------------------------------------------------------------------
    def spawn(
        self,
        name: str,
        provider: str,
        cwd: str | None,
        tab: str | None,
        args: tuple[str, ...] = (),
        prompt: str | None = None,
    ) -> str:
        self._called("spawn", name, provider, cwd, tab, args, prompt)
        return present.spawned(name, provider, PID, name, first_start=True)

    def wake(self, name: str) -> str:
        self._called("wake", name)
        return present.woke(name, True, PID, self._home(name))

    def kill(self, name: str) -> str:
        self._called("kill", name)
        return present.stopped(name, 1)

    def park(self, name: str) -> str:
        self._called("park", name)
        return present.parked([name])

    def bury(self, name: str) -> str:
        self._called("bury", name)
        return present.buried(name)

    def unbury(self, name: str) -> str:
        self._called("unbury", name)
        return present.unburied(name, "main")

    def place(self, name: str, tab: str) -> str:
        self._called("place", name, tab)
        return present.placed(name, tab, PID)

    def toggle_pin(self, name: str) -> str:
        self._called("toggle_pin", name)
        if name in self.snap.pins:
            return present.unpinned(name, True)
        return present.pinned(name, True)

    def send(self, name: str, text: str) -> str:
        self._called("send", name, text)
        return present.delivered(name, "hook")

    def question(self, name: str) -> questions.Question:
        """The question on the agent's canned screen (read as roost reads a live one)."""
        return self._question(name)

    def _question(self, name: str) -> questions.Question:
        if "question" in self.failures:
            raise RoostError(self.failures["question"])
        found = next((o for o in self.snap.items if o.agent.name == name), None)
        if found is None:
            raise RoostError(f"no agent named {name!r}")
        if found.status != Status.WAITING:
            raise RoostError(f"{name} is not waiting for an answer (it is {found.status})")
        q = questions.read(self.preview(name))
        if q is None:
            raise RoostError(
                f"{name} is waiting, but roost cannot read its choices: roost attach {name}"
            )
        return q

    def answer(self, name: str, choice: str, fingerprint: str) -> str:
        self._called("answer", name, choice, fingerprint)
        q = self._question(name)
        if q.fingerprint != fingerprint:
            raise RoostError(
                f"{name}'s question changed since it was shown (now: {q.text!r}); "
                "nothing was pressed"
            )
        picked = q.find(choice)
        if picked is None:
            raise RoostError(f"{name}'s question offers no choice {choice!r}")
        return present.answered(name, picked.label, "idle", None, None)

    def restore(self) -> str:
        self._called("restore")
        tiled = [name for _tab, names in self.snap.tab_tiles for name in names]
        rest = [o.agent.name for o in self.snap.items if o.agent.name not in tiled]
        return (
            restoring.Report(
                live=len(tiled),
                started=[],
                already_running=tiled,
                hibernated=rest,
                failed={},
                peak=0,
                seconds=0.0,
            )
            .text()
            .rstrip("\n")
        )

    def edit_layout(self, tab: str, name: str, edit: str) -> str:
        self._called("edit_layout", tab, name, edit)
        return present.layout_edited(name, tab, edit)

    def balance_tab(self, tab: str) -> str:
        self._called("balance_tab", tab)
        return present.tab_balanced(tab, len(dict(self.snap.tab_tiles).get(tab, [])))

    # ---- handing the terminal to tmux ---------------------------------------------------------
    def attach_argv(self, name: str) -> list[str]:
        return ["tmux", "attach", "-t", name]

    def open_tab_argv(self, tab: str) -> list[str]:
        return ["tmux", "attach", "-t", f"view-{tab}"]


def main() -> None:
    """The TUI on the demo data, at NOW (attaching only says what it would run)."""
    from roost.tui.app import RoostApp

    app = RoostApp(
        source=StaticSource(),
        refresh_every=0,
        clock=lambda: NOW,
        attacher=lambda argv: app.notify(f"would run: {' '.join(argv)}"),
    )
    app.run()


if __name__ == "__main__":
    main()
