"""A phone in headless Chromium (issue 40): roost web pair's link opened in the browser; the page
links the manifest and registers the service worker; the service's encrypted push for a waiting
agent, decrypted by the loopback push service, is handed to that worker through the DevTools
protocol (`ServiceWorker.deliverPushMessage`), which shows the notification with the question's
choices; its "Yes" action reaches /push/answer, the real dialog is answered, and the receipt
push is shown on the page.

Two stand-ins, said plainly: Chromium offline has no push service to subscribe with, so the page
posts a subscription the test made (its keys are the loopback push service's); and headless
Chromium cannot tap a notification, so the page asks the worker to act as the tap would (its
`roostClick` message runs the same handler as `notificationclick`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from push_service import PushService
from test_web_browser import shot, wait

from roost.push.operations import LOOPBACK_ENV

from conftest import Env
from web_server import chromium, running

pytestmark = pytest.mark.tmux
FIRST_REGISTRATION = "0"  # a new profile's first service worker registration


@pytest.fixture
def service() -> Iterator[PushService]:
    made = PushService().start()
    yield made
    made.stop()


def notifications(driver: Any) -> list[dict[str, Any]]:
    found = driver.execute_async_script(
        "const done = arguments[0];"
        "navigator.serviceWorker.ready.then((r) => r.getNotifications())"
        ".then((ns) => done(ns.map((n) => ({title: n.title, body: n.body, tag: n.tag,"
        " actions: n.actions.map((a) => [a.action, a.title])}))))"
        ".catch((e) => done([{error: String(e)}]));"
    )
    return list(json.loads(json.dumps(found)))


def deliver(driver: Any, origin: str, payload: dict[str, Any]) -> None:
    driver.execute_cdp_cmd(
        "ServiceWorker.deliverPushMessage",
        {"origin": origin, "registrationId": FIRST_REGISTRATION, "data": json.dumps(payload)},
    )


def pushed_line(driver: Any) -> str:
    return str(driver.execute_script("return document.getElementById('pushed').textContent"))


def test_a_push_shows_a_notification_whose_action_answers_the_agent(
    world: Env, service: PushService
) -> None:
    world.roost("spawn", "api", "--cwd", str(world.tmp / "work"))
    world.wait_status("api", "idle")
    pane = world.pane_of("api")
    with (
        running(world, env={LOOPBACK_ENV: "1"}) as web,
        chromium(world.tmp, 390, 844) as driver,  # a phone's window
    ):
        link = world.roost("web", "pair", "--no-qr", "--url", web.base).stdout.strip()
        driver.get(link)
        wait(driver, lambda d: d.execute_script("return document.body.dataset.worker") == "1")
        assert driver.current_url == web.base + "/"
        manifest = driver.execute_async_script(
            "const done = arguments[0];"
            "const href = document.querySelector('link[rel=manifest]').href;"
            "fetch(href).then((r) => r.json()).then(done);"
        )
        assert manifest["display"] == "standalone" and manifest["start_url"] == "/"
        scope = driver.execute_async_script(
            "navigator.serviceWorker.ready.then((r) => arguments[0](r.scope))"
        )
        assert scope == web.base + "/"
        driver.execute_cdp_cmd(
            "Browser.grantPermissions", {"permissions": ["notifications"], "origin": web.base}
        )
        driver.execute_cdp_cmd("ServiceWorker.enable", {})
        sub = service.subscription()
        said = driver.execute_async_script(
            "post('/push/subscribe', arguments[0]).then(arguments[1])", sub.json()
        )
        assert said == {"subscribed": True}
        driver.refresh()  # as the phone's next visit: notifications allowed, push on
        wait(driver, lambda d: d.execute_script("return document.body.dataset.live") == "1")
        world.start_service(hearing="api")
        world.type(pane, "ask")
        [pushed] = service.wait(1, 60, "the waiting agent's push")
        deliver(driver, web.base, pushed.payload)
        shown = wait(driver, notifications)
        assert shown == [
            {
                "title": "roost: api is waiting for you",
                "body": pushed.payload["body"],
                "tag": "roost-api",
                "actions": [["1", "Yes"], ["2", "No"]],
            }
        ]
        wait(driver, lambda d: pushed_line(d) == "roost: api is waiting for you")
        assert driver.execute_script("return document.getElementById('push').hidden") is True
        shot(driver, "web-phone.png")
        # the tap on "Yes" (the worker's own handler, through its test hook)
        driver.execute_script(
            "navigator.serviceWorker.ready.then((r) => r.active.postMessage("
            "{roostClick: {tag: 'roost-api', action: '1'}}))"
        )
        wait(driver, lambda d: pushed_line(d).startswith("applied: Yes — api is"), 60)
        world.wait_for(lambda: "Do you want to proceed?" not in world.screen(pane))
        receipt = service.wait(2, 30, "the receipt")[1].payload
        assert str(receipt["title"]).startswith("applied: Yes")
        deliver(driver, web.base, receipt)
        wait(driver, lambda d: [n["title"] for n in notifications(d)] == [receipt["title"]])
        shot(driver, "web-phone-receipt.png")
    kinds = [e["kind"] for e in json.loads(world.roost("events", "--json").stdout)]
    assert kinds.count("answered") == 1


def test_a_reply_typed_into_the_notification_reaches_the_agent(
    world: Env, service: PushService
) -> None:
    """A child of a person's agent finishes its turn: the notification's one action is a text
    field (type "text", Chromium's inline reply); the worker's handler, given the typed words
    as `event.reply` (headless Chromium cannot type into a notification: the test hook hands
    it the reply as the platform would), POSTs them with the reply capability and the agent
    gets them as its next prompt."""
    from test_notify_e2e import prompts
    from test_push_reply import children_of_a_person

    children_of_a_person(world, "kid")
    with (
        running(world, env={LOOPBACK_ENV: "1"}) as web,
        chromium(world.tmp, 390, 844) as driver,
    ):
        link = world.roost("web", "pair", "--no-qr", "--url", web.base).stdout.strip()
        driver.get(link)
        wait(driver, lambda d: d.execute_script("return document.body.dataset.worker") == "1")
        driver.execute_cdp_cmd(
            "Browser.grantPermissions", {"permissions": ["notifications"], "origin": web.base}
        )
        driver.execute_cdp_cmd("ServiceWorker.enable", {})
        said = driver.execute_async_script(
            "post('/push/subscribe', arguments[0]).then(arguments[1])",
            service.subscription().json(),
        )
        assert said == {"subscribed": True}
        driver.refresh()
        wait(driver, lambda d: d.execute_script("return document.body.dataset.live") == "1")
        world.start_service(hearing="kid")
        world.type(world.pane_of("kid"), "work 1")
        [pushed] = service.wait(1, 60, "the finished turn's push")
        deliver(driver, web.base, pushed.payload)
        shown = wait(driver, text_actions)
        assert shown == [
            {"tag": "roost-kid", "actions": [["reply", "Reply", "text", "Reply to kid"]]}
        ]
        driver.execute_script(
            "navigator.serviceWorker.ready.then((r) => r.active.postMessage("
            "{roostClick: {tag: 'roost-kid', action: 'reply', reply: 'run the tests'}}))"
        )
        wait(driver, lambda d: pushed_line(d).startswith("applied: your reply — kid is"), 60)
        assert prompts(world, "kid")[-1] == "run the tests"


def text_actions(driver: Any) -> list[dict[str, Any]]:
    found = driver.execute_async_script(
        "const done = arguments[0];"
        "navigator.serviceWorker.ready.then((r) => r.getNotifications())"
        ".then((ns) => done(ns.map((n) => ({tag: n.tag, actions: n.actions.map("
        "(a) => [a.action, a.title, a.type, a.placeholder])}))))"
        ".catch((e) => done([{error: String(e)}]));"
    )
    return list(json.loads(json.dumps(found)))
