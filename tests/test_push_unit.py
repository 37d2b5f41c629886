"""push/rules.py, table-driven: push endpoints refused, subscriptions read, capabilities judged,
devices named, what a push and a receipt say, ntfy's buttons, the app's manifest and icons."""

from __future__ import annotations

import doctest
import json
import struct
import zlib

import pytest

from roost.core.questions import Choice
from roost.push import rules

NOW = "2031-03-04T05:06:07+00:00"
LATER = "2031-03-04T05:16:07+00:00"  # NOW + CAPABILITY_TTL


def test_the_rules_doctests_hold() -> None:
    assert doctest.testmod(rules).failed == 0


@pytest.mark.parametrize(
    ("url", "loopback", "refused"),
    [
        pytest.param("https://fcm.googleapis.com/fcm/send/x", False, None, id="fcm"),
        pytest.param("https://web.push.apple.com/QGz", False, None, id="apple"),
        pytest.param("http://fcm.googleapis.com/x", False, "must be https", id="http"),
        pytest.param("https://127.0.0.1/x", False, "private address", id="loopback-https"),
        pytest.param("https://localhost/x", False, "private address", id="localhost"),
        pytest.param("https://192.168.0.7/x", False, "private address", id="lan"),
        pytest.param("https://[fd00::1]/x", False, "private address", id="ula"),
        pytest.param("https://169.254.169.254/x", False, "private address", id="metadata"),
        pytest.param("https://printer.local/x", False, "private address", id="mdns"),
        pytest.param("https://intranet/x", False, "private address", id="bare-name"),
        pytest.param("http://127.0.0.1:8/x", False, "must be https", id="test-http-not-allowed"),
        pytest.param("http://127.0.0.1:8/x", True, None, id="test-loopback"),
        pytest.param("http://10.0.0.1:8/x", True, "must be https", id="test-not-loopback"),
        pytest.param("https://u:p@push.example.org/x", False, "name a host", id="userinfo"),
        pytest.param("https://push.example.org:99999/x", False, "must be a URL", id="bad-port"),
        pytest.param("ftp://push.example.org/x", False, "must be https", id="ftp"),
        pytest.param("https://" + "a" * 3000 + ".org/", False, "that long", id="long"),
    ],
)
def test_push_endpoints(url: str, loopback: bool, refused: str | None) -> None:
    said = rules.check_endpoint(url, loopback)
    assert (said is None) if refused is None else (said is not None and refused in said), said


@pytest.mark.parametrize(
    ("body", "refused"),
    [
        pytest.param(
            {"endpoint": "https://p.example.org/x", "keys": {"p256dh": "BAb-_", "auth": "xy"}},
            None,
            id="good",
        ),
        pytest.param([], "JSON object", id="not-object"),
        pytest.param({"endpoint": "https://p.example.org/x"}, "endpoint and keys", id="no-keys"),
        pytest.param(
            {"endpoint": "https://p.example.org/x", "keys": {"p256dh": "B"}},
            "p256dh and auth",
            id="no-auth",
        ),
        pytest.param(
            {"endpoint": "https://p.example.org/x", "keys": {"p256dh": "B", "auth": "a b"}},
            "base64url",
            id="bad-key",
        ),
        pytest.param(
            {"endpoint": "http://p.example.org/x", "keys": {"p256dh": "B", "auth": "a"}},
            "https",
            id="http",
        ),
    ],
)
def test_subscriptions(body: object, refused: str | None) -> None:
    found = rules.subscription(body, False)
    if refused is None:
        assert isinstance(found, rules.Subscription) and found.auth == "xy"
    else:
        assert isinstance(found, str) and refused in found, found


CAP = rules.Capability("dev1", "agent1", "api", "f00d", LATER, None)


@pytest.mark.parametrize(
    ("found", "now", "device", "revoked", "refused"),
    [
        pytest.param(CAP, NOW, "dev1", False, None, id="good"),
        pytest.param(CAP, NOW, None, False, None, id="no-cookie"),
        pytest.param(None, NOW, "dev1", False, "unknown capability", id="forged"),
        pytest.param(
            rules.Capability("dev1", "a", "api", "f", LATER, NOW),
            NOW,
            "dev1",
            False,
            "already used",
            id="replayed",
        ),
        pytest.param(CAP, LATER, "dev1", False, "expired", id="expired-at-its-time"),
        pytest.param(CAP, "2031-03-05T00:00:00+00:00", None, False, "expired", id="expired"),
        pytest.param(CAP, NOW, "dev2", False, "another device", id="other-device"),
        pytest.param(CAP, NOW, "dev1", True, "revoked", id="revoked"),
        pytest.param(
            rules.Capability("dev1", "a", "api", "f", "garbage", None),
            NOW,
            None,
            False,
            "expired",
            id="unreadable-expiry",
        ),
    ],
)
def test_capabilities_judged(
    found: rules.Capability | None, now: str, device: str | None, revoked: bool, refused: str | None
) -> None:
    said = rules.judge(found, now, device, revoked)
    assert (said is None) if refused is None else (said is not None and refused in said), said


@pytest.mark.parametrize(
    ("given", "agent", "name"),
    [
        pytest.param("Pixel 8", None, "Pixel 8", id="given"),
        pytest.param("  ", "Mozilla/5.0 (iPad; CPU OS 17_0) Safari/604", "iPad (Safari)", id="ua"),
        pytest.param(
            None, "Mozilla/5.0 (X11; Linux x86_64) Firefox/120", "Linux (Firefox)", id="ff"
        ),
        pytest.param(None, "curl/8.0", "browser", id="unknown"),
        pytest.param("x" * 80, None, "x" * 39 + "…", id="long"),
        pytest.param("a\x1b[31mb\u202ec", None, "a[31mbc", id="controls"),
    ],
)
def test_device_names(given: str | None, agent: str | None, name: str) -> None:
    assert rules.device_name(given, agent) == name


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        pytest.param("dev.s3cr-et_", ("dev", "s3cr-et_"), id="good"),
        pytest.param("dev.a.b", None, id="dot-in-secret"),
        pytest.param("", None, id="empty"),
        pytest.param(".secret", None, id="no-id"),
        pytest.param("d." + "s" * 101, None, id="long"),
        pytest.param("d.s;x", None, id="semicolon"),
    ],
)
def test_device_cookies(value: str, parsed: tuple[str, str] | None) -> None:
    assert rules.parse_cookie(value) == parsed


def test_a_push_carries_at_most_two_choices_and_its_capability() -> None:
    choices = [Choice("1", "Yes"), Choice("2", "Yes, and don't ask again"), Choice("3", "No")]
    found = rules.payload("t", "Do you want to proceed?", "api", "waiting", choices, "cap", "f00d")
    assert found["actions"] == [
        {"action": "1", "title": "Yes"},
        {"action": "2", "title": "Yes, and don't ask again"},
    ]
    assert found["capability"] == "cap" and found["question"] == "f00d"
    assert found["url"] == "/a/api" and "open roost" in str(found["body"])
    plain = rules.payload("roost: api crashed", "It ended", "api", "crashed")
    assert plain["actions"] == [] and "capability" not in plain


@pytest.mark.parametrize(
    ("choice", "refused", "shows", "title"),
    [
        pytest.param("Yes", None, "idle", "applied: Yes — api is idle", id="applied"),
        pytest.param(
            None,
            "api's question changed",
            None,
            "not applied: api's question changed",
            id="refused",
        ),
    ],
)
def test_receipts(choice: str | None, refused: str | None, shows: str | None, title: str) -> None:
    found = rules.receipt("api", choice, refused, shows)
    assert found["title"] == title and found["applied"] is (refused is None)


def test_ntfy_buttons_post_the_answer_with_the_capability() -> None:
    found = rules.ntfy_actions("https://box/", "cap", [Choice(str(i), f"c{i}") for i in range(5)])
    assert len(found) == rules.NTFY_ACTIONS
    assert found[0]["url"] == "https://box/push/answer" and found[0]["method"] == "POST"
    assert json.loads(str(found[2]["body"])) == {"capability": "cap", "choice": "2"}


def test_the_manifest_makes_an_installable_app() -> None:
    found = rules.manifest()
    assert found["start_url"] == "/" and found["display"] == "standalone"
    icons = found["icons"]
    assert isinstance(icons, list) and [i["sizes"] for i in icons] == ["192x192", "512x512"]


def test_icons_are_pngs_of_their_size_with_a_letter() -> None:
    png = rules.png_icon(48)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    size = struct.unpack(">II", png[16:24])
    assert size == (48, 48)
    start = png.index(b"IDAT") + 4
    length = struct.unpack(">I", png[start - 8 : start - 4])[0]
    pixels = zlib.decompress(png[start : start + length])
    assert len(pixels) == 48 * (1 + 48 * 3)
    assert (
        b"\xff\xff\xff" in pixels and bytes(rules.ICON_COLOUR) in pixels
    )  # the letter, the square
