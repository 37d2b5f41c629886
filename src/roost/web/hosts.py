"""The remote hosts' agents for roost web's fleet page (docs/HOSTS.md, docs/WEB.md): asked over
ssh in a worker thread (never on the event loop), the last answer kept a few seconds, and
while a page is open asked again now and then, a change pushed to the pages like an event."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from roost.core.fleet import HostView
from roost.hosts import operations as hosts
from roost.ops.context import App

FRESH = 5.0  # seconds an answer is served as it is (a burst of page loads costs one ask)
EVERY = 10.0  # seconds between two looks while a page is open (slower than local: ssh)


def views(app: App) -> list[HostView]:
    """Every host's agents or why it did not answer, asked in parallel (in a worker thread)."""
    reach = hosts.reach_of(app)
    found = hosts.every(reach)
    return hosts.views(reach, found) if found else []


class HostCache:
    """The hosts' last answer. `ask` runs `views` off the event loop; one ask at a time, shared
    by every request that comes meanwhile."""

    def __init__(
        self,
        ask: Callable[[], Awaitable[list[HostView]]],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ask = ask
        self.clock = clock
        self.views: list[HostView] | None = None
        self.at = 0.0
        self._pending: asyncio.Task[list[HostView]] | None = None

    async def get(self) -> list[HostView]:
        """The last answer; the first time (nothing known yet) it waits for one. An answer
        older than FRESH is served while a new one is asked in the background."""
        if self.views is None:
            return await self.refresh()
        if self.clock() - self.at > FRESH:
            self._start()
        return self.views

    async def refresh(self) -> list[HostView]:
        return await asyncio.shield(self._start())

    def _start(self) -> asyncio.Task[list[HostView]]:
        if self._pending is None or self._pending.done():
            self._pending = asyncio.get_running_loop().create_task(self._ask())
        return self._pending

    async def _ask(self) -> list[HostView]:
        try:
            found = await self.ask()
        except Exception:  # noqa: BLE001 - e.g. a busy database: the last answer stays
            found = self.views or []
        self.views, self.at = found, self.clock()
        return found

    async def follow(self, watching: Callable[[], bool], changed: Callable[[], None]) -> None:
        """Forever: every EVERY seconds while `watching()` (a page is open) ask again, and call
        `changed` when the answer differs (the pages then fetch their fleet again)."""
        while True:
            await asyncio.sleep(EVERY)
            if not watching():
                continue
            before = self.views
            if await self.refresh() != before:
                changed()
