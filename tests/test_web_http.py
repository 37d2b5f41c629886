"""roost web's security over plain HTTP (cheap; the browser tests are test_web_browser.py): a
token always, owner-only; the cookie it is exchanged for; Host, Origin and CSRF on what acts;
loopback unless asked; a dialog's keys only from the dialog itself."""

from __future__ import annotations

import html
import json
import os
import re
import socket
import stat

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from conftest import Env
from web_server import REPO, Client, Web, running, wait_until

pytestmark = pytest.mark.tmux


def spawn(world: Env, name: str) -> None:
    world.roost("spawn", name, "--cwd", str(world.tmp / "work"))


def test_nothing_without_the_token(world: Env) -> None:
    with running(world) as web:
        anon = Client(web)
        for path in ("/", "/events", "/a/api", "/a/api/live", "/a/api/term"):
            assert anon.request("GET", path)[0] == 401, path
        assert anon.request("GET", "/login?token=wrong")[0] == 403
        assert anon.request("GET", "/login")[0] == 403
        status, _ = anon.post("/a/api/send", {"text": "hi"})
        assert status == 401
        # the right token: a session cookie, HttpOnly and SameSite=Strict, and the token leaves
        # the address bar (a redirect to /)
        status, headers, _ = anon.request("GET", f"/login?token={web.token}")
        assert status == 303 and headers["location"] == "/"
        cookie = headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        assert headers["referrer-policy"] == "no-referrer"  # the token tells no other site
        anon.cookie = headers["set-cookie"].split(";", 1)[0]
        status, headers, _ = anon.request("GET", "/")
        assert status == 200 and headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
    mode = stat.S_IMODE(os.stat(world.home / "web-token").st_mode)
    assert mode == 0o600


def test_cross_site_requests_are_refused_and_change_nothing(world: Env) -> None:
    spawn(world, "api")
    world.wait_status("api", "idle")
    with running(world) as web:
        me = Client(web)
        me.login()
        forged = [
            {"Origin": "http://evil.example"},  # another site's page posting with my cookie
            {"Origin": ""},  # no Origin at all
            {"X-Roost-CSRF": "guess"},  # the right Origin, a wrong CSRF token
            {"X-Roost-CSRF": ""},
        ]
        for headers in forged:
            status, body = me.post("/a/api/send", {"text": "forged"}, **headers)
            assert status == 403, (headers, body)
        # DNS rebinding: a page of evil.example, its name now pointing at 127.0.0.1
        assert me.request("GET", "/", Host=f"evil.example:{web.netloc.split(':')[1]}")[0] == 403
        status, body = me.post("/a/api/send", {"text": "the real one"})
        assert status == 200 and body["delivered"] is True, body
        assert str(body["receipt"]).startswith("delivered to api")
    screen = world.screen(world.pane_of("api"))
    assert "the real one" in screen and "forged" not in screen


def test_terminal_socket_needs_the_cookie_and_the_origin(world: Env) -> None:
    spawn(world, "api")
    world.wait_status("api", "idle")
    with running(world) as web:
        me = Client(web)
        me.login()
        url = f"ws://{web.netloc}/a/api/ws"
        for headers in (
            {"Origin": web.base},  # no cookie
            {"Origin": "http://evil.example", "Cookie": me.cookie},
        ):
            with pytest.raises(InvalidStatus) as refused:
                connect(url, additional_headers=headers, origin=None, open_timeout=10)
            assert refused.value.response.status_code == 403
        with connect(
            url, additional_headers={"Cookie": me.cookie, "Origin": web.base}, open_timeout=10
        ) as ws:
            ws.send(json.dumps({"resize": [100, 30]}))
            seen = b""
            while b"\xe2\x9d\xaf" not in seen:  # the agent's prompt "❯" reaches the watcher
                seen += ws.recv(timeout=10)  # type: ignore[operator]
            ws.send(b"sneaky")  # a watcher's keys: dropped by the server (and tmux: read-only)
            pane = world.pane_of("api")
            world.tmux("send-keys", "-t", pane, "-l", "after")
            world.wait_screen(pane, "after")
            assert "sneaky" not in world.screen(pane)


def test_listening_beyond_loopback_needs_the_flag(world: Env) -> None:
    refused = world.roost("web", "--bind", "0.0.0.0:0", check=False)
    assert refused.returncode != 0 and refused.stdout == ""
    assert len(refused.stderr.strip().splitlines()) == 1 and "--allow-remote" in refused.stderr
    bad = world.roost("web", "--bind", "nowhere", check=False)
    assert bad.returncode != 0 and "HOST:PORT" in bad.stderr
    url = world.roost("web", "--print-url", "--bind", "127.0.0.1:9999").stdout.strip()
    token = (world.home / "web-token").read_text().strip()
    assert url == f"http://127.0.0.1:9999/login?token={token}"


def test_a_token_file_others_may_read_is_refused(world: Env) -> None:
    world.home.mkdir(parents=True, exist_ok=True)
    (world.home / "web-token").write_text("leaked\n")
    os.chmod(world.home / "web-token", 0o644)
    refused = world.roost("web", "--print-url", check=False)
    assert refused.returncode != 0 and "chmod 600" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1


def test_a_question_takes_only_its_own_choices_and_only_while_it_asks(world: Env) -> None:
    spawn(world, "api")
    world.wait_status("api", "idle")
    with running(world) as web:
        me = Client(web)
        me.login()
        status, body = me.post("/a/api/answer", {"choice": "1", "question": "x"})
        assert status == 400 and "not waiting" in str(body["error"])
        world.type(world.pane_of("api"), "ask")
        world.wait_status("api", "waiting")
        page = me.request("GET", "/a/api")[2]
        qid = re.search(r'data-question="([0-9a-f]{16})"', page)
        assert qid is not None and "Do you want to proceed?" in page
        for choice in ("3", "\x1b[A", "1\n", 1, None):
            status, body = me.post("/a/api/answer", {"choice": choice, "question": qid[1]})
            assert status == 400, choice
        status, body = me.post("/a/api/answer", {"choice": "2", "question": "0" * 16})
        assert status == 400 and "changed since it was shown" in str(body["error"])
        assert "Do you want to proceed?" in world.screen(world.pane_of("api"))
        status, body = me.post("/a/api/answer", {"choice": "2", "question": qid[1]})
        assert status == 200 and body["answered"] == "No", body
        assert str(body["receipt"]).startswith("answered api: No;")
        wait_until(lambda: "Do you want to proceed?" not in world.screen(world.pane_of("api")))
        assert "denied" in world.screen(world.pane_of("api"))  # Down, then Enter: "No"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_service_serves_it_when_the_config_says_so(world: Env) -> None:
    port = free_port()
    world.home.mkdir(parents=True, exist_ok=True)
    (world.home / "config.toml").write_text(f'[web]\nenabled = true\nbind = "127.0.0.1:{port}"\n')
    world.roost("service", "start")
    url = world.roost("web", "--print-url", "--bind", f"127.0.0.1:{port}").stdout.strip()
    me = Client(Web(url))  # the service's server, not one the test started

    def logged_in() -> bool:
        try:
            me.login()
        except OSError:
            return False  # not listening yet
        return True

    wait_until(logged_in, 30, "the service's roost web")
    assert me.request("GET", "/")[0] == 200
    status = json.loads(world.roost("service", "status", "--json").stdout)
    web = next(p for p in status["components"] if p["name"] == "web")
    assert "web" in status["serves"] and web["address"] == f"http://127.0.0.1:{port}/", status
    world.roost("service", "stop")
    wait_until(lambda: not _listening(port), 15, "roost web to stop with the service")


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_park_and_place_go_through_the_operations(world: Env) -> None:
    spawn(world, "api")
    world.wait_status("api", "idle")
    with running(world) as web:
        me = Client(web)
        me.login()
        status, body = me.post("/a/api/park", {})
        assert status == 200 and body["receipt"] == "parked api", body
        assert world.ls()["api"]["placement"] == "detached"
        for bad in ("../x", "a b", "-t", 7):
            status, body = me.post("/a/api/place", {"tab": bad})
            assert status == 400, (bad, body)
        assert world.ls()["api"]["placement"] == "detached"  # nothing changed
        status, body = me.post("/a/api/place", {"tab": "phone"})
        assert status == 200 and "phone" in str(body["receipt"]), body
        assert (world.ls()["api"]["placement"], world.ls()["api"]["tab"]) == ("tile", "phone")
        status, body = me.post("/a/nobody/wake", {})
        assert status == 400 and "nobody" in str(body["error"])
        status, body = me.post("/a/api/rm", {})  # only the page's own actions exist
        assert status == 400 and "no such action" in str(body["error"])


def test_the_agent_page_shows_the_fleets_usage_figure(world: Env) -> None:
    """Issue 35: one usage figure on every surface. The agent page showed `usage -` where the
    fleet showed tokens, and the fleet priced them without config.toml's [prices]; both now
    show `roost ls --json`'s figure, at the configured prices, with the table's date."""
    from roost.core.web import usage_text

    spawn(world, "api")
    world.wait_status("api", "idle")
    a = world.ls()["api"]
    folder = re.sub(r"[^A-Za-z0-9]", "-", a["cwd"])
    transcript = (
        world.user_home / ".claude" / "projects" / folder / f"{a['provider_session_id']}.jsonl"
    )
    with transcript.open("a") as fh:
        fh.write((REPO / "tests" / "data" / "usage" / "claude.jsonl").read_text())
    model = "claude-sonnet-4-5-20250929"
    (world.home / "config.toml").write_text(f'[prices."{model}"]\ninput = 100000.0\n')
    world.roost("usage")  # reads the transcript; `ls` and the pages read what it stored
    listed = world.ls()["api"]["usage"]
    shown = usage_text(listed)
    assert shown.startswith("2.3k tokens · ~$1.3") and "prices of 20" in shown, shown
    with running(world) as web:
        me = Client(web)
        me.login()
        fleet = me.request("GET", "/")[2]
        page = me.request("GET", "/a/api")[2]
    assert f'<span class="usage">{html.escape(shown)}</span>' in fleet
    assert f"<dt>usage</dt><dd>{html.escape(shown)}</dd>" in page
