"""Push to a phone, done: pairing devices, their subscriptions, Web Push from the roost service's
alerts, and answers from a notification applied as `roost answer` applies them.

Web Push is RFC 8030 (a POST to the subscription's endpoint), RFC 8291 (the body encrypted,
aes128gcm, to the subscription's keys) and RFC 8292 (VAPID: roost's key, made once per
ROOST_HOME in `push-vapid.pem`, 0600). pywebpush does all three; it and its HTTP stack load only
in the process that sends (the service's alerts worker, roost web), never on `roost ls`'s path.

Sending happens off the store: `prepare` does every read and write (who is subscribed, the
question on the agent's screen, a capability per device) in the caller's thread, and returns
jobs that only speak HTTP, with a timeout, in the alerts' delivery threads. A push service that
answers 404 or 410 has dropped the subscription: it is forgotten.
"""

from __future__ import annotations

import json
import secrets
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roost.core.errors import RoostError
from roost.core.pane import agent_panes
from roost.core.questions import Choice, Question
from roost.hosts.rules import split_target
from roost.ops.context import App
from roost.push import rules
from roost.store import events as event_log
from roost.store import push as rows
from roost.system import secretfile

VAPID_FILE = "push-vapid.pem"
SUBJECT = "mailto:roost@localhost"  # VAPID's contact claim (RFC 8292 §2.1)
PUSH_TIMEOUT = 5.0  # seconds one push may take
PUSH_TTL = 600  # seconds a push service keeps an undelivered push
LOOPBACK_ENV = "ROOST_PUSH_LOOPBACK"  # "1": http push endpoints on loopback (tests only)
SCREEN_LINES = 60  # lines read for a waiting agent's question (as ops/answer.py reads)
SEEN_EVERY = 60.0  # seconds: a device's last_seen is written at most this often
NTFY = ""  # the device id of capabilities ntfy's buttons carry (no device)
_KEY_LOCK = threading.Lock()


def allow_loopback(environ: dict[str, str]) -> bool:
    return environ.get(LOOPBACK_ENV) == "1"


# ---- VAPID --------------------------------------------------------------------------------------
def vapid(home: Path) -> Any:
    """roost's VAPID key (py_vapid's Vapid02), made once in ROOST_HOME (0600). A key file that
    group or others may read is refused, as the web token is."""
    from py_vapid import Vapid02

    def make() -> bytes:
        key = Vapid02()
        key.generate_keys()
        return bytes(key.private_pem())

    with _KEY_LOCK:
        try:
            return Vapid02.from_pem(secretfile.read_or_make(home / VAPID_FILE, make))
        except PermissionError as exc:
            raise RoostError(str(exc)) from None


def public_key(home: Path) -> str:
    """The applicationServerKey a page subscribes with: base64url of the uncompressed point."""
    from cryptography.hazmat.primitives import serialization
    from py_vapid.utils import b64urlencode

    raw = vapid(home).public_key.public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return str(b64urlencode(raw))


# ---- pairing and devices ------------------------------------------------------------------------
def pairing_code(app: App) -> str:
    """A new one-time pairing code (its digest stored, valid PAIRING_TTL s)."""
    code = secrets.token_urlsafe(24)
    now = app.store.now_iso()
    with app.store.write() as c:
        rows.forget_expired(c, rules.expiry(now, -86400))
        rows.add_pairing(c, rules.digest(code), rules.expiry(now, rules.PAIRING_TTL))
    return code


@dataclass(frozen=True, slots=True)
class Paired:
    device_id: str
    name: str
    cookie: str  # the device's credential, shown once (the store keeps its digest)


def pair(app: App, code: str, name: str | None, user_agent: str | None) -> Paired:
    """Redeem a pairing code (once, before its expiry): a new device with its own secret."""
    if not rules.well_formed(code):
        raise RoostError("not a pairing code")
    now = app.store.now_iso()
    device_id, secret = uuid.uuid4().hex[:12], secrets.token_urlsafe(32)
    shown = rules.device_name(name, user_agent)
    with app.store.write() as c:
        expires = rows.take_pairing(c, rules.digest(code), now)
        if expires is None or not rules.fresh(now, expires, 10 * rules.PAIRING_TTL):
            raise RoostError("this pairing link was used or has expired: roost web pair")
        rows.add_device(c, device_id, shown, rules.digest(secret), now)
        event_log.append(c, "", "push", now, "device-paired", {"device": device_id, "name": shown})
    return Paired(device_id, shown, rules.device_cookie(device_id, secret))


def device_of(app: App, cookie: str | None) -> str | None:
    """The device a cookie proves, if it is a live (not revoked) device's; None otherwise."""
    parsed = rules.parse_cookie(cookie)
    if parsed is None:
        return None
    device_id, secret = parsed
    found = rows.device_secret(app.store.conn, device_id)
    if found is None or found[1] is not None:
        return None
    import hmac

    if not hmac.compare_digest(found[0], rules.digest(secret)):
        return None
    now = app.store.now_iso()
    if not rules.fresh(rows.last_seen(app.store.conn, device_id), now, SEEN_EVERY):
        with app.store.write() as c:  # `roost web devices` says when, to the minute
            rows.seen(c, device_id, now)
    return device_id


def devices(app: App) -> list[rows.Device]:
    return rows.devices(app.store.conn)


def revoke(app: App, device_id: str) -> None:
    with app.store.write() as c:
        if not rows.revoke(c, device_id, c.now_iso()):
            known = any(d.id == device_id for d in rows.devices(c))
            raise RoostError(
                f"device {device_id[:40]!r} is revoked already"
                if known
                else f"no device {device_id[:40]!r} (roost web devices lists them)"
            )
        event_log.append(c, "", "push", c.now_iso(), "device-revoked", {"device": device_id})


def subscribe(app: App, device_id: str, body: object, resolver: Resolver | None = None) -> None:
    """Keep the page's push subscription for its device; refused (RoostError) as rules say,
    and when its endpoint's name resolves to any address that is not a public one."""
    allowed = allow_loopback(app.environ)
    found = rules.subscription(body, allowed)
    if not isinstance(found, str):
        checked = addresses(found.endpoint, allowed, resolver)
        found = checked if isinstance(checked, str) else found
    if isinstance(found, str):
        _refused(app, None, found, device_id)
        raise RoostError(found)
    with app.store.write() as c:
        rows.subscribe(c, device_id, found, c.now_iso())


def subscribed(app: App, device_id: str) -> bool:
    return bool(rows.targets(app.store.conn, device_id))


def viewing(app: App, device_id: str, name: str | None) -> None:
    """The device's page shows this agent now (None: none): its pushes are quiet meanwhile."""
    agent_id = None
    if name:
        agent = app.store.get(name)
        agent_id = agent.id if agent is not None else None
    with app.store.write() as c:
        rows.viewing(c, device_id, agent_id, c.now_iso())


# ---- sending ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Push:
    device_id: str
    subscription: rules.Subscription
    data: dict[str, object]


# ---- where a push goes: the endpoint's name resolved, checked, and that address connected to ----
RESOLVE_TIMEOUT = 2.0  # seconds an endpoint's name has to resolve (getaddrinfo has no limit)
Resolver = Callable[[str, int], list[str]]  # (host, port) -> its addresses; OSError if none


def system_resolver(host: str, port: int) -> list[str]:
    """The addresses getaddrinfo gives for host (the system's resolver, /etc/hosts included)."""
    import socket

    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in found))


def resolve(host: str, port: int, resolver: Resolver, timeout: float) -> list[str] | str:
    """host's addresses, or why not: the resolver runs in a thread of its own, waited for at
    most `timeout` s (a resolver that hangs costs that, then is left to finish alone)."""
    said: dict[str, object] = {}

    def run() -> None:
        try:
            said["found"] = resolver(host, port)
        except (OSError, UnicodeError) as exc:
            said["error"] = exc

    thread = threading.Thread(target=run, name="push-resolve", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        return f"a push endpoint's name did not resolve within {timeout:g} s"
    found = said.get("found")
    if not isinstance(found, list) or not found:
        return (
            f"a push endpoint's name does not resolve ({rules.plain(str(said.get('error')), 80)})"
        )
    return [str(a) for a in found]


def addresses(url: str, allow: bool, resolver: Resolver | None = None) -> list[str] | str:
    """The addresses a push to `url` may connect to, or why none: its name resolved (bounded)
    and refused when ANY address is not public (rules.address_problem); a loopback one only
    in the tests' mode, or at send time for an endpoint that names loopback itself (stored
    in that mode)."""
    from urllib.parse import urlsplit

    refused = rules.check_endpoint(url, allow)
    if refused:
        return refused
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    found = resolve(host, port, resolver or system_resolver, RESOLVE_TIMEOUT)
    if isinstance(found, str):
        return found
    for address in found:
        problem = rules.address_problem(address, allow)
        if problem:
            return problem
    return found


def pinned(host: str, address: str) -> Any:
    """A requests session whose every request connects to `address` (the one checked), while
    TLS still names and verifies `host` (SNI, the certificate) and the Host header keeps it:
    no second DNS answer (a rebinding) between the check and the POST. Through a proxy the
    environment names (HTTPS_PROXY), the proxy connects: the name was checked just before."""
    import requests
    from requests.adapters import HTTPAdapter

    class Pinned(HTTPAdapter):
        def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
            kwargs["server_hostname"] = host  # dropped by urllib3 for an http pool
            kwargs["assert_hostname"] = host
            super().init_poolmanager(*args, **kwargs)

        def send(self, request: Any, *args: Any, **kwargs: Any) -> Any:
            from urllib.parse import urlsplit, urlunsplit

            from requests.utils import select_proxy

            if select_proxy(request.url, kwargs.get("proxies") or {}):
                return super().send(request, *args, **kwargs)  # the proxy connects (checked)
            parts = urlsplit(request.url)
            request.headers["Host"] = parts.netloc
            where = f"[{address}]" if ":" in address else address
            netloc = f"{where}:{parts.port}" if parts.port else where
            request.url = urlunsplit(parts._replace(netloc=netloc))
            return super().send(request, *args, **kwargs)

    session = requests.Session()
    adapter = Pinned()
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    return session


def send(
    home: Path, push: Push, timeout: float = PUSH_TIMEOUT, resolver: Resolver | None = None
) -> str | None:
    """One encrypted push (RFC 8291 aes128gcm, VAPID); None when the push service took it,
    "gone" when it answered 404/410 (the subscription is no more), else what went wrong.
    The endpoint's name is resolved and checked again right before (`addresses`), and the
    POST connects to the address checked (`pinned`)."""
    from urllib.parse import urlsplit

    from pywebpush import WebPushException, webpush

    sub = push.subscription
    host = urlsplit(sub.endpoint).hostname or ""
    found = addresses(sub.endpoint, rules.names_loopback(host), resolver)
    if isinstance(found, str):
        return f"push refused: {found}"[:200]
    info = {"endpoint": sub.endpoint, "keys": {"p256dh": sub.p256dh, "auth": sub.auth}}
    try:
        webpush(
            info,
            json.dumps(push.data),
            vapid_private_key=vapid(home),
            vapid_claims={"sub": SUBJECT},
            content_encoding="aes128gcm",
            timeout=timeout,
            ttl=PUSH_TTL,
            requests_session=pinned(host, found[0]),
        )
    except WebPushException as exc:
        code = getattr(exc.response, "status_code", None)
        if code in (404, 410):
            return "gone"
        return f"push refused: {code or exc}"[:200]
    except Exception as exc:  # noqa: BLE001 (the network: any failure is this push's)
        return f"{type(exc).__name__}: {exc}"[:200]
    return None


def warm(app: App) -> None:
    """With a device subscribed, load pywebpush (~1 s of imports: requests, aiohttp) in a
    thread of its own now, so the first push after the service starts does not wait for it."""
    if not rows.has_subscriptions(app.store.conn):
        return

    def load() -> None:
        try:
            import pywebpush  # noqa: F401
        except ImportError:
            pass  # said by the first push (the web extra is missing)

    threading.Thread(target=load, name="push-warm", daemon=True).start()


def send_all(app: App, pushes: Sequence[Push], timeout: float = PUSH_TIMEOUT) -> str | None:
    """Send pushes at once (the network in threads, the store in this one); forget the
    subscriptions the push service dropped. None if all were taken, else the first failure."""
    from roost.system import outbound

    home = app.paths.home
    calls = [lambda p=p: send(home, p, timeout) or "ok" for p in pushes]
    said: dict[int, str] = dict(outbound.as_they_answer(calls, timeout + 1.0))
    gone = [pushes[i] for i, s in said.items() if s == "gone"]
    if gone:
        with app.store.write() as c:
            for p in gone:
                rows.unsubscribe(c, p.device_id, p.subscription.endpoint)
    bad = [s for s in said.values() if s not in ("ok", "gone")]
    if len(said) < len(pushes):
        bad.append(f"no answer within {timeout:g} s")
    return bad[0] if bad else None


def prepare(app: App, agent_id: str, agent: str, edge: str, title: str, body: str) -> list[Push]:
    """The pushes an alert makes: one per subscribed device not looking at that agent's page,
    a waiting agent's choices as actions with a capability for that device."""

    def ask() -> Asked | None:
        if edge in rules.REPLY_EDGES:  # at its input: a text field answers it
            return rules.REPLY, ()
        found = question_of(app, agent_id) if edge == "waiting" else None
        return None if found is None else (found.fingerprint, found.choices)

    return pushes_for(app, agent_id, agent, edge, title, body, ask)


Asked = tuple[str, Sequence[Choice]]  # a question's fingerprint and its choices


def pushes_for(
    app: App,
    agent_id: str,
    agent: str,
    edge: str,
    title: str,
    body: str,
    ask: Callable[[], Asked | None],
) -> list[Push]:
    """The pushes of one alert: per subscribed device not looking at that agent, with the
    question `ask` reads (asked only when a device is to be told) as actions and a capability
    minted for that device. `agent`: the name answers reach it by (HOST:NAME on a host)."""
    targets = rows.targets(app.store.conn)
    now = app.store.now_iso()
    quiet = {
        t.device_id
        for t in targets
        if t.viewing == agent_id and rules.fresh(t.viewing_at, now, rules.VIEWING_FRESH)
    }
    targets = [t for t in targets if t.device_id not in quiet]
    if not targets:
        return []
    asked = ask()
    found: list[Push] = []
    for t in targets:
        if asked is None:
            data = rules.payload(title, body, agent, edge)
        else:
            fingerprint, choices = asked
            cap = mint(app, t.device_id, agent_id, agent, fingerprint)
            data = rules.payload(title, body, agent, edge, choices, cap, fingerprint)
        found.append(Push(t.device_id, t.subscription, data))
    return found


def question_of(app: App, agent_id: str) -> Question | None:
    """The question on a waiting agent's screen now (core/questions.py), if it reads one."""
    from roost.core import questions

    pane = agent_panes(app.tmux.list_panes()).get(agent_id)
    if pane is None or pane.dead:
        return None
    return questions.read(app.tmux.capture(pane.pane_id, SCREEN_LINES))


def mint(app: App, device_id: str, agent_id: str, agent: str, fingerprint: str) -> str:
    """A one-time capability to answer that question of that agent from that device."""
    secret = secrets.token_urlsafe(32)
    expires = rules.expiry(app.store.now_iso(), rules.CAPABILITY_TTL)
    cap = rules.Capability(device_id, agent_id, agent, fingerprint, expires, None)
    with app.store.write() as c:
        rows.add_capability(c, rules.digest(secret), cap)
    return secret


class Channel:
    """The alerts' `push` channel for a batch of queued alerts (store/alerts.Pending): every
    push prepared at construction, in the alerts worker's thread (it reads and writes the
    store); `send` only speaks HTTP, in a delivery thread; `forget_gone`, back in the worker's
    thread, drops the subscriptions push services refused. ntfy's buttons are minted here too
    (`ntfy`: alert id -> its actions)."""

    def __init__(self, app: App, pending: Sequence[Any]) -> None:
        self.app = app
        self.pushes: dict[int, list[Push]] = {}
        self.ntfy: dict[int, list[dict[str, object]]] = {}
        self._gone: list[Push] = []
        self._lock = threading.Lock()
        subscribed = rows.has_subscriptions(app.store.conn)
        for p in pending:
            if subscribed and "push" not in p.done and p.edge in rules.PUSHED_EDGES:
                self.pushes[p.id] = prepare(app, p.agent_id, p.agent, p.edge, p.title, p.body)
            if p.edge == "waiting" and app.settings.notify.ntfy and "ntfy" not in p.done:
                self.ntfy[p.id] = ntfy_actions(app, p.agent_id, p.agent)

    @property
    def active(self) -> bool:
        return bool(self.pushes)

    def send(self, p: Any) -> str | None:
        problems = []
        for push in self.pushes.get(p.id, []):  # one device after another, within the timeout
            said = send(self.app.paths.home, push)
            if said == "gone":
                with self._lock:
                    self._gone.append(push)
            elif said is not None:
                problems.append(said)
        return problems[0] if problems else None

    def forget_gone(self) -> None:
        with self._lock:
            gone, self._gone = self._gone, []
        if gone:
            with self.app.store.write() as c:
                for push in gone:
                    rows.unsubscribe(c, push.device_id, push.subscription.endpoint)


def ntfy_actions(app: App, agent_id: str, agent: str) -> list[dict[str, object]]:
    """ntfy's buttons for a waiting agent's question: `http` actions that POST an answer with a
    capability (device: none) to roost web at [push] url; none without that url."""
    base = app.settings.push.url
    if not base:
        return []
    asked = question_of(app, agent_id)
    if asked is None:
        return []
    cap = mint(app, NTFY, agent_id, agent, asked.fingerprint)
    return rules.ntfy_actions(base, cap, asked.choices)


# ---- answers from a notification ----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Applied:
    agent: str
    choice: str | None  # its label, when applied
    refused: str | None  # why not
    shows: str | None  # what the agent shows after it
    device_id: str | None


def answer(
    app: App, capability: object, choice: object, device: str | None, text: object = None
) -> Applied:
    """POST /push/answer: the capability checked (rules.judge: unknown, used, expired, another
    device's, a revoked device's; rules.kind_problem: a choice for a question's, text for a
    reply's), marked used before anything is pressed (a replay finds it used), then applied
    exactly as `roost answer NAME CHOICE --question FINGERPRINT` (refused if the question on
    the screen is another one), or a reply as an acknowledged `roost send` (refused while the
    agent asks something). Every refusal is logged; nothing is typed."""
    from roost.ops import answer as answering

    malformed = rules.answer_problem(capability, choice, text)
    if malformed:
        _refused(app, None, malformed, device)
        return Applied("", None, malformed, None, device)
    assert isinstance(capability, str)
    key = rules.digest(capability)
    now = app.store.now_iso()
    with app.store.write() as c:
        found = rows.capability(c, key)
        owner = rows.device_secret(c, found.device_id) if found and found.device_id else None
        revoked = owner is None if found and found.device_id else False
        revoked = revoked or (owner is not None and owner[1] is not None)
        refused = rules.judge(found, now, device, revoked)
        if refused is None:
            assert found is not None
            refused = rules.kind_problem(found, choice, text)
        if refused is None:
            assert found is not None
            rows.use_capability(c, key, now)
    if refused is not None:  # told to the device that asked (if it is one), no other
        _refused(app, found, refused, device)
        return Applied(found.agent if found else "", None, refused, None, device)
    assert found is not None
    on_host = split_target(found.agent)  # a host's agent: its roost answers, over ssh
    if on_host is not None:
        said = text if isinstance(text, str) else str(choice)
        return _answer_on_host(app, found, on_host, said, _owner(found, device))
    agent = app.store.get_by_id(found.agent_id)
    if agent is None:
        _refused(app, found, "the agent is gone", device)
        return Applied(found.agent, None, "the agent is gone", None, _owner(found, device))
    if isinstance(text, str):
        return _reply(app, found, agent.name, text, _owner(found, device))
    assert isinstance(choice, str)
    try:
        done = answering.answer(app, agent.name, choice, expect=found.fingerprint)
    except RoostError as exc:
        _refused(app, found, str(exc), device)
        return Applied(agent.name, None, str(exc), None, _owner(found, device))
    return Applied(agent.name, done.choice.label, None, str(done.status), _owner(found, device))


REPLY_READY = 10.0  # seconds a reply waits for its agent to be at its input (then: not sent)
REPLIED = "your reply"  # what a receipt says was applied for a reply


def _reply(app: App, found: rules.Capability, name: str, text: str, owner: str | None) -> Applied:
    """A reply from a notification's text field, as `roost send NAME TEXT`: refused at once
    when the agent now asks something (a dialog came meanwhile: the words were not meant for
    it); the send itself types only at the agent's input (it waits for it, never into a
    question), confirms the text arrived, and says why not."""
    from roost.core.status import Status
    from roost.ops import observe
    from roost.ops import send as sending

    now = observe.one(app, name)
    if now is not None and now.status == Status.WAITING:
        why = f"{name} now asks something (roost answer {name}); nothing typed"
        _refused(app, found, why, owner)
        return Applied(name, None, why, None, owner)
    try:
        sent = sending.send(app, name, text, ready_timeout=REPLY_READY)
    except RoostError as exc:
        _refused(app, found, str(exc), owner)
        return Applied(name, None, str(exc), None, owner)
    if not sent.delivered:
        why = f"not delivered: {sent.how}"
        _refused(app, found, why, owner)
        return Applied(name, None, why, None, owner)
    after = observe.one(app, name)
    shows = str(after.status) if after is not None and after.status else None
    return Applied(name, REPLIED, None, shows, owner)


HOST_ANSWER_LIMIT = 60.0  # seconds a host's `roost answer` may take (its own waits: 40 s)


def _answer_on_host(
    app: App, found: rules.Capability, on_host: tuple[str, str], choice: str, owner: str | None
) -> Applied:
    """Apply the answer ON the host, as its own `roost answer NAME CHOICE --question ID
    --json` over the hosts room's ssh path (hosts.run: every word quoted, `--` before the name
    and the choice, so neither is read as an option): the host refuses it when its dialog
    changed. What the host says is untrusted: bounded, checked, one printable line each."""
    from roost.hosts import operations as hosts

    host_name, name = on_host
    qualified = found.agent
    if found.fingerprint == rules.REPLY:  # the host's acknowledged send, at its agent's input
        ready = f"--ready-timeout={REPLY_READY:g}"
        args = ["send", ready, "--", name, choice]
    else:
        args = ["answer", f"--question={found.fingerprint}", "--json", "--", name, choice]
    with app.store.write() as c:  # intent before effect: logged before the host is asked
        event_log.append(
            c, found.agent_id, qualified, c.now_iso(), "push-answering",
            {"host": host_name, "choice": rules.plain(choice, 80), "device": owner},
        )  # fmt: skip
    shows: str | None = None
    label: str | None = None
    try:
        reach = hosts.reach_of(app)
        host = hosts.get(reach, host_name)
        link = hosts.link(reach, host)
        said = hosts.run(reach, host, args, within=(link, HOST_ANSWER_LIMIT))
    except RoostError as exc:  # Unreachable is one; an unknown host too
        refused: str | None = rules.plain(str(exc), 200)
    else:
        if said.code != 0:
            refused = f"host {host_name}: {rules.host_refusal(said.err, said.out, said.code)}"
        elif found.fingerprint == rules.REPLY:
            refused, label = None, REPLIED
        else:
            outcome = _json(said.out)
            parsed = rules.host_answered(outcome)
            refused = None if parsed else f"host {host_name}: its roost answer said no JSON"
            if parsed:
                label, shows = parsed
    if refused is not None:
        _refused(app, found, refused, owner)
        return Applied(qualified, None, refused, None, owner)
    with app.store.write() as c:
        event_log.append(
            c, found.agent_id, qualified, c.now_iso(), "push-answered",
            {"host": host_name, "choice": label, "status": shows},
        )  # fmt: skip
    return Applied(qualified, label, None, shows, owner)


def _json(text: str) -> object:
    if len(text) > rules.MAX_HOST_LINE:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _owner(found: rules.Capability | None, device: str | None) -> str | None:
    if found is not None and found.device_id:
        return found.device_id
    return device


def _refused(app: App, found: rules.Capability | None, why: str, device: str | None) -> None:
    with app.store.write() as c:
        event_log.append(
            c,
            found.agent_id if found else "",
            found.agent if found else "push",
            c.now_iso(),
            "push-refused",
            {"why": rules.plain(why, 200), "device": device},
        )


def receipt(app: App, done: Applied) -> str | None:
    """Tell the device what became of its answer (a follow-up push); None when sent or there
    is no device to tell."""
    if done.device_id is None:
        return None
    pushes = [
        Push(
            t.device_id,
            t.subscription,
            rules.receipt(done.agent, done.choice, done.refused, done.shows),
        )
        for t in rows.targets(app.store.conn, done.device_id)
    ]
    return send_all(app, pushes) if pushes else None
