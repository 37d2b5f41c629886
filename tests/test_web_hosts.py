"""roost web's fleet page grouped by host (issue 25 with issue 24's hosts): a real sshd and a
remote roost (tests/sshd.py), the real `roost web` over plain HTTP (tests/web_server.py)."""

from __future__ import annotations

import pytest
from sshd import Fleet

from roost.core.fleet import HostView
from roost.web.pages import fleet_section

from web_server import Client, running, wait_until

pytestmark = pytest.mark.tmux


def test_the_fleet_page_names_each_host_and_its_agents_and_a_dead_host_in_one_line(
    fleet: Fleet,
) -> None:
    h1 = fleet.add("h1")
    local = fleet.local
    local.roost("spawn", "here", "--cwd", str(local.tmp / "work"))
    local.roost("spawn", "h1:api", "--cwd", str(h1.world.tmp / "work"))
    with running(local) as web:
        me = Client(web)
        me.login()
        status, _, page = me.request("GET", "/")
        assert status == 200
        assert '<h2 class="host">local</h2>' in page and '<h2 class="host">h1</h2>' in page
        local_part, h1_part = page.split('<h2 class="host">h1</h2>', 1)
        assert 'href="/a/here"' in local_part
        # the host's agent is named, and never linked to a local page of the same name
        assert ">api<" in h1_part and 'href="/a/api"' not in page

        h1.stop()

        def dead() -> str:
            text = me.request("GET", "/?part=section")[2]
            return text if "unreachable" in text else ""

        section = str(wait_until(dead, timeout=30, what="h1 unreachable"))
        h1_part = section.split('<h2 class="host">h1', 1)[1]
        assert "unreachable: " in h1_part and "api" not in h1_part
        assert 'href="/a/here"' in section  # this machine's agents still there


def test_without_hosts_the_fleet_section_is_the_one_machine_one() -> None:
    rows = [{"name": "a", "id": "1", "provider": "claude", "status": "idle", "placement": "tile"}]
    assert fleet_section(rows, []) == fleet_section(rows)
    assert "host" not in fleet_section(rows)


def test_host_values_are_escaped() -> None:
    views = [
        HostView("b", ({"name": "<x>", "id": "1", "provider": "<p>", "status": "idle"},)),
        HostView("c", unreachable="<script>"),
    ]
    html = fleet_section([], views)
    assert "<x>" not in html and "<p>" not in html and "<script>" not in html
    assert "&lt;script&gt;" in html


def test_the_cache_asks_once_at_a_time_and_serves_the_last_answer_while_it_asks() -> None:
    """The first page waits for the hosts' answer; later ones get the last answer at once, a
    stale one starting one new ask in the background (never more than one at a time)."""
    import asyncio

    from roost.web import hosts as webhosts

    now = [100.0]
    asked: list[int] = []
    gate = asyncio.Event()

    async def ask() -> list[HostView]:
        asked.append(1)
        if len(asked) > 1:
            await gate.wait()  # a slow host: the second ask hangs until let go
        return [HostView("b", unreachable=f"answer {len(asked)}")]

    async def run() -> None:
        cache = webhosts.HostCache(ask, clock=lambda: now[0])
        first = await asyncio.gather(cache.get(), cache.get())
        assert first[0] == first[1] == [HostView("b", unreachable="answer 1")] and asked == [1]
        assert await cache.get() == first[0] and asked == [1]  # fresh: not asked again
        now[0] += webhosts.FRESH + 1
        assert await cache.get() == first[0]  # stale: served at once, asked behind
        assert await cache.get() == first[0]
        await asyncio.sleep(0.01)
        assert asked == [1, 1]  # one ask in flight, not one per page
        gate.set()
        await asyncio.sleep(0.01)
        assert await cache.get() == [HostView("b", unreachable="answer 2")]

    asyncio.run(run())


def test_while_a_page_is_open_a_changed_answer_is_pushed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server asks again while a page is open (not while none is) and tells the pages
    when the answer changed, so they fetch their fleet: pushed, the page does not poll."""
    import asyncio

    from roost.web import hosts as webhosts

    monkeypatch.setattr(webhosts, "EVERY", 0.01)
    answers = iter([[HostView("b")], [HostView("b")], [HostView("b", unreachable="gone")]])
    asked: list[int] = []
    watching = [False]
    pushed: list[int] = []

    async def ask() -> list[HostView]:
        asked.append(1)
        return next(answers)

    async def run() -> None:
        cache = webhosts.HostCache(ask)
        await cache.get()

        def changed() -> None:
            pushed.append(1)
            watching[0] = False  # the page closed: no more asks

        follower = asyncio.create_task(cache.follow(lambda: watching[0], changed))
        await asyncio.sleep(0.1)
        assert asked == [1]  # no page open: nothing asked
        watching[0] = True
        for _ in range(200):
            await asyncio.sleep(0.01)
            if pushed:
                break
        await asyncio.sleep(0.05)
        follower.cancel()
        assert pushed == [1] and asked == [1, 1, 1]  # the same answer pushed nothing

    asyncio.run(run())
