"""Push to a phone, decided: pure functions of their inputs (push/operations.py reads the store,
the clock and the network).

Three secrets, each random (minted by the caller), shown once and stored only as digests:

- a **pairing code**: the one-time link `roost web pair` prints; single use, PAIRING_TTL;
- a **device credential**: the cookie `roost_device` = "<device id>.<secret>", bound to that
  device (never the master token); it stops working the moment the device is revoked;
- a **capability**: what a notification's action carries, bound to one agent, one question
  (its fingerprint) and one device; single use, CAPABILITY_TTL.

>>> judge(None, "2031-01-01T00:00:00+00:00", None, False)
'unknown capability'
>>> cap = Capability("dev1", "agent1", "api", "f00d", "2031-01-01T00:10:00+00:00", None)
>>> judge(cap, "2031-01-01T00:00:00+00:00", "dev1", False) is None
True
>>> judge(cap, "2031-01-01T00:00:00+00:00", "dev2", False)
'capability of another device'
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
import struct
import unicodedata
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from roost.core.names import name_problem
from roost.core.questions import Choice

DEVICE_COOKIE = "roost_device"
CAPABILITY_TTL = 600.0  # seconds a notification's answer may be used
PAIRING_TTL = 600.0  # seconds a pairing link may be opened
VIEWING_FRESH = 75.0  # seconds a page's "I show this agent" holds (it says it again every 30)
MAX_ACTIONS = 2  # a notification's buttons: Chrome shows two (Notification.maxActions)
REPLY = "reply"  # a reply capability's fingerprint and its action's name (no choice key is)
REPLY_EDGES = ("finished",)  # the agent is at its input: the person's words are a message to it
MAX_REPLY = 2000  # characters of a reply typed into a notification
NTFY_ACTIONS = 3  # ntfy shows three
MAX_NAME = 40  # characters of a device's name
MAX_ENDPOINT = 2048  # characters of a subscription's endpoint
MAX_KEY = 200  # characters of a subscription's key
MAX_SECRET = 100  # characters of a presented secret (longer: refused unread)
RECEIPT_BODY = 200  # characters of what the agent shows, in a receipt

# The alert edges that reach a phone (alerts/rules.py's, and a budget's park): those that need
# the person. A clean exit does not; each channel of [notify] still gets every alert.
PUSHED_EDGES = ("waiting", "error", "limited", "crashed", "failed", "budget", "finished")

_SAFE = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"


def digest(secret: str) -> str:
    """What the store keeps of a secret: its SHA-256 (a random 32 bytes needs no salt)."""
    return hashlib.sha256(secret.encode()).hexdigest()


def well_formed(secret: object) -> bool:
    """A secret roost could have minted (token_urlsafe): bounded, URL-safe characters only.

    >>> well_formed("abc-_1"), well_formed(""), well_formed("a b"), well_formed(3)
    (True, False, False, False)
    """
    return (
        isinstance(secret, str)
        and 0 < len(secret) <= MAX_SECRET
        and all(ch in _SAFE for ch in secret)
    )


def device_cookie(device_id: str, secret: str) -> str:
    return f"{device_id}.{secret}"


def parse_cookie(value: str | None) -> tuple[str, str] | None:
    """(device id, secret) of a device cookie; None for anything else.

    >>> parse_cookie("d1.s3cret"), parse_cookie("nodot"), parse_cookie("a.b c")
    (('d1', 's3cret'), None, None)
    """
    if not value or "." not in value:
        return None
    device_id, secret = value.split(".", 1)
    if not (well_formed(device_id) and well_formed(secret)):
        return None
    return device_id, secret


def csrf_of(secret: str) -> str:
    """A device's CSRF token, derived from its secret (the server keeps no session for it)."""
    return hashlib.sha256(b"roost-csrf\0" + secret.encode()).hexdigest()[:32]


def device_name(given: str | None, user_agent: str | None) -> str:
    """The name a device is listed under: the one given (?name=), else what its User-Agent
    says it is, printable and bounded.

    >>> device_name(None, "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit Chrome/120")
    'Android (Chrome)'
    >>> device_name(None, "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Safari")
    'iPhone (Safari)'
    >>> device_name("my\\x1bphone", None), device_name("", "")
    ('myphone', 'browser')
    """
    if given and plain(given, MAX_NAME):
        return plain(given, MAX_NAME)
    ua = user_agent or ""
    kind = next(
        (
            shown
            for said, shown in (
                ("iPhone", "iPhone"),
                ("iPad", "iPad"),
                ("Android", "Android"),
                ("Macintosh", "Mac"),
                ("Windows", "Windows"),
                ("Linux", "Linux"),
            )
            if said in ua
        ),
        None,
    )
    browser = next(
        (b for b in ("Firefox", "Edg", "Chrome", "Safari") if b in ua),
        None,
    )
    if kind is None and browser is None:
        return "browser"
    browser = "Edge" if browser == "Edg" else browser
    return f"{kind or 'browser'} ({browser})" if browser else str(kind)


def plain(text: str, limit: int) -> str:
    """One line of printable text, at most `limit` characters."""
    words = "".join(ch for ch in " ".join(text.split()) if unicodedata.category(ch)[0] != "C")
    return words if len(words) <= limit else words[: limit - 1] + "…"


# ---- subscriptions ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Subscription:
    endpoint: str
    p256dh: str
    auth: str


def check_endpoint(url: str, allow_loopback: bool) -> str | None:
    """Why a push endpoint is refused, or None. A push service is reached over https at a
    public address; http (to loopback only) is allowed only when roost web runs for tests.

    >>> check_endpoint("https://fcm.googleapis.com/fcm/send/abc", False) is None
    True
    >>> check_endpoint("http://push.example/x", False)
    'a push endpoint must be https'
    >>> check_endpoint("https://10.1.2.3/x", False)
    'a push endpoint must not be a private address (10.1.2.3)'
    >>> check_endpoint("http://127.0.0.1:9/x", True) is None
    True
    >>> check_endpoint("http://192.168.1.2:9/x", True)
    'a push endpoint must be https'
    """
    if len(url) > MAX_ENDPOINT:
        return "a push endpoint that long is refused"
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        parts.port  # noqa: B018 (raises on a bad port)
    except ValueError:
        return "a push endpoint must be a URL"
    if not host or parts.username is not None or parts.password is not None:
        return "a push endpoint must name a host"
    loopback = names_loopback(host)
    if parts.scheme == "http" and allow_loopback and loopback:
        return None
    if parts.scheme != "https":
        return "a push endpoint must be https"
    if loopback or _private(host):
        return f"a push endpoint must not be a private address ({host})"
    return None


def names_loopback(host: str) -> bool:
    """Whether a host is this machine by its very name (localhost, 127.0.0.1, ::1...)."""
    if host.lower() in ("localhost", "localhost.localdomain") or host.lower().endswith(
        ".localhost"
    ):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _private(host: str) -> bool:
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host.lower().endswith((".local", ".internal", ".lan")) or "." not in host
    return not ip.is_global


def address_problem(address: str, allow_loopback: bool) -> str | None:
    """Why a push endpoint's resolved address is refused, or None: a push service is on the
    public internet, so a private, loopback (but in the tests' mode), link-local, multicast,
    reserved, unspecified or otherwise non-global address is one a subscription could aim
    roost's POST at inside this network (server-side request forgery).

    >>> address_problem("142.250.74.10", False) is None, address_problem("2a00:1450::1", False)
    (True, None)
    >>> [address_problem(a, False) is None for a in ("10.0.0.1", "127.0.0.1", "169.254.1.1",
    ...     "224.0.0.1", "240.0.0.1", "0.0.0.0", "::1", "fe80::1", "fc00::1", "::ffff:10.0.0.1",
    ...     "100.64.0.1")]
    [False, False, False, False, False, False, False, False, False, False, False]
    >>> address_problem("127.0.0.1", True) is None, address_problem("10.0.0.1", True) is None
    (True, False)
    >>> address_problem("not an address", False)
    'a push endpoint resolved to something not an address'
    """
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])  # a zone id (fe80::1%eth0)
    except ValueError:
        return "a push endpoint resolved to something not an address"
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    ip = mapped or ip
    if ip.is_loopback and allow_loopback:
        return None
    bad = (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
        or not ip.is_global
    )
    return f"a push endpoint must not resolve to a private address ({ip})" if bad else None


def subscription(body: object, allow_loopback: bool) -> Subscription | str:
    """The subscription a page POSTed (PushSubscription.toJSON()), or why it is refused."""
    if not isinstance(body, Mapping):
        return "a subscription is a JSON object"
    endpoint, keys = body.get("endpoint"), body.get("keys")
    if not isinstance(endpoint, str) or not isinstance(keys, Mapping):
        return "a subscription has an endpoint and keys"
    p256dh, auth = keys.get("p256dh"), keys.get("auth")
    if not all(isinstance(k, str) and 0 < len(k) <= MAX_KEY for k in (p256dh, auth)):
        return "a subscription's keys are p256dh and auth"
    assert isinstance(p256dh, str) and isinstance(auth, str)
    if not (well_formed_key(p256dh) and well_formed_key(auth)):
        return "a subscription's keys are base64url"
    refused = check_endpoint(endpoint, allow_loopback)
    return refused if refused else Subscription(endpoint, p256dh, auth)


def well_formed_key(key: str) -> bool:
    return all(ch in _SAFE or ch == "=" for ch in key)


# ---- capabilities -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Capability:
    """A stored capability (its secret's digest is the key it was found by)."""

    device_id: str
    agent_id: str
    agent: str
    fingerprint: str
    expires_at: str
    used_at: str | None


def judge(
    found: Capability | None, now: str, device: str | None, device_revoked: bool
) -> str | None:
    """Why an answer with this capability is refused (nothing is typed), or None. `device`:
    the device whose credential came with the request (None: none came, as from ntfy or a
    service worker without cookies), which must be the capability's."""
    if found is None:
        return "unknown capability"
    if found.used_at is not None:
        return "capability already used"
    if _seconds(now, found.expires_at) <= 0:
        return "capability expired"
    if device is not None and device != found.device_id:
        return "capability of another device"
    if device_revoked:
        return "device revoked"
    return None


def expiry(now: str, ttl: float) -> str:
    from datetime import timedelta

    return (datetime.fromisoformat(now) + timedelta(seconds=ttl)).isoformat()


def _seconds(earlier: str, later: str) -> float:
    try:
        return (datetime.fromisoformat(later) - datetime.fromisoformat(earlier)).total_seconds()
    except (TypeError, ValueError):
        return 0.0  # unreadable: expired


def fresh(at: str | None, now: str, within: float) -> bool:
    """Whether `at` is at most `within` seconds before `now`."""
    return at is not None and 0 <= _seconds(at, now) <= within


# ---- what a push says ---------------------------------------------------------------------------
def payload(
    title: str,
    body: str,
    agent: str,
    edge: str,
    choices: Sequence[Choice] = (),
    capability: str | None = None,
    fingerprint: str | None = None,
) -> dict[str, object]:
    """The JSON a push carries to the service worker (static/sw.js): what to show, where a tap
    goes (the agent's page), and for a question its first MAX_ACTIONS choices as actions with
    the capability that answers them; more choices: the body says to open the page.

    >>> p = payload("roost: api is waiting for you", "Proceed?", "api", "waiting",
    ...             [Choice("1", "Yes"), Choice("2", "Yes, always"), Choice("3", "No")], "cap")
    >>> [a["action"] for a in p["actions"]], p["body"]
    (['1', '2'], 'Proceed? (3 choices: open roost for the rest)')
    """
    shown = list(choices[:MAX_ACTIONS]) if capability else []
    if capability and len(choices) > MAX_ACTIONS:
        body = f"{body} ({len(choices)} choices: open roost for the rest)"
    found: dict[str, object] = {
        "kind": "alert",
        "title": plain(title, 120),
        "body": plain(body, 400),
        "agent": agent,
        "edge": edge,
        "url": page_of(agent),
        "tag": "roost-" + agent,
        "actions": [{"action": c.key, "title": plain(c.label, 40)} for c in shown],
    }
    if capability and fingerprint == REPLY:  # a text field (where the platform has one)
        found["actions"] = [
            {
                "action": REPLY,
                "title": "Reply",
                "type": "text",
                "placeholder": plain(f"Reply to {agent}", 60),
            }
        ]
    if capability:
        found["capability"] = capability
        found["question"] = fingerprint
    return found


def kind_problem(found: Capability, choice: object, text: object) -> str | None:
    """Why an answer does not fit its capability, or None: a reply capability takes text, a
    question's takes a choice (a choice's capability never sends words, nor a reply's presses).

    >>> cap = Capability("d", "a", "api", REPLY, "2031-01-01T00:10:00+00:00", None)
    >>> kind_problem(cap, None, "run the tests"), kind_problem(cap, "1", None)
    (None, 'this notification takes a reply, not a choice')
    """
    if found.fingerprint == REPLY:
        return None if isinstance(text, str) else "this notification takes a reply, not a choice"
    return None if isinstance(choice, str) else "this notification takes a choice, not a reply"


def answer_problem(capability: object, choice: object, text: object) -> str | None:
    """Why a POST /push/answer body is malformed, or None: a well-formed capability and either
    a choice (at most 200 characters) or a reply's text (not blank, at most MAX_REPLY).

    >>> answer_problem("cap", "1", None), answer_problem("cap", None, "go on")
    (None, None)
    >>> answer_problem("cap", "1", "go on"), answer_problem("cap", None, "  ")
    ('malformed answer', 'malformed answer')
    """
    if not well_formed(capability) or (choice is None) == (text is None):
        return "malformed answer"
    if choice is not None and not (isinstance(choice, str) and len(choice) <= 200):
        return "malformed answer"
    if text is not None and not (isinstance(text, str) and text.strip() and len(text) <= MAX_REPLY):
        return "malformed answer"
    return None


def page_of(agent: str) -> str:
    """Where a tap on an agent's notification goes: its page; a host's agent (HOST:NAME) has
    its page on its host's own roost web, so the fleet page, which lists it.

    >>> page_of("api"), page_of("h1:api")
    ('/a/api', '/')
    """
    return "/" if ":" in agent else "/a/" + agent


def receipt(
    agent: str, choice: str | None, refused: str | None, shows: str | None
) -> dict[str, object]:
    """The follow-up push after an answer: applied, with what the agent shows now, or not, and
    why.

    >>> receipt("api", "Yes", None, "idle")["title"]
    'applied: Yes — api is idle'
    >>> receipt("api", None, "capability expired", None)["title"]
    'not applied: capability expired'
    """
    if refused is None:
        title = f"applied: {choice} — {agent}" + (f" is {shows}" if shows else "")
    else:
        title = f"not applied: {refused}"
    return {
        "kind": "receipt",
        "title": plain(title, 120),
        "body": plain(f"roost: {agent}", RECEIPT_BODY),
        "agent": agent,
        "url": page_of(agent),
        "tag": "roost-receipt-" + agent,
        "actions": [],
        "applied": refused is None,
    }


def ntfy_actions(base: str, capability: str, choices: Sequence[Choice]) -> list[dict[str, object]]:
    """ntfy's `http` action buttons (its JSON form): each POSTs the answer to roost web.

    >>> ntfy_actions("https://box", "cap", [Choice("y", "Yes")])[0]["body"]
    '{"capability": "cap", "choice": "y"}'
    """
    import json

    return [
        {
            "action": "http",
            "label": plain(c.label, 40),
            "url": base.rstrip("/") + "/push/answer",
            "method": "POST",
            "headers": {"Content-Type": "application/json"},
            "body": json.dumps({"capability": capability, "choice": c.key}),
            "clear": True,
        }
        for c in choices[:NTFY_ACTIONS]
    ]


# ---- agents on hosts ----------------------------------------------------------------------------
# A host's roost is the authority on its agents; what it says comes over ssh and is read as
# untrusted input: a line at most MAX_HOST_LINE characters, every word checked and made one
# printable line, bounded, before it reaches a notification (push/remote.py).
MAX_HOST_LINE = 65536  # characters of one line of a host's stream or answer
MAX_CHOICES = 9  # choices kept of a host's question (its keys are 1-9, y, n)
_FINGERPRINT = re.compile(r"[0-9a-f]{16}")
_KEY = re.compile(r"[1-9yn]")


@dataclass(frozen=True, slots=True)
class HostAlert:
    """An alert a host's roost decided for one of its agents (an `alert` line of its
    `roost watch --json`: seq, kind, name, edge, title, body), as this roost pushes it."""

    seq: int
    name: str  # its name on its host
    qualified: str  # HOST:NAME, as this roost names it (and its capabilities' agent)
    edge: str
    title: str
    body: str
    at: str | None = None  # when the host decided it (its clock), if it said


STALE_HOST_ALERT = 600.0  # seconds: an older host alert read late is not pushed (CAPABILITY_TTL)


def stale(at: str | None, now: str, within: float = STALE_HOST_ALERT) -> bool:
    """Whether a host's alert decided at `at` is too old to push now (read after a gap: this
    service stopped, or no device subscribed for a while); a time ahead of `now` (the host's
    clock runs ahead) or unreadable is not stale.

    >>> stale("2031-01-01T00:00:00+00:00", "2031-01-01T00:11:00+00:00")
    True
    >>> [stale(a, "2031-01-01T00:11:00+00:00") for a in ("2031-01-01T00:05:00+00:00",
    ...     "2031-01-01T00:20:00+00:00", "junk", None)]
    [False, False, False, False]
    """
    if at is None:
        return False
    try:
        return (datetime.fromisoformat(now) - datetime.fromisoformat(at)).total_seconds() > within
    except (TypeError, ValueError):
        return False


def host_alert(host: str, event: Mapping[str, object]) -> HostAlert | None:
    """The pushed alert a line of host's stream carries, or None (another kind of line, an
    edge that needs no person, a malformed one).

    >>> a = host_alert("h1", {"kind": "alert", "seq": 9, "name": "api", "edge": "waiting",
    ...     "title": "roost: api is waiting\\x1b[2J", "body": "Proceed?"})
    >>> a.qualified, a.title, a.body
    ('h1:api', 'roost: api is waiting[2J (on h1)', 'Proceed?')
    >>> host_alert("h1", {"kind": "alert", "seq": 9, "name": "a;b", "edge": "waiting"}) is None
    True
    >>> host_alert("h1", {"kind": "alert", "seq": True, "name": "api", "edge": "error"}) is None
    True
    """
    seq, edge, name = (event.get(k) for k in ("seq", "edge", "name"))
    if event.get("kind") != "alert" or not isinstance(seq, int) or isinstance(seq, bool):
        return None
    if edge not in PUSHED_EDGES or not isinstance(name, str) or name_problem(name):
        return None
    assert isinstance(edge, str)
    title, body = event.get("title"), event.get("body")
    said = title if isinstance(title, str) else f"roost: {name} {edge}"
    return HostAlert(
        seq,
        name,
        f"{host}:{name}",
        edge,
        plain(f"{plain(said, 100)} (on {host})", 120),
        plain(body, 400) if isinstance(body, str) else "",
        at if isinstance(at := event.get("at"), str) and len(at) <= 40 else None,
    )


def host_question(said: object) -> tuple[str, tuple[Choice, ...]] | None:
    """(fingerprint, choices) of a host's `roost answer NAME --json` (its open question), or
    None when it is no such answer: the fingerprint is the host's (the host checks it when the
    answer comes back), each choice's key one a question has, its label one bounded line.

    >>> host_question({"question_id": "0123456789abcdef", "choices": [
    ...     {"key": "1", "label": "Yes\\x07"}, {"key": "2", "label": "No"}]})
    ('0123456789abcdef', (Choice(key='1', label='Yes'), Choice(key='2', label='No')))
    >>> host_question({"question_id": "x; rm", "choices": []}) is None
    True
    >>> host_question({"question_id": "0123456789abcdef", "choices": [{"key": "-x"}]}) is None
    True
    """
    if not isinstance(said, Mapping):
        return None
    fingerprint, choices = said.get("question_id"), said.get("choices")
    if not isinstance(fingerprint, str) or not _FINGERPRINT.fullmatch(fingerprint):
        return None
    if not isinstance(choices, list) or not 0 < len(choices) <= MAX_CHOICES:
        return None
    found = []
    for c in choices:
        key = c.get("key") if isinstance(c, Mapping) else None
        label = c.get("label") if isinstance(c, Mapping) else None
        if not isinstance(key, str) or not _KEY.fullmatch(key) or not isinstance(label, str):
            return None
        found.append(Choice(key, plain(label, 80) or key))
    return fingerprint, tuple(found)


def host_answered(said: object) -> tuple[str, str] | None:
    """(the choice's label, the status after it) of a host's `roost answer NAME CHOICE --json`,
    each one bounded line; None when it is no such answer.

    >>> host_answered({"choice": {"key": "1", "label": "Yes"}, "status": "idle"})
    ('Yes', 'idle')
    >>> host_answered({"choice": "Yes", "status": "idle"}) is None
    True
    """
    if not isinstance(said, Mapping):
        return None
    choice, status = said.get("choice"), said.get("status")
    label = choice.get("label") if isinstance(choice, Mapping) else None
    if not isinstance(label, str) or not isinstance(status, str):
        return None
    return plain(label, 80), plain(status, 40)


def host_refusal(stderr: str, stdout: str, code: int | None) -> str:
    """Why a host's roost refused an answer, in its own words (its last line, without its
    `roost: ` prefix), one bounded printable line.

    >>> host_refusal("roost: api's question changed since it was shown\\n", "", 1)
    "api's question changed since it was shown"
    >>> host_refusal("", "", 7)
    'exit 7'
    """
    lines = [ln for ln in (stderr or stdout).splitlines() if ln.strip()]
    said = lines[-1].strip().removeprefix("roost: ") if lines else f"exit {code}"
    return plain(said, 200)


# ---- the installable app ------------------------------------------------------------------------
ICON_SIZES = (192, 512)
ICON_COLOUR = (0x2B, 0x5F, 0x8A)


def manifest() -> dict[str, object]:
    return {
        "name": "roost",
        "short_name": "roost",
        "description": "Your agents: who needs you, and an answer from the notification",
        "start_url": "/",
        "scope": "/",
        "display": "standalone",
        "background_color": "#101418",
        "theme_color": "#2b5f8a",
        "icons": [
            {"src": f"/icon-{n}.png", "sizes": f"{n}x{n}", "type": "image/png", "purpose": "any"}
            for n in ICON_SIZES
        ],
    }


# An "r" on a 5x7 grid, drawn white on the square.
_GLYPH = ("00000", "00000", "10110", "11001", "10000", "10000", "10000")


def png_icon(size: int, colour: tuple[int, int, int] = ICON_COLOUR) -> bytes:
    """A square PNG of `size` pixels: the colour, a white "r" in its middle (made here, so the
    repository holds no binary).

    >>> png = png_icon(16)
    >>> png[:8] == b"\\x89PNG\\r\\n\\x1a\\n", png[16:24] == struct.pack(">II", 16, 16)
    (True, True)
    """
    cell = max(1, size // 10)
    left, top = (size - 5 * cell) // 2, (size - 7 * cell) // 2
    rows = []
    for y in range(size):
        row = bytearray(b"\0")  # filter: none
        gy = (y - top) // cell if y >= top else -1
        for x in range(size):
            gx = (x - left) // cell if x >= left else -1
            on = 0 <= gy < 7 and 0 <= gx < 5 and _GLYPH[gy][gx] == "1"
            row += bytes((255, 255, 255)) if on else bytes(colour)
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
        + chunk(b"IEND", b"")
    )
