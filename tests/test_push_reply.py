"""A reply from a notification's text field (issue 40 point 3's "reply field"), over HTTP: the
real `roost web`, the real service, the suite's fake claude, the loopback push service. A child
of a person's agent that finishes its turn pushes a notification whose one action is a text
field ("type": "text") with a reply capability; its text POSTed with that capability goes in as
an acknowledged send (the CLI's own UserPromptSubmit hook carries it); a reply to an agent that
now asks something is refused and nothing is typed; a choice on a reply's capability (or text
on a question's) is refused and leaves the capability usable."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator

import pytest
from push_service import PushService
from test_notify_e2e import prompts
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


def children_of_a_person(world: Env, *names: str) -> None:
    """`lead` (a person's agent: no parent) and its orchestrated children `names`."""
    for name in ("lead", *names):
        world.roost("spawn", name, "--cwd", str(world.tmp / "work"))
        world.wait_status(name, "idle")
    ids = {name: world.ls()[name]["id"] for name in ("lead", *names)}
    with contextlib.closing(sqlite3.connect(world.home / "roost.db")) as db, db:
        for name in names:
            db.execute(
                "UPDATE agents SET orchestration_parent = ? WHERE id = ?", (ids["lead"], ids[name])
            )


def test_a_reply_typed_into_the_notification_is_sent_and_refused_when_it_now_asks(
    world: Env, service: PushService
) -> None:
    children_of_a_person(world, "kid", "other")
    kid, other = world.pane_of("kid"), world.pane_of("other")
    with running(world, env=TEST_ENV) as web:
        phone = pair(world, web, "phone")
        assert phone.post("/push/subscribe", service.subscription().json())[0] == 200
        world.start_service(hearing="kid")
        world.start_service(hearing="other")
        world.type(kid, "work 1")
        [pushed] = service.wait(1, 60, "the finished turn's push")
        data = pushed.payload
        assert data["title"] == "roost: kid finished its turn" and data["edge"] == "finished"
        assert data["actions"] == [
            {"action": "reply", "title": "Reply", "type": "text", "placeholder": "Reply to kid"}
        ]
        cap = str(data["capability"])
        # a choice on a reply's capability (as ntfy would post it: no device, no receipt):
        # refused, the capability still good
        bare = Client(web)
        status, body = bare.post("/push/answer", {"capability": cap, "choice": "1"})
        assert status == 409 and body["error"] == "this notification takes a reply, not a choice"
        status, body = bare.post("/push/answer", {"capability": cap, "choice": "1", "text": "x"})
        assert status == 409 and body["error"] == "malformed answer"
        # the reply: sent as `roost send` sends, confirmed by the CLI's own prompt hook
        status, body = phone.post("/push/answer", {"capability": cap, "text": "run the tests"})
        assert status == 200 and body["applied"] is True and body["choice"] == "your reply", body
        assert prompts(world, "kid")[-1] == "run the tests"
        receipt = service.wait(2, 30, "the receipt")[1].payload
        assert str(receipt["title"]).startswith("applied: your reply — kid is")

        # another child finishes, then asks something before the reply comes: refused
        world.type(other, "work 1")
        second = service.wait(3, 60, "the other's push")[2].payload
        assert second["agent"] == "other" and second["actions"][0]["type"] == "text"
        world.type(other, "ask")
        world.wait_status("other", "waiting", 30)
        before = prompts(world, "other")
        status, body = phone.post(
            "/push/answer", {"capability": second["capability"], "text": "stop now"}
        )
        assert status == 409, body
        assert body["error"] == "other now asks something (roost answer other); nothing typed"
        assert prompts(world, "other") == before and "stop now" not in world.screen(other)
        assert ASKED in world.screen(other)
        status, body = bare.post("/push/answer", {"capability": second["capability"], "text": "x"})
        assert status == 409 and body["error"] == "capability already used"
    kinds = [e["kind"] for e in json.loads(world.roost("events", "--json").stdout)]
    assert kinds.count("push-refused") == 4
