"""A loopback stand-in for an ntfy topic and a webhook (tests of alerts/operations.py): records each
POST (path, headers, body) and answers 200, or `status`, after `delay` seconds."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Stub:
    delay: float = 0.0
    status: int = 200
    posts: list[dict[str, Any]] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None
    release: threading.Event = field(default_factory=threading.Event)

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> Stub:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                stub.posts.append({"path": self.path, "headers": dict(self.headers), "body": body})
                stub.release.wait(stub.delay)  # a slow endpoint, unless the test lets it go
                self.send_response(stub.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.release.set()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
