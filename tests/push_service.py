"""A loopback push service that speaks RFC 8030 (tests of push/): a subscription is a key pair and
an auth secret made here (what a browser's PushManager makes), its endpoint a URL of this server.
Each POST is checked as a real push service checks it (RFC 8292: the VAPID Authorization
header's JWT, signed ES256 with the key it names, for this origin, not expired) and decrypted with
the subscription's private key (RFC 8291, aes128gcm, http_ece). Answers 201, or what the test set
for that subscription (404/410: gone)."""

from __future__ import annotations

import base64
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, utils


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Received:
    sub: str  # the subscription's id
    payload: dict[str, Any]
    vapid_key: str  # the k= of its Authorization (roost's public key)
    claims: dict[str, Any]
    headers: dict[str, str]
    at: float = field(default_factory=time.time)  # when it arrived (bench/bench_push.py)


@dataclass
class Sub:
    id: str
    key: ec.EllipticCurvePrivateKey
    auth: bytes
    endpoint: str

    def json(self) -> dict[str, Any]:
        """What `PushSubscription.toJSON()` gives a page."""
        point = self.key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {"endpoint": self.endpoint, "keys": {"p256dh": b64(point), "auth": b64(self.auth)}}


@dataclass
class PushService:
    subs: dict[str, Sub] = field(default_factory=dict)
    status: dict[str, int] = field(default_factory=dict)  # sub id -> the answer it gets
    received: list[Received] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # what failed a check, and why
    server: ThreadingHTTPServer | None = None
    changed: threading.Condition = field(default_factory=threading.Condition)

    @property
    def base(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def subscription(self) -> Sub:
        sub_id = uuid.uuid4().hex[:12]
        made = Sub(
            sub_id,
            ec.generate_private_key(ec.SECP256R1()),
            uuid.uuid4().bytes,
            f"{self.base}/push/{sub_id}",
        )
        self.subs[sub_id] = made
        return made

    def wait(self, count: int, timeout: float = 30.0, what: str = "a push") -> list[Received]:
        """Until `count` pushes arrived (checked and decrypted); all received so far."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while len(self.received) < count:
                left = deadline - time.monotonic()
                assert left > 0, f"no {what} within {timeout}s (refused: {self.refused})"
                self.changed.wait(left)
            return list(self.received)

    def _check(self, sub: Sub, headers: dict[str, str], body: bytes) -> Received:
        if headers.get("content-encoding") != "aes128gcm":
            raise ValueError(f"content-encoding {headers.get('content-encoding')!r}")
        if not headers.get("ttl", "").isdigit():
            raise ValueError("no TTL")
        scheme, _, params = headers.get("authorization", "").partition(" ")
        given = dict(p.strip().split("=", 1) for p in params.split(","))
        if scheme != "vapid" or "t" not in given or "k" not in given:
            raise ValueError(f"authorization {headers.get('authorization')!r}")
        head, claims, sig = given["t"].split(".")
        public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64(given["k"]))
        raw = unb64(sig)
        der = utils.encode_dss_signature(
            int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")
        )
        try:
            public.verify(der, f"{head}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            raise ValueError("the VAPID signature does not verify") from None
        said = json.loads(unb64(claims))
        if json.loads(unb64(head)).get("alg") != "ES256":
            raise ValueError("not ES256")
        port = self.server.server_address[1] if self.server else 0
        audiences = (self.base, f"http://localhost:{port}")  # by its address or its name
        if said.get("aud") not in audiences or int(said.get("exp", 0)) < time.time():
            raise ValueError(f"claims {said}")
        if not str(said.get("sub", "")).startswith(("mailto:", "https:")):
            raise ValueError(f"sub {said.get('sub')!r}")
        plain = http_ece.decrypt(
            body, private_key=sub.key, auth_secret=sub.auth, version="aes128gcm"
        )
        return Received(sub.id, json.loads(plain), given["k"], said, headers)

    def start(self) -> PushService:
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                sub = service.subs.get(self.path.rsplit("/", 1)[-1])
                status = 404 if sub is None else service.status.get(sub.id, 201)
                if sub is not None and status == 201:
                    headers = {k.lower(): v for k, v in self.headers.items()}
                    try:
                        got = service._check(sub, headers, body)
                    except Exception as exc:  # noqa: BLE001 (a refusal the test reads)
                        status = 400
                        with service.changed:
                            service.refused.append(f"{type(exc).__name__}: {exc}")
                            service.changed.notify_all()
                    else:
                        with service.changed:
                            service.received.append(got)
                            service.changed.notify_all()
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
