"""Whether starts hold: watch agents just started, all together (one pane listing and one
chained capture a look), until each shows it is ready (a live status, or a draft on its input
line), dies, or lives through its CLI's window (core.starts, core.status.start_window). A start
that died at once gets its CLI's last words as its `last_error` (so `roost ls` shows it failed,
and says why) and a `start-failed` event."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from roost.core import starts, status
from roost.core.model import Agent
from roost.core.reconcile import agent_panes
from roost.ops import observe
from roost.ops.context import App
from roost.providers import traits

MARKER = "roost-holding-end"
LOOK_EVERY = 0.1  # seconds between two looks


@dataclass(frozen=True, slots=True)
class Died:
    agent: Agent
    words: str  # the CLI's last words
    reason: str  # what last_error holds
    exit_status: int | None


@dataclass
class _Start:
    agent: Agent
    began: float
    screen: str | None = None
    still_since: float = 0.0


class Watch:
    """Starts under watch. Thread-safe: the restore queue's workers add and look at once; only
    `settle` (in the thread that owns the App's store) writes to the store. `told` hears of each
    start as it is decided: (its agent, how it died, or None when it held); called in the
    thread that looked, outside the watch's lock."""

    def __init__(
        self,
        app: App,
        window: float | None = None,
        told: Callable[[Agent, Died | None], None] | None = None,
    ) -> None:
        self.app = app
        self.window = window  # None: each CLI's own (window_for)
        self.told = told
        self.pending: dict[str, _Start] = {}
        self.failed: dict[str, Died] = {}  # agent id -> how its start died
        self.held: set[str] = set()  # providers with a start that held
        self.lock = threading.Lock()

    def add(self, agent: Agent) -> None:
        with self.lock:
            self.pending[agent.id] = _Start(agent, self.app.clock.monotonic())

    def look(self) -> None:
        """One look at every start still pending: decide those that held or died."""
        decided = self._look()
        if self.told is not None:
            for agent, died in decided:
                self.told(agent, died)

    def _look(self) -> list[tuple[Agent, Died | None]]:
        decided: list[tuple[Agent, Died | None]] = []
        with self.lock:
            if not self.pending:
                return decided
            panes = agent_panes(self.app.tmux.list_panes())
            wanted = [p.pane_id for a in self.pending if (p := panes.get(a)) is not None]
            screens = self.app.tmux.capture_many(wanted, MARKER) if wanted else {}
            now = self.app.clock.monotonic()
            for agent_id, start in list(self.pending.items()):
                pane = panes.get(agent_id)
                screen = screens.get(pane.pane_id, "") if pane is not None else ""
                if screen != start.screen or not screen.strip():
                    start.screen, start.still_since = screen, now
                alive = pane is not None and not pane.dead
                provider = start.agent.provider
                patterns = _patterns(self.app, provider)
                seen = status.reading(screen, patterns) if alive else None
                found = starts.verdict(
                    alive,
                    seen[0] if seen else None,
                    now - start.still_since,
                    any(patterns.get(k) for k in status.KINDS),
                    now - start.began,
                    self.window_for(provider),
                    alive and observe.typed(screen, provider),
                )
                if found == starts.PENDING:
                    continue
                del self.pending[agent_id]
                if found == starts.HELD:
                    self.held.add(provider)
                    decided.append((start.agent, None))
                if found == starts.DIED:
                    if pane is not None:  # the full screen: its words may sit above blank rows
                        screen = self.app.tmux.capture(pane.pane_id, 200) or screen
                    words = starts.last_words(screen)
                    code = pane.dead_status if pane is not None else None
                    self.failed[agent_id] = Died(
                        start.agent, words, starts.died_reason(words, code), code
                    )
                    decided.append((start.agent, self.failed[agent_id]))
        return decided

    def window_for(self, provider: str) -> float:
        if self.window is not None:
            return self.window
        return status.start_window(traits.of(provider).start_time)

    def held_any(self, provider: str) -> bool:
        with self.lock:
            return provider in self.held

    def died(self) -> list[Died]:
        with self.lock:
            return list(self.failed.values())

    def starting(self) -> list[_Start]:
        with self.lock:
            return list(self.pending.values())

    def wait(self, agent_ids: set[str]) -> None:
        """Look until none of these starts is pending."""
        while True:
            self.look()
            with self.lock:
                if not agent_ids & set(self.pending):
                    return
            self.app.clock.sleep(LOOK_EVERY)

    def settle(self) -> dict[str, Died]:
        """Look until no start is pending (at most its window after the last one was added);
        the starts that died at once, by agent id."""
        while True:
            self.look()
            if not self.pending:
                break
            self.app.clock.sleep(LOOK_EVERY)
        for died in self.failed.values():  # here, in the thread that owns the store
            current = self.app.store.get_by_id(died.agent.id)
            if current is not None and current.last_error is None:  # the supervisor may have
                self.app.store.update(died.agent.id, last_error=died.reason)  # said it better
            self.app.store.log(
                died.agent, "start-failed", reason=died.words, exit_code=died.exit_status
            )
        return dict(self.failed)


def _patterns(app: App, provider: str) -> dict[str, list[str]]:
    return status.patterns_for(traits.of(provider).patterns, app.settings.patterns.get(provider))


def held(app: App, agent: Agent, window: float | None = None) -> str | None:
    """Watch one start; its reason (`last_error`) when it died at once, else None."""
    watch = Watch(app, window)
    watch.add(agent)
    found = watch.settle().get(agent.id)
    return found.reason if found is not None else None
