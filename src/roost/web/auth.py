"""Who may use roost web: a secret in an owner-only file, exchanged at /login for a session cookie.

Two secrets: the watch token (see, send, answer dialogs, wake/stop/park) and the typing token
(also type into a live terminal; accepted only when the server runs with --allow-typing). Each
lives in its own 0600 file under ROOST_HOME, made on first use. A session is a random id in an
HttpOnly, SameSite=Strict cookie, known only to this process (a restart asks for the token
again), with its own CSRF token that every POST must carry in a header.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path

from roost.system import secretfile

COOKIE = "roost_session"
CSRF_HEADER = "x-roost-csrf"
WATCH_FILE, TYPE_FILE = "web-token", "web-typing-token"


def secret(home: Path, name: str) -> str:
    """The secret in `home/name`, made (0600, owner only) when missing. A file others may read
    is no secret: it is refused, and `roost web` says how to fix it."""
    made = secretfile.read_or_make(home / name, lambda: (secrets.token_urlsafe(32) + "\n").encode())
    return made.decode("utf-8", "replace").strip()


@dataclass(frozen=True, slots=True)
class Session:
    csrf: str
    typing: bool  # may type into a terminal (logged in with the typing token)
    device: str | None = None  # a paired phone's (push/): its cookie, checked at each request


class Sessions:
    """The logged-in browsers of this server process (thread-safe: handlers run in a pool)."""

    def __init__(self, watch_token: str, typing_token: str | None) -> None:
        self._watch = watch_token
        self._typing = typing_token  # None: typing is not allowed on this server
        self._found: dict[str, Session] = {}
        self._lock = threading.Lock()

    def login(self, token: str) -> tuple[str, Session] | None:
        """A new session for a right token (compared in constant time), else None."""
        typing = self._typing is not None and same(token, self._typing)
        if not typing and not same(token, self._watch):
            return None
        sid, found = secrets.token_urlsafe(32), Session(secrets.token_urlsafe(24), typing)
        with self._lock:
            self._found[sid] = found
        return sid, found

    def get(self, sid: str | None) -> Session | None:
        if not sid:
            return None
        with self._lock:
            return self._found.get(sid)

    def csrf_ok(self, found: Session, header: str | None) -> bool:
        return bool(header) and same(found.csrf, header or "")


def same(given: str, secret: str) -> bool:
    """Compared in constant time, as bytes: compare_digest refuses a str with non-ASCII
    characters (TypeError), and a browser may send any."""
    return hmac.compare_digest(given.encode(), secret.encode())
