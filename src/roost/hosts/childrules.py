"""Children on a host (docs/HOSTS.md): what a line of a host's `roost watch --json` means to a
parent here. Pure.

The change is the host's own edge (its status event's `previous` -> `status`), judged by the
rules of a local child's (core/notify.py): working -> idle is a finished turn. Not this side's
last status: a child spawned with its prompt shows idle before it takes the prompt, and that
idle must not read as the turn's end. A line read twice (a reconnect that replays it) is
dropped by the host's cursor, stored with the notice in one transaction (hosts/children.py).

>>> change({"kind": "status", "name": "kid", "status": "idle", "previous": "working"})
Change(status='idle', kind='finished', detail=None)
>>> change({"kind": "status", "status": "idle", "previous": "starting"}).kind is None
True
>>> change({"kind": "status", "status": "exited", "previous": "idle", "exit_code": 3}).detail
'exit code 3'
>>> change({"kind": "bell", "name": "kid"}) is None
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from roost.core import notify, replies


@dataclass(frozen=True, slots=True)
class Change:
    status: str  # the child's status to store
    kind: str | None  # what the parent hears of (core/notify's kinds), or None
    detail: str | None  # the notice's detail known from the line (the reply is fetched)


def change(event: Mapping[str, object]) -> Change | None:
    """What a stream line says about a child: None when it is no status change."""
    status, previous = event.get("status"), event.get("previous")
    if event.get("kind") != "status" or not isinstance(status, str):
        return None
    known = previous if isinstance(previous, str) else None
    kind = notify.kind_of(known, status)
    detail: str | None = None
    if kind == "exited":
        detail = f"exit code {event.get('exit_code')}"
    elif kind in ("failed", "limited"):
        reason = event.get("reason")
        detail = reason if isinstance(reason, str) else None
    return Change(status, kind, detail)


def qualified(host: str, name: str) -> str:
    """The child's name as its parent knows it: `HOST:NAME` (roost's `HOST:AGENT`).

    >>> qualified("h1", "kid")
    'h1:kid'
    """
    return f"{host}:{name}"


def read_answer(found: object, max_chars: int) -> replies.Read | None:
    """What of a host's `roost read --json` reaches the parent: its source and words only, as
    strings, bounded here as a local read is (core/replies.py: a host's roost is trusted no
    further); None when it is no such answer.

    >>> read_answer({"source": "screen", "screen": "x" * 9, "extra": 1}, 4)
    {'source': 'screen', 'screen': '[…5 earlier characters cut]\\nxxxx'}
    >>> read_answer({"source": "screen", "screen": "x", "note": "k: no record"}, 40)["note"]
    'k: no record'
    >>> read_answer({"source": "transcript", "messages": [{"role": "user", "text": "hi"}]}, 9)
    {'source': 'transcript', 'messages': [{'role': 'user', 'text': 'hi'}]}
    >>> read_answer({"source": "transcript", "messages": [{"role": 1}]}, 9) is None
    True
    """
    if not isinstance(found, dict):
        return None
    source = found.get("source")
    if source == "transcript":
        said = found.get("messages")
        if not isinstance(said, list) or not all(_message(m) for m in said):
            return None
        return {"source": source, "messages": replies.fit(said, max_chars)}
    key = {"screen": "screen", "none": "note"}.get(source) if isinstance(source, str) else None
    words = found.get(key) if key else None
    if key is None or not isinstance(words, str):
        return None
    said = replies.bounded(words, max_chars) or ""
    if source == "none":
        return {"source": "none", "note": said}
    answer: replies.Read = {"source": "screen", "screen": said}
    note = found.get("note")
    if isinstance(note, str):  # why a screen and not a record
        answer["note"] = note[:NOTE_LIMIT]
    return answer


NOTE_LIMIT = 500  # characters of a host's note on a screen it gave instead of messages


def _message(m: object) -> bool:
    return isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("text"), str)
