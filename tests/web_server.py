"""`roost web` for tests: the real command in a subprocess of a test's world, and a small HTTP
client that sets exactly the headers a test means (a browser's, or a forger's)."""

from __future__ import annotations

import http.client
import json
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cli_install import cache_root
from conftest import Env

REPO = Path(__file__).resolve().parent.parent
# xterm.js as .ci/run installs it (npm, pinned); the terminal tests need it
XTERM = cache_root() / "xterm"  # .ci/run installs xterm.js there (ROOST_TEST_CACHE honoured)


@dataclass
class Web:
    url: str  # the login URL with its token
    proc: subprocess.Popen[str] | None = None  # None: a server the test did not start

    @property
    def netloc(self) -> str:
        return urlsplit(self.url).netloc

    @property
    def base(self) -> str:
        return f"http://{self.netloc}"

    @property
    def token(self) -> str:
        return self.url.split("token=", 1)[1]


@contextmanager
def running(world: Env, *args: str, env: dict[str, str] | None = None) -> Iterator[Web]:
    """`roost web --bind 127.0.0.1:0 ARGS` until the block ends; its login URL once it listens.
    `env`: more of its environment."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "roost", "web", "--bind", "127.0.0.1:0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**world.env, "ROOST_WEB_ASSETS": str(XTERM), **(env or {})},
        cwd=world.tmp,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 20)
        line = proc.stdout.readline() if ready else ""
        assert line.startswith("roost web: http://"), (line, proc.poll())
        yield Web(line.split(" ", 2)[2].strip(), proc)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@dataclass
class Client:
    """One browser-like client: its cookie, and the page's CSRF token once it read a page."""

    web: Web
    cookie: str = ""
    csrf: str = ""
    headers: dict[str, str] = field(default_factory=dict)

    def request(
        self, method: str, path: str, body: object = None, **headers: str
    ) -> tuple[int, dict[str, str], str]:
        conn = http.client.HTTPConnection(self.web.netloc, timeout=60)
        sent = {"Cookie": self.cookie} if self.cookie else {}
        sent.update({k.replace("_", "-"): v for k, v in headers.items() if v})  # "": left out
        data = json.dumps(body) if body is not None else None
        if data is not None:
            sent["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=sent)
        resp = conn.getresponse()
        text = resp.read().decode()
        conn.close()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, text

    def login(self, token: str | None = None) -> None:
        path = "/login?token=" + (token or self.web.token)
        status, headers, _ = self.request("GET", path)
        assert status == 303, status
        self.cookie = headers["set-cookie"].split(";", 1)[0]
        _, _, page = self.request("GET", "/")
        self.csrf = page.split('name="roost-csrf" content="', 1)[1].split('"', 1)[0]

    def post(self, path: str, body: object, **headers: str) -> tuple[int, dict[str, object]]:
        defaults = {"Origin": self.web.base, "X-Roost-CSRF": self.csrf}
        status, _, text = self.request("POST", path, body, **{**defaults, **headers})
        return status, json.loads(text) if text.startswith("{") else {"text": text}


def wait_until(predicate: object, timeout: float = 15, what: str = "condition") -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()  # type: ignore[operator]
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


@contextmanager
def chromium(tmp: Path, width: int = 1000, height: int = 800) -> Iterator[Any]:
    """Debian's headless Chromium through its own chromedriver (selenium; nothing downloaded).
    A new empty profile; no background networking (the machine has no network to reach)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tmp / "chromium-profile"
    profile.mkdir(exist_ok=True)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        f"--window-size={width},{height}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()
