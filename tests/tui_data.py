"""Canned data for the TUI's snapshot tests and the README screenshot: deterministic, no tmux."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from roost.core.observation import Observation, Record
from roost.tui.data import Snapshot

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def item(name: str, status: str, provider: str = "claude", placement: str = "tile",
         tab: str | None = "main", minutes: int = 3, pinned: bool = False,
         linked_parent: str | None = None, orchestration_parent: str | None = None,
         exit_code: int | None = None) -> Observation:
    alive = status in ("working", "idle", "waiting")
    when = (NOW - timedelta(minutes=minutes)).isoformat()
    record = Record(
        id=f"id-{name}", name=name, provider=provider, cwd=f"/home/dev/src/{name}", home=name,
        provider_session_id=f"5f0c…{name}", placement=placement, tab=tab, pinned=pinned,
        linked_parent=linked_parent, orchestration_parent=orchestration_parent,
        last_active_at=when, intent="running" if alive else "stopped")
    return Observation(
        record, pane=None, alive=alive,
        state="running" if alive else "hibernated" if status == "hibernated" else "stopped",
        pid=4242 if status in ("working", "idle", "waiting", "starting") else None,
        exit_code=exit_code, status=status,
        status_source="hook" if provider == "claude" else "screen", status_since=when)


ITEMS = [
    item("api-fix", "working", minutes=1, pinned=True),
    item("api-tests", "waiting", orchestration_parent="api-fix", minutes=0),
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
    layouts={"main": {"split": "v", "ratio": 0.5, "a": {"leaf": "api-fix"},
                      "b": {"leaf": "api-tests"}},
             "ui": {"split": "h", "ratio": 0.6, "a": {"leaf": "frontend"},
                    "b": {"leaf": "docs"}}},
)

SCREENS = {
    "api-fix": "● Reading src/api/login.py\n● Running the tests\n\n✻ Working… (esc to interrupt)",
    "api-tests": "Bash(pytest -x tests/test_login.py)\n\nDo you want to proceed?\n❯ 1. Yes\n"
                 "  2. No\n\nEsc to cancel",
    "frontend": "› add a loading spinner to the login form\n\n• Done.\n\n❯ ",
    "docs": "✦ Updated README.md\n\n> ",
}


class StaticSource:
    """A TUI source with canned data; records the actions asked of it."""

    def __init__(self, snapshot: Snapshot = SNAPSHOT) -> None:
        self.snap = snapshot
        self.actions: list[tuple] = []

    def snapshot(self) -> Snapshot:
        return self.snap

    def preview(self, name: str, lines: int = 60, pane_id: str | None = None) -> str:
        return SCREENS.get(name, f"({name} has no screen: it hibernates)")

    def events(self, name: str, limit: int = 8) -> list[dict]:
        return [{"at": "2026-11-29T11:58:00+00:00", "kind": "started"},
                {"at": "2026-11-29T11:59:00+00:00", "kind": "status", "status": "working"}]

    def act(self, action: str, name: str | None = None, **kw: object) -> str:
        self.actions.append((action, name, kw))
        if action == "kill" and name == "boom":
            raise RuntimeError("kill failed: boom")
        return f"{action} {name}"

    def attach_argv(self, name: str) -> list[str]:
        return ["tmux", "attach", "-t", name]

    def open_tab_argv(self, tab: str) -> list[str]:
        return ["tmux", "attach", "-t", f"view-{tab}"]
