"""Where a push goes (issue 40): a subscription's endpoint name is resolved (bounded) and refused
when any address is not a public one; right before each push it is resolved and checked again,
and the POST connects to the very address checked (a DNS answer that changed meanwhile, a
rebinding, reaches nothing inside). A resolver is injected: no real DNS here; the loopback push
service (tests/push_service.py) stands for the push service."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_app import fake_app
from push_service import PushService

from roost.core.errors import RoostError
from roost.ops.context import App
from roost.push import operations as push
from roost.push import rules
from roost.store import push as rows

PUBLIC = "142.250.74.10"


@pytest.fixture
def service() -> Iterator[PushService]:
    made = PushService().start()
    yield made
    made.stop()


@pytest.fixture
def app(tmp_path: Path, fake: Any, clock: Any) -> Iterator[App]:
    made = fake_app(tmp_path, fake, clock, {"notify": {"terminal": False}})
    yield made
    made.close()


def device(app: App) -> str:
    return push.pair(app, push.pairing_code(app), "phone", None).device_id


def subscription(endpoint: str) -> dict[str, object]:
    return {"endpoint": endpoint, "keys": {"p256dh": "BPk", "auth": "a2"}}


class Resolver:
    """A DNS stand-in: its answers by name, changed at will; every question kept."""

    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers
        self.asked: list[tuple[str, int]] = []

    def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append((host, port))
        if host not in self.answers:
            raise OSError(f"[Errno -2] Name or service not known: {host}")
        return self.answers[host]


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        pytest.param([PUBLIC, "10.0.0.5"], "private address (10.0.0.5)", id="one-private"),
        pytest.param(["127.0.0.1"], "private address (127.0.0.1)", id="loopback"),
        pytest.param(["169.254.169.254"], "(169.254.169.254)", id="link-local-metadata"),
        pytest.param(["::ffff:192.168.1.1"], "(192.168.1.1)", id="v4-mapped"),
        pytest.param(["fd00::1"], "(fd00::1)", id="unique-local"),
        pytest.param(["239.1.1.1"], "(239.1.1.1)", id="multicast"),
        pytest.param(["240.0.0.1"], "(240.0.0.1)", id="reserved"),
        pytest.param([], "does not resolve", id="no-address"),
    ],
)
def test_an_endpoint_resolving_to_any_private_address_is_refused_logged_not_kept(
    app: App, answer: list[str], why: str
) -> None:
    made = device(app)
    resolver = Resolver({"push.example.com": answer})
    with pytest.raises(RoostError, match=re.escape(why)):
        push.subscribe(app, made, subscription("https://push.example.com/x"), resolver)
    assert resolver.asked == [("push.example.com", 443)]
    assert not rows.has_subscriptions(app.store.conn)
    [refused] = [e for e in app.store.events() if e.kind == "push-refused"]
    assert why.strip("()") in str(refused.data["why"])


def test_a_public_endpoint_is_kept_and_an_unknown_name_refused(app: App) -> None:
    made = device(app)
    resolver = Resolver({"fcm.example.com": [PUBLIC, "2a00:1450:4001::200a"]})
    push.subscribe(app, made, subscription("https://fcm.example.com:8443/send/x"), resolver)
    assert resolver.asked == [("fcm.example.com", 8443)]
    assert push.subscribed(app, made)
    with pytest.raises(RoostError, match="does not resolve"):
        push.subscribe(app, made, subscription("https://nowhere.example/x"), resolver)


def test_a_resolver_that_hangs_costs_its_limit_then_refuses(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(push, "RESOLVE_TIMEOUT", 0.3)
    release = threading.Event()

    def hangs(host: str, port: int) -> list[str]:
        release.wait(30)
        return [PUBLIC]

    try:
        with pytest.raises(RoostError, match=re.escape("did not resolve within 0.3 s")):
            push.subscribe(app, device(app), subscription("https://slow.example/x"), hangs)
    finally:
        release.set()
    assert not rows.has_subscriptions(app.store.conn)


def a_push(service: PushService, host: str | None = None) -> push.Push:
    sub = service.subscription()
    endpoint = sub.endpoint if host is None else sub.endpoint.replace("127.0.0.1", host)
    made = rules.Subscription(endpoint, sub.json()["keys"]["p256dh"], sub.json()["keys"]["auth"])
    return push.Push("dev", made, {"kind": "alert", "title": "t"})


def test_a_name_that_now_resolves_inside_is_refused_before_the_post(
    tmp_path: Path, service: PushService
) -> None:
    """A rebinding: the name answered a public address when subscribed; at send time it
    answers a private one. The check before the push refuses it: nothing is POSTed."""
    resolver = Resolver({"localhost": ["10.1.2.3"]})
    said = push.send(tmp_path, a_push(service, "localhost"), 5.0, resolver)
    assert said == "push refused: a push endpoint must not resolve to a private address (10.1.2.3)"
    assert resolver.asked and service.received == [] and service.refused == []


def test_the_post_connects_to_the_address_checked(tmp_path: Path, service: PushService) -> None:
    """The push goes to the address the check saw, not to a second lookup's: the same name
    pinned to the push service's address arrives (its Host header the name), pinned to
    another loopback address (where nothing listens) it does not, though the system's own
    resolver would have reached the service."""
    port = service.base.rsplit(":", 1)[1]
    assert (
        push.send(
            tmp_path, a_push(service, "localhost"), 5.0, Resolver({"localhost": ["127.0.0.1"]})
        )
        is None
    )
    [got] = service.wait(1, 10, "the pinned push")
    assert got.headers["host"] == f"localhost:{port}" and got.payload["title"] == "t"
    said = push.send(
        tmp_path, a_push(service, "localhost"), 5.0, Resolver({"localhost": ["127.0.0.9"]})
    )
    assert said is not None and "ConnectionError" in said, said
    assert len(service.received) == 1


def test_through_a_proxy_the_environment_names_the_proxy_connects(
    tmp_path: Path, service: PushService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HTTP(S)_PROXY: the name is still checked right before, then the proxy (here the push
    service itself, which takes the absolute URL a proxy gets) makes the connection."""
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", service.base)
    nowhere = Resolver({"localhost": ["127.0.0.9"]})
    assert push.send(tmp_path, a_push(service, "localhost"), 5.0, nowhere) is None
    assert len(service.wait(1, 10, "the push through the proxy")) == 1
    inside = Resolver({"localhost": ["10.9.9.9"]})
    said = push.send(tmp_path, a_push(service, "localhost"), 5.0, inside)
    assert said is not None and "private address (10.9.9.9)" in said
    assert len(service.received) == 1
