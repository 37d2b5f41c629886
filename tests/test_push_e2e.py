"""A phone end to end over HTTP (issue 40): the real `roost web`, the real roost service on a
private tmux server, the suite's fake claude, and a loopback push service that checks VAPID and
decrypts (tests/push_service.py). Pairing once, the device's own credential and its revocation;
an agent that starts waiting reaches the phone as an encrypted push with its choices; the answer
from it is applied to the real dialog and a receipt follows; a replay, another device's answer
and a revoked device's are refused, nothing typed."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from push_service import PushService
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from roost.push.operations import LOOPBACK_ENV

from conftest import Env
from web_server import Client, Web, running

pytestmark = pytest.mark.tmux
TEST_ENV = {LOOPBACK_ENV: "1"}


@pytest.fixture
def service() -> Iterator[PushService]:
    made = PushService().start()
    yield made
    made.stop()


def spawn(world: Env, name: str) -> None:
    world.roost("spawn", name, "--cwd", str(world.tmp / "work"))


def pair(world: Env, web: Web, name: str) -> Client:
    """`roost web pair`'s link opened by a phone: its device cookie, and its page's CSRF token."""
    link = world.roost("web", "pair", "--no-qr", "--url", web.base).stdout.strip()
    parts = urlsplit(link)
    assert parts.netloc == web.netloc and parts.path == "/pair", link
    phone = Client(web)
    status, headers, _ = phone.request("GET", f"{parts.path}?{parts.query}&name={name}")
    assert status == 303 and headers["location"] == "/", status
    cookie = headers["set-cookie"]
    assert cookie.startswith("roost_device=") and "HttpOnly" in cookie, cookie
    assert "samesite=strict" in cookie.lower()
    phone.cookie = cookie.split(";", 1)[0]
    status, _, page = phone.request("GET", "/")
    assert status == 200, status
    phone.csrf = page.split('name="roost-csrf" content="', 1)[1].split('"', 1)[0]
    again, _, _ = Client(web).request("GET", f"{parts.path}?{parts.query}")
    assert again == 403  # one device, once
    return phone


def devices(world: Env) -> list[dict[str, object]]:
    found = json.loads(world.roost("web", "devices", "--json").stdout)
    assert isinstance(found, list)
    return found


def test_pairing_gives_a_device_its_own_credential_and_revoking_it_works_at_once(
    world: Env, service: PushService
) -> None:
    spawn(world, "api")
    world.wait_status("api", "idle")
    with running(world, env=TEST_ENV) as web:
        phone = pair(world, web, "pixel")
        assert phone.cookie.split("=", 1)[1] not in (world.home / "web-token").read_text()
        sub = service.subscription()
        assert phone.post("/push/subscribe", sub.json()) == (200, {"subscribed": True})
        status, key = phone.request("GET", "/push/key")[::2]
        assert status == 200 and json.loads(key)["device"] is True
        [listed] = devices(world)
        assert listed["name"] == "pixel" and listed["subscribed"] is True
        # the checks every request passes: the device's cookie is no pass for a strange Host,
        # a POST from another origin, or one without its CSRF token
        assert phone.request("GET", "/", Host="evil.example:80")[0] == 403
        assert phone.post("/push/viewing", {}, Origin="http://evil.example")[0] == 403
        assert phone.post("/push/viewing", {}, X_Roost_CSRF="wrong")[0] == 403
        assert phone.post("/push/viewing", {"agent": "api"})[0] == 200
        # a forged cookie: no device; a login with the web token is not a device
        forged = Client(web, cookie=phone.cookie[:-4] + "AAAA")
        assert forged.request("GET", "/")[0] == 401
        master = Client(web)
        master.login()
        assert master.post("/push/subscribe", sub.json())[0] == 403
        # the terminal's socket: the device watches (read-only, as the watch token's login)
        ws_url, origin = f"ws://{web.netloc}/a/api/ws", {"Origin": web.base}
        with connect(ws_url, additional_headers={**origin, "Cookie": phone.cookie}) as ws:
            ws.send(json.dumps({"resize": [100, 30]}))
            assert ws.recv(timeout=10)
        said = world.roost("web", "devices", "revoke", str(listed["id"]))
        assert said.stdout.strip() == f"revoked {listed['id']}"
        assert phone.request("GET", "/")[0] == 401  # at once
        assert phone.post("/push/subscribe", sub.json())[0] == 401
        with pytest.raises(InvalidStatus) as refused:
            connect(ws_url, additional_headers={**origin, "Cookie": phone.cookie}, origin=None)
        assert refused.value.response.status_code == 403
        assert devices(world)[0]["revoked_at"] and devices(world)[0]["subscribed"] is False
        loopback = world.roost("web", "pair", "--no-qr")  # the default: [web] bind
        assert loopback.stdout.startswith("http://127.0.0.1:7377/pair?code=")
        assert "a phone cannot reach 127.0.0.1" in loopback.stderr
        bad = world.roost("web", "pair", "--url", "ftp://x", check=False)
        assert bad.returncode != 0 and "--url must be" in bad.stderr and not bad.stdout
        again = world.roost("web", "devices", "revoke", str(listed["id"]), check=False)
        assert again.returncode != 0 and "revoked already" in again.stderr
        assert master.request("GET", "/")[0] == 200  # the token's login is another matter


def test_a_waiting_agent_reaches_the_phone_and_its_answer_is_applied_with_a_receipt(
    world: Env, service: PushService
) -> None:
    spawn(world, "api")
    world.wait_status("api", "idle")
    pane = world.pane_of("api")
    with running(world, env=TEST_ENV) as web:
        phone, tablet = pair(world, web, "phone"), pair(world, web, "tablet")
        sub = service.subscription()
        assert phone.post("/push/subscribe", sub.json())[0] == 200
        world.start_service(hearing="api")
        world.type(pane, "ask")  # a permission dialog: api waits for the person
        [pushed] = service.wait(1, 60, "the waiting agent's push")
        data = pushed.payload
        assert data["title"] == "roost: api is waiting for you"
        assert data["actions"] == [{"action": "1", "title": "Yes"}, {"action": "2", "title": "No"}]
        assert data["url"] == "/a/api" and pushed.claims["aud"] == service.base
        cap = str(data["capability"])
        # another device's answer, a forged one: refused, nothing typed
        status, body = tablet.post("/push/answer", {"capability": cap, "choice": "1"})
        assert status == 409 and "another device" in str(body["error"])
        status, body = Client(web).post("/push/answer", {"capability": "x" * 43, "choice": "1"})
        assert status == 409 and body["error"] == "unknown capability"
        assert "Do you want to proceed?" in world.screen(pane)
        # the phone's answer, as ntfy would send it (no cookie, no CSRF): the capability is all
        status, body = Client(web).post("/push/answer", {"capability": cap, "choice": "1"})
        assert status == 200 and body["applied"] is True and body["choice"] == "Yes", body
        world.wait_for(lambda: "Do you want to proceed?" not in world.screen(pane))
        receipt = service.wait(2, 30, "the receipt")[1].payload
        assert receipt["kind"] == "receipt" and str(receipt["title"]).startswith("applied: Yes")
        status, body = phone.post("/push/answer", {"capability": cap, "choice": "1"})
        assert status == 409 and "already used" in str(body["error"])
        refused = service.wait(3, 30, "the refusal's receipt")[2].payload
        assert refused["title"] == "not applied: capability already used"
    kinds = [e["kind"] for e in json.loads(world.roost("events", "--json").stdout)]
    assert kinds.count("answered") == 1 and kinds.count("push-refused") == 3


def test_ntfys_buttons_answer_the_question_through_roost_web(world: Env) -> None:
    """[notify] ntfy with [push] url: the waiting alert's ntfy message carries `http` action
    buttons (ntfy's JSON form) that POST the answer with a capability of no device; pressed as
    ntfy presses them (the request each describes, no cookie), the first is applied, the next
    refused: one capability, one answer."""
    from notify_stub import Stub

    topic = Stub().start()
    spawn(world, "api")
    world.wait_status("api", "idle")
    pane = world.pane_of("api")
    try:
        with running(world, env=TEST_ENV) as web:
            (world.home / "config.toml").write_text(
                f'[notify]\nntfy = "{topic.url}/roost"\nterminal = false\n'
                f'[push]\nurl = "{web.base}"\n'
            )
            world.start_service(hearing="api")
            world.type(pane, "ask")
            world.wait_for(lambda: topic.posts, 60, "the ntfy message")
            headers = {k.lower(): v for k, v in topic.posts[0]["headers"].items()}
            buttons = json.loads(headers["actions"])
            assert [(b["action"], b["label"], b["method"]) for b in buttons] == [
                ("http", "Yes", "POST"),
                ("http", "No", "POST"),
            ]
            assert {b["url"] for b in buttons} == {web.base + "/push/answer"}

            def press(button: dict[str, Any]) -> tuple[int, dict[str, Any]]:
                conn = http.client.HTTPConnection(urlsplit(button["url"]).netloc, timeout=60)
                conn.request("POST", "/push/answer", button["body"], button["headers"])
                answer = conn.getresponse()
                return answer.status, json.loads(answer.read())

            status, body = press(buttons[0])
            assert status == 200 and body["choice"] == "Yes", body
            world.wait_for(lambda: "Do you want to proceed?" not in world.screen(pane))
            status, body = press(buttons[1])
            assert status == 409 and "already used" in body["error"], body
    finally:
        topic.stop()
