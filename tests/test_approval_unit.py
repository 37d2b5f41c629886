"""An import's arguments kept aside for approval (issue 35, finding 5), on the fake tmux: a CLI
agent whose arguments were left off never starts without them, `approve` makes them its own
with an event, an export carries them, and a changed proposal is never approved unseen."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest
from test_import_hostile import one_agent

from roost.core.errors import RoostError
from roost.ops import lifecycle, transfer
from roost.ops.context import App
from roost.store import exchange
from roost.store.db import Store
from roost.store.schema import MIGRATIONS, SCHEMA_VERSION, apply
from roost.tmux.fake import FakeTmux

ARGS = ["--model", "opus", "--settings", '{"permissions": {"allow": ["Bash"]}}']


def imported(app: App, allow_dangerous: bool = False, **change: Any) -> str:
    app.environ["ROOST_CLAUDE_BIN"] = "/bin/sh"  # the fake tmux never runs it
    data = one_agent(args=ARGS, cwd=str(app.paths.home), **change)
    transfer.import_(app, data, allow_dangerous)
    return str(data["agents"][0]["id"])


def test_a_cli_agent_whose_arguments_were_left_off_waits_for_approval(
    app: App, fake: FakeTmux
) -> None:
    count, left = transfer.import_(
        app, one_agent(args=ARGS, cwd=str(app.paths.home)), allow_dangerous=False
    )
    assert count == 1 and any("roost approve guest" in line for line in left)
    guest = app.store.require("guest")
    assert guest.args == () and guest.needs_approval
    with pytest.raises(RoostError, match="roost approve guest") as refused:
        lifecycle.wake(app, "guest")
    assert refused.value.code == 2 and fake.list_panes() == []
    assert app.store.require("guest").last_error is None  # not a failed start: never tried

    agent, proposed = transfer.proposal(app, "guest")
    assert proposed == ARGS and agent.name == "guest"
    approved = transfer.approve(app, "guest", proposed)
    assert approved.args == tuple(ARGS) and not approved.needs_approval
    [event] = [e for e in app.store.events(agent.id) if e.kind == "approved"]
    assert event.data["args"] == ARGS

    app.environ["ROOST_CLAUDE_BIN"] = "/bin/sh"
    assert lifecycle.wake(app, "guest").started
    assert fake.pane_of(agent.id) is not None


def test_only_what_was_shown_is_approved(app: App) -> None:
    imported(app)
    with pytest.raises(RoostError, match="changed meanwhile") as refused:
        transfer.approve(app, "guest", ["--model", "haiku"])
    assert refused.value.code == 2
    assert app.store.require("guest").needs_approval and app.store.require("guest").args == ()


def test_with_allow_dangerous_nothing_waits(app: App) -> None:
    imported(app, allow_dangerous=True)
    guest = app.store.require("guest")
    assert guest.args == tuple(ARGS) and not guest.needs_approval
    assert transfer.proposal(app, "guest")[1] is None


def test_an_export_carries_the_proposal_and_a_plain_import_keeps_it_aside(
    app: App, tmp_path: Path
) -> None:
    """The file round-trips: the proposal goes out as the agent's arguments, and comes back in
    aside again (the flag, the person's say-so, would make it theirs)."""
    imported(app)
    data = transfer.export(app)
    assert data["agents"][0]["args"] == ARGS
    for flag, waits in ((False, True), (True, False)):
        other = App(
            paths=app.paths,
            store=Store.open(tmp_path / f"other-{flag}.db"),
            tmux=app.tmux,
            environ={},
            on_status=app.on_status,
        )
        transfer.import_(other, data, allow_dangerous=flag)
        again = other.store.require("guest")
        assert again.needs_approval is waits
        assert (again.args == ()) is waits
        if waits:
            assert transfer.export(other)["agents"] == data["agents"]
        other.store.close()


def test_forgetting_the_agent_forgets_its_proposal(app: App) -> None:
    agent_id = imported(app)
    lifecycle.rm(app, "guest")
    assert exchange.proposal(app.store.conn, agent_id) is None


def test_the_migration_adds_the_table_to_a_store_of_the_version_before(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "old.db")
    apply(conn, 0, SCHEMA_VERSION - 1)
    conn.commit()
    conn.close()
    store = Store.open(tmp_path / "old.db")
    try:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        with store.write() as c:
            c.execute(
                "INSERT INTO agents (id, name, provider, cwd, home, created_at, intent) "
                "VALUES (?, 'a', 'command', '/w', 'a', '2031-01-01T00:00:00+00:00', 'stopped')",
                (str(uuid.uuid4()),),
            )
        assert [a.needs_approval for a in store.agents()] == [False]
    finally:
        store.close()
