"""push/operations.py in an injected world (the fake tmux, a manual clock, the real store) and a
loopback push service that checks VAPID and decrypts (tests/push_service.py): pairing once and
in time, revocation at once, subscriptions refused, an alert's encrypted push with the question's
choices, quiet while the device's page shows that agent, a gone subscription forgotten, and every
capability that must be refused refused, logged, with nothing pressed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_app import clock_of, fake_app
from push_service import PushService

from roost.alerts import operations as alerts
from roost.core.errors import RoostError
from roost.core.pane import agent_panes
from roost.ops.context import App
from roost.push import operations as push
from roost.push import rules
from roost.store import push as rows

DIALOG = "Bash command\n  rm -rf build\nDo you want to proceed?\n❯ 1. Yes\n  2. No\n"


@pytest.fixture
def service() -> Iterator[PushService]:
    made = PushService().start()
    yield made
    made.stop()


@pytest.fixture
def app(tmp_path: Path, fake: Any, clock: Any) -> Iterator[App]:
    waiting = {"command": {"waiting": ["Do you want to proceed?"], "idle": ["ready>"]}}
    settings = {"notify": {"terminal": False}, "status": {"patterns": waiting}}
    made = fake_app(tmp_path, fake, clock, settings)
    made.environ[push.LOOPBACK_ENV] = "1"
    yield made
    made.close()


def paired(app: App, name: str = "phone") -> push.Paired:
    return push.pair(app, push.pairing_code(app), name, None)


def refusals(app: App) -> list[str]:
    return [str(e.data.get("why")) for e in app.store.events() if e.kind == "push-refused"]


def presses(app: App) -> list[tuple[object, ...]]:
    fake = app.tmux
    return [c for c in fake.history if c[0] == "press"]  # type: ignore[attr-defined]


def waiting_agent(app: App, name: str = "api") -> tuple[str, str]:
    """A running agent whose screen asks a question; (agent id, pane id)."""
    from roost.ops import lifecycle

    agent = lifecycle.spawn(
        app, name, provider="command", cwd=str(app.paths.home), args=("sh",)
    ).agent
    pane = agent_panes(app.tmux.list_panes())[agent.id].pane_id
    app.tmux.set_screen(pane, DIALOG)  # type: ignore[attr-defined]
    return agent.id, pane


def test_a_pairing_link_pairs_one_device_once_and_only_in_time(app: App) -> None:
    code = push.pairing_code(app)
    made = push.pair(app, code, None, "Mozilla/5.0 (Linux; Android 14) Chrome/120")
    assert made.name == "Android (Chrome)"
    assert push.device_of(app, made.cookie) == made.device_id
    with pytest.raises(RoostError, match="used or has expired"):
        push.pair(app, code, None, None)  # the same link again
    late = push.pairing_code(app)
    clock_of(app).advance(rules.PAIRING_TTL + 1)
    with pytest.raises(RoostError, match="used or has expired"):
        push.pair(app, late, None, None)
    with pytest.raises(RoostError, match="not a pairing code"):
        push.pair(app, "a b", None, None)
    assert [d.id for d in push.devices(app)] == [made.device_id]
    clock_of(app).advance(push.SEEN_EVERY + 1)
    assert push.device_of(app, made.cookie) == made.device_id
    [device] = push.devices(app)
    assert device.last_seen == app.store.now_iso() != device.paired_at


def test_the_store_keeps_no_secret_in_the_clear(app: App) -> None:
    made = paired(app)
    secret = made.cookie.split(".", 1)[1]
    dump = "\n".join(app.store.conn.iterdump())
    assert secret not in dump and rules.digest(secret) in dump


def test_a_revoked_device_is_refused_at_once_and_loses_its_subscription(
    app: App, service: PushService
) -> None:
    made = paired(app)
    push.subscribe(app, made.device_id, service.subscription().json())
    assert rows.targets(app.store.conn)
    push.revoke(app, made.device_id)
    assert push.device_of(app, made.cookie) is None
    assert rows.targets(app.store.conn) == []
    with pytest.raises(RoostError, match="revoked already"):
        push.revoke(app, made.device_id)
    with pytest.raises(RoostError, match="no device"):
        push.revoke(app, "nosuch")
    forged = made.device_id + "." + "x" * 43
    assert push.device_of(app, forged) is None


@pytest.mark.parametrize(
    ("endpoint", "why"),
    [
        pytest.param("https://10.0.0.2/push/x", "private address", id="private"),
        pytest.param("http://push.example.org/x", "https", id="http"),
    ],
)
def test_a_bad_subscription_is_refused_logged_and_not_kept(
    app: App, endpoint: str, why: str
) -> None:
    made = paired(app)
    app.environ.pop(push.LOOPBACK_ENV)
    body = {"endpoint": endpoint, "keys": {"p256dh": "BAAA", "auth": "AAAA"}}
    with pytest.raises(RoostError, match=why):
        push.subscribe(app, made.device_id, body)
    assert rows.targets(app.store.conn) == [] and why in refusals(app)[-1]


def test_a_waiting_agent_pushes_its_question_encrypted_with_its_choices(
    app: App, service: PushService
) -> None:
    made, other = paired(app, "phone"), paired(app, "tablet")
    subs = {d.device_id: service.subscription() for d in (made, other)}
    for device, sub in subs.items():
        push.subscribe(app, device, sub.json())
    agent_id, _ = waiting_agent(app)
    alerts.run_pass(app)  # the spawn's events
    app.store.log(app.store.require("api"), "status", status="waiting", previous="working")
    done = alerts.run_pass(app)
    assert [d.outcome.get("push") for d in done] == ["ok"]
    got = {r.sub: r for r in service.wait(2)}
    assert service.refused == []
    first = got[subs[made.device_id].id]
    assert first.vapid_key == push.public_key(app.paths.home)
    assert first.payload["title"] == "roost: api is waiting for you"
    assert first.payload["actions"] == [
        {"action": "1", "title": "Yes"},
        {"action": "2", "title": "No"},
    ]
    # each device its own capability, bound to it
    caps = {sub: r.payload["capability"] for sub, r in got.items()}
    assert len(set(caps.values())) == 2
    stored = rows.capability(app.store.conn, rules.digest(str(first.payload["capability"])))
    assert stored is not None and stored.device_id == made.device_id
    assert stored.agent_id == agent_id and stored.fingerprint == first.payload["question"]


def test_quiet_while_the_devices_page_shows_that_agent(app: App, service: PushService) -> None:
    made = paired(app)
    push.subscribe(app, made.device_id, service.subscription().json())
    waiting_agent(app, "api")
    waiting_agent(app, "docs")
    alerts.run_pass(app)
    push.viewing(app, made.device_id, "api")
    for name in ("api", "docs"):
        app.store.log(app.store.require(name), "status", status="waiting", previous="working")
    alerts.run_pass(app)
    assert [r.payload["agent"] for r in service.wait(1)] == ["docs"]
    # a page that stopped saying so (closed without a word) is quiet no longer
    clock_of(app).advance(rules.VIEWING_FRESH + 1)
    assert [
        p.data["agent"]
        for p in push.prepare(app, app.store.require("api").id, "api", "error", "t", "b")
    ] == ["api"]


def test_only_edges_that_need_the_person_reach_the_phone(app: App, service: PushService) -> None:
    made = paired(app)
    push.subscribe(app, made.device_id, service.subscription().json())
    waiting_agent(app)
    alerts.run_pass(app)
    agent = app.store.require("api")
    app.store.log(agent, "status", status="exited", previous="idle", exit_code=0)
    app.store.log(agent, "status", status="error", previous="exited", reason="API Error: 500")
    done = alerts.run_pass(app)  # returns once every channel answered
    assert [d.alert.edge for d in done] == ["exited", "error"]
    assert [(r.payload["edge"], r.payload["body"]) for r in service.received] == [
        ("error", "API Error: 500")
    ]


def test_a_subscription_the_push_service_dropped_is_forgotten(
    app: App, service: PushService
) -> None:
    made = paired(app)
    sub = service.subscription()
    push.subscribe(app, made.device_id, sub.json())
    service.status[sub.id] = 410
    waiting_agent(app)
    alerts.run_pass(app)
    app.store.log(app.store.require("api"), "status", status="error", previous="working")
    alerts.run_pass(app)
    assert rows.targets(app.store.conn) == []
    assert [d.subscribed for d in push.devices(app)] == [False]


def capability(app: App, device: str) -> str:
    agent = app.store.require("api")
    return push.mint(app, device, agent.id, "api", "f00d")


@pytest.mark.parametrize(
    ("case", "why"),
    [
        pytest.param("forged", "unknown capability", id="forged"),
        pytest.param("replayed", "already used", id="replayed"),
        pytest.param("expired", "expired", id="expired"),
        pytest.param("other-device", "another device", id="other-device"),
        pytest.param("revoked", "revoked", id="revoked"),
        pytest.param("malformed", "malformed", id="malformed"),
    ],
)
def test_capabilities_refused_logged_nothing_pressed(app: App, case: str, why: str) -> None:
    made, other = paired(app), paired(app, "other")
    waiting_agent(app)
    cap = capability(app, made.device_id)
    device: str | None = made.device_id
    if case == "forged":
        cap = "x" * 43
    elif case == "replayed":
        first = push.answer(app, cap, "1", device)  # used, whatever came of it (no question)
        assert first.refused is not None and "capability" not in first.refused
    elif case == "expired":
        clock_of(app).advance(rules.CAPABILITY_TTL + 1)
    elif case == "other-device":
        device = other.device_id
    elif case == "revoked":
        push.revoke(app, made.device_id)
        device = None  # its cookie no longer names it: the capability's device is checked
    elif case == "malformed":
        cap = "a b;c"
    before = presses(app)
    done = push.answer(app, cap, "1", device)
    assert done.refused is not None and why in done.refused, done
    assert why in refusals(app)[-1]
    assert presses(app) == before
    assert not [e for e in app.store.events() if e.kind == "answered"]


def test_a_question_changed_since_the_push_is_refused_nothing_pressed(app: App) -> None:
    """A capability for one question, the screen now asking another: ops/answer.py refuses."""
    made = paired(app)
    waiting_agent(app)
    cap = capability(app, made.device_id)  # fingerprint "f00d": not the one on the screen
    done = push.answer(app, cap, "1", made.device_id)
    assert done.refused is not None and "question changed" in done.refused, done
    assert presses(app) == []
