"""A phone and an agent on a host (issue 40 point 5), end to end over real OpenSSH (tests/sshd.py):
host h1 is a second roost world (its ROOST_HOME, tmux server and service) with the suite's fake
claude waiting at a real permission dialog; this roost's service follows h1's event stream over
its master and pushes h1's alert to the phone paired here (the loopback push service checks
VAPID and decrypts, tests/push_service.py); the phone's answer (POST /push/answer with the
capability) is applied ON h1 by h1's own `roost answer`, the receipt says what h1 answered; an
answer to a dialog that is no longer there is refused by h1, nothing pressed."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator

import pytest
from push_service import PushService
from sshd import Fleet
from test_push_e2e import TEST_ENV, pair

from conftest import Env
from web_server import Client, running

pytestmark = pytest.mark.tmux
ASKED = "Do you want to proceed?"


@pytest.fixture
def service() -> Iterator[PushService]:
    made = PushService().start()
    yield made
    made.stop()


def test_a_hosts_waiting_agent_reaches_the_phone_and_is_answered_on_that_host(
    fleet: Fleet, service: PushService
) -> None:
    h1 = fleet.add("h1")
    local, there = fleet.local, h1.world
    (there.tmp / "work").mkdir(exist_ok=True)
    for name in ("api", "web"):
        there.roost("spawn", name, "--cwd", str(there.tmp / "work"))
        there.wait_status(name, "idle")
    pane = there.pane_of("api")
    there.start_service(hearing="api")  # h1's own alerts decider judges its edges
    there.start_service(hearing="web")
    with running(local, env=TEST_ENV) as web:
        phone = pair(local, web, "phone")
        assert phone.post("/push/subscribe", service.subscription().json())[0] == 200
        local.start_service()
        # its follower of h1 stands at h1's newest event: what comes next is pushed
        local.wait_for(lambda: _cursor(local) is not None, 60, "this service following h1")
        there.type(pane, "ask")  # on h1: api waits for its person
        [pushed] = service.wait(1, 60, "h1's waiting agent's push")
        data = pushed.payload
        assert data["title"] == "roost: api is waiting for you (on h1)", data
        assert data["agent"] == "h1:api" and data["edge"] == "waiting" and data["url"] == "/"
        assert data["actions"] == [{"action": "1", "title": "Yes"}, {"action": "2", "title": "No"}]
        assert ASKED in str(data["body"])
        asked = json.loads(there.roost("answer", "api", "--json").stdout)
        assert data["question"] == asked["question_id"]  # h1's own fingerprint
        cap = str(data["capability"])

        # the phone's answer: applied by h1's roost, on h1's screen
        status, body = phone.post("/push/answer", {"capability": cap, "choice": "1"})
        assert status == 200 and body["applied"] is True, body
        assert body["choice"] == "Yes" and body["status"] == "idle", body
        assert ASKED not in there.screen(pane)
        receipt = service.wait(2, 30, "the receipt")[1].payload
        assert receipt["kind"] == "receipt" and receipt["title"] == "applied: Yes — h1:api is idle"
        h1_kinds = [e["kind"] for e in json.loads(there.roost("events", "--json").stdout)]
        assert h1_kinds.count("answered") == 1  # h1 logged the answer it pressed
        status, body = Client(web).post("/push/answer", {"capability": cap, "choice": "1"})
        assert status == 409 and body["error"] == "capability already used"

        # another agent's dialog, answered on h1 by its person before the phone's answer
        # comes: h1 refuses the phone's, nothing pressed
        other = there.pane_of("web")
        there.type(other, "ask")
        second = service.wait(3, 60, "the other agent's push")[2].payload
        assert second["agent"] == "h1:web" and second["capability"] != cap
        there.roost("answer", "web", "2")
        there.wait_for(lambda: ASKED not in there.screen(other), 30, "h1's own answer")
        status, body = phone.post(
            "/push/answer", {"capability": second["capability"], "choice": "1"}
        )
        assert status == 409 and str(body["error"]).startswith("host h1: web is not"), body
        refused = service.wait(4, 30, "the refusal's receipt")[3].payload
        assert str(refused["title"]).startswith("not applied: host h1: web is not"), refused
    h1_kinds = [e["kind"] for e in json.loads(there.roost("events", "--json").stdout)]
    assert h1_kinds.count("answered") == 2  # its person's, and the phone's first: no other
    kinds = [e["kind"] for e in json.loads(local.roost("events", "--json").stdout)]
    assert kinds.count("push-answering") == 2 and kinds.count("push-answered") == 1
    assert kinds.count("push-refused") == 2  # the replay, and h1's refusal


def _cursor(world: Env) -> int | None:
    with contextlib.closing(sqlite3.connect(world.home / "roost.db")) as db:
        row = db.execute("SELECT seq FROM push_host_cursors WHERE host = 'h1'").fetchone()
    return None if row is None else int(row[0])


def test_a_reply_to_a_hosts_agent_is_sent_by_that_hosts_roost(
    fleet: Fleet, service: PushService
) -> None:
    """A child of a person's agent on h1 finishes its turn: the push carries a text field; the
    reply POSTed here is h1's own acknowledged `roost send`, its CLI's prompt hook there
    carries the words."""
    from test_notify_e2e import prompts
    from test_push_reply import children_of_a_person

    h1 = fleet.add("h1")
    local, there = fleet.local, h1.world
    (there.tmp / "work").mkdir(exist_ok=True)
    children_of_a_person(there, "kid")
    there.start_service(hearing="kid")
    with running(local, env=TEST_ENV) as web:
        phone = pair(local, web, "phone")
        assert phone.post("/push/subscribe", service.subscription().json())[0] == 200
        local.start_service()
        local.wait_for(lambda: _cursor(local) is not None, 60, "this service following h1")
        there.type(there.pane_of("kid"), "work 1")
        [pushed] = service.wait(1, 60, "h1's finished turn's push")
        data = pushed.payload
        assert data["title"] == "roost: kid finished its turn (on h1)" and data["agent"] == "h1:kid"
        assert [a["type"] for a in data["actions"]] == ["text"]
        status, body = phone.post(
            "/push/answer", {"capability": data["capability"], "text": "now the docs; $(id)"}
        )
        assert status == 200 and body["choice"] == "your reply", body
        assert prompts(there, "kid")[-1] == "now the docs; $(id)"  # one argv word, as typed
        receipt = service.wait(2, 30, "the receipt")[1].payload
        assert receipt["title"] == "applied: your reply — h1:kid"  # h1 confirmed it


def test_an_alert_on_a_host_while_this_service_was_stopped_is_pushed_once_at_its_start(
    fleet: Fleet, service: PushService
) -> None:
    """The follower resumes h1's stream from its cursor: an edge on h1 while this roost's
    service was stopped is pushed when it starts again, and a restart after that pushes
    nothing twice."""
    h1 = fleet.add("h1")
    local, there = fleet.local, h1.world
    (there.tmp / "work").mkdir(exist_ok=True)
    for name in ("api", "web"):
        there.roost("spawn", name, "--cwd", str(there.tmp / "work"))
        there.wait_status(name, "idle")
    there.start_service(hearing="api")
    there.start_service(hearing="web")
    with running(local, env=TEST_ENV) as web:
        phone = pair(local, web, "phone")
        assert phone.post("/push/subscribe", service.subscription().json())[0] == 200
        local.start_service()
        local.wait_for(lambda: _cursor(local) is not None, 60, "this service following h1")
        local.roost("service", "stop")
        there.type(there.pane_of("api"), "ask")
        alerted = there.wait_for(lambda: _alert_seq(there), 60, "h1's alert")
        local.start_service()
        [pushed] = service.wait(1, 60, "the alert decided while this service was stopped")
        assert pushed.payload["agent"] == "h1:api" and pushed.payload["edge"] == "waiting"
        local.wait_for(lambda: (_cursor(local) or 0) >= alerted, 30, "the cursor past it")
        local.roost("service", "stop")
        local.start_service()
        there.type(there.pane_of("web"), "ask")  # the next edge on h1: the one next pushed
        second = service.wait(2, 60, "the next alert")[1].payload
        assert second["agent"] == "h1:web"  # api's was not pushed again before it
        assert len(service.received) == 2


def _alert_seq(world: Env) -> int | None:
    found = json.loads(world.roost("events", "--json").stdout)
    return next((int(e["id"]) for e in reversed(found) if e["kind"] == "alert"), None)
