"""Pushes for agents on hosts (issue 40 point 5): a host's agent that needs the person reaches
this roost's paired phones, and the answer from the notification is applied on that host.

No port of the host's is opened and no push service is reached from it: this roost's service
follows each host's `roost watch --json --since SEQ` over the hosts room's OpenSSH master (as
the children on hosts are followed, hosts/children.py) while a device is subscribed here. The
host's own alerts decider (its service) has judged the edge once, deduplicated with its other
channels and quiet while a person's terminal there shows the agent; each of its `alert` lines
with an edge that needs the person (rules.PUSHED_EDGES) becomes a push to this roost's devices,
named HOST:NAME. A waiting agent's question is the host's `roost answer NAME --json` (its words,
its choices, its fingerprint); the capability minted for each device carries HOST:NAME and that
fingerprint, and push/operations.answer applies it on the host (`roost answer NAME CHOICE
--question ID`), refused there if the dialog changed.

The host's cursor moves before the pushes go out (at most once: a restart or a reconnect
resumes after the last line read, nothing pushed twice); an alert older than
rules.STALE_HOST_ALERT (10 minutes, by the host's clock against this one's), read after a gap,
is not pushed. Everything a host says is untrusted:
a line longer than rules.MAX_HOST_LINE is skipped, every field is checked and made one bounded
printable line (rules.host_alert, rules.host_question).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable

from roost.core.errors import RoostError
from roost.hosts import operations as hosts
from roost.ops import service
from roost.ops.context import App
from roost.ops.service import Component
from roost.push import operations as push
from roost.push import rules
from roost.store import push as rows

PAUSE_MAX = 30.0  # seconds: a dropped stream is retried after 1 s, doubling to this
ASK_LIMIT = 15.0  # seconds a host has to say its agent's question


def on_line(app: App, host: hosts.Host, text: str) -> list[push.Push]:
    """One line of the host's stream: the pushes it makes (none for most lines). The cursor
    moves first, so a line is pushed once whatever happens next."""
    event = _json(text)
    seq = event.get("seq") if event is not None else None
    if event is None or not isinstance(seq, int) or isinstance(seq, bool):
        return []
    alert = rules.host_alert(host.name, event)
    if alert is None:
        if seq % 50 == 0:  # others' lines: the cursor moves now and then (replaying them is
            with app.store.write() as c:  # harmless: they push nothing)
                if (rows.host_cursor(c, host.name) or 0) < seq:
                    rows.set_host_cursor(c, host.name, seq)
        return []
    with app.store.write() as c:
        if (rows.host_cursor(c, host.name) or 0) >= seq:
            return []  # read before (a replay)
        rows.set_host_cursor(c, host.name, seq)
    if rules.stale(alert.at, app.store.now_iso()):
        return []  # read after a gap: no longer news (its capability would have expired)

    def ask() -> push.Asked | None:
        if alert.edge in rules.REPLY_EDGES:  # at its input there: a text field answers it
            return rules.REPLY, ()
        return question_on(app, host, alert.name) if alert.edge == "waiting" else None

    return push.pushes_for(
        app, alert.qualified, alert.qualified, alert.edge, alert.title, alert.body, ask
    )


def question_on(app: App, host: hosts.Host, name: str) -> push.Asked | None:
    """The question host's agent NAME asks now (the host's `roost answer NAME --json`), or None
    (it asks none it can read, the host does not answer in time, or says no such thing)."""
    reach = hosts.reach_of(app)
    try:
        said = hosts.run(
            reach,
            host,
            ["answer", "--json", "--", name],
            within=(hosts.link(reach, host), ASK_LIMIT),
        )
    except RoostError:
        return None
    if said.code != 0:
        return None
    return rules.host_question(_json(said.out))


def _json(text: str) -> dict[str, object] | None:
    if len(text) > rules.MAX_HOST_LINE:
        return None  # no host's line is that long: not read
    try:
        found = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return found if isinstance(found, dict) else None


def start_at(app: App, host: hosts.Host) -> int:
    """Where a host's stream is read from: after the last line read, or, the first time, after
    its newest event (its past alerts are not pushed now)."""
    kept = rows.host_cursor(app.store.conn, host.name)
    if kept is not None:
        return kept
    said = hosts.run(hosts.reach_of(app), host, ["events", "--json", "--limit", "1"])
    found = json.loads(said.out) if said.code == 0 and len(said.out) < rules.MAX_HOST_LINE else None
    if not isinstance(found, list):
        raise RoostError(f"host {host.name}: its roost events --json said no list")
    last = found[-1].get("id") if found and isinstance(found[-1], dict) else 0
    seq = last if isinstance(last, int) and not isinstance(last, bool) else 0
    with app.store.write() as c:
        if rows.host_cursor(c, host.name) is None:
            rows.set_host_cursor(c, host.name, seq)
    return rows.host_cursor(app.store.conn, host.name) or seq


def follow(app: App, host_name: str, stopping: threading.Event) -> None:
    """Follow one host's stream while a device is subscribed here and the host is known; after
    a drop, again from the cursor (1 s, doubling to 30 s)."""
    pause = 1.0
    while not stopping.is_set():
        if not rows.has_subscriptions(app.store.conn):
            return
        try:
            reach = hosts.reach_of(app)
            host = hosts.get(reach, host_name)
        except RoostError:
            return  # forgotten (host rm)
        try:
            seq = start_at(app, host)
            args = ["watch", "--json", "--since", str(seq)]
            for text in hosts.link(reach, host).lines(hosts.line(host, args)):
                pushes = on_line(app, host, text)
                if pushes:
                    said = push.send_all(app, pushes)
                    if said is not None:
                        say(f"push for {host_name}'s agents: {said}")
                pause = 1.0
                if stopping.is_set() or not rows.has_subscriptions(app.store.conn):
                    return
            why = "its stream ended"
        except RoostError as exc:
            why = str(exc)
        if stopping.is_set():
            return
        say(f"push for {host_name}'s agents: {why}; again in {pause:g} s")
        stopping.wait(pause)
        pause = min(pause * 2, PAUSE_MAX)


def say(text: str) -> None:
    service.say(rules.plain(text, 300))  # a host's words, made one printable line


def _hosts(app: App) -> list[str]:
    """Every known host, while a device is subscribed here."""
    if not rows.has_subscriptions(app.store.conn):
        return []
    return [host.name for host in hosts.every(hosts.reach_of(app))]


def _start(app: App) -> Callable[[], None]:
    """Each host followed in a thread of its own while a device is subscribed."""
    return service.per_host(app, "hostpush", _hosts, follow)


COMPONENT = Component(name="hostpush", start=_start)
