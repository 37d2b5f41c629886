"""The event stream (`roost watch`, the TUI): every row of the event log after a sequence, in
order, none missed, any number of readers (each reads the store by sequence; nothing is sampled).

Who makes the events: with the roost service running (ops/service.py), its monitor records every
change as tmux pushes it, and its socket for readers (service/readers.py) says when the log grew, so
a reader waits on that socket and reads the log only then (no tmux call, no fork, no query while
nothing happens; a look every RECHECK s all the same). A service without that socket (an older
build, a home whose path is too long for a socket): a read of the log every CHECK s. Without a
service, the reader runs today's status pipeline (ops/observe.py) every `interval` seconds itself,
and still prints from the log, so changes other commands recorded between two looks are not
lost. A reader looks for the service every RECHECK seconds and switches either way; when the
service's news ends (stopped, killed, or a reader too slow to take it), it looks itself at once
and for the next RECHECK seconds.

The socket only says when; the store says what. A reader subscribes before it reads the log, so
a row written in between is read at the latest on the news that follows it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from roost.core.events import Event
from roost.ops import observe
from roost.ops import service as svc
from roost.ops.context import App
from roost.store import events as event_log
from roost.system import servicesock

CHECK = 0.2  # seconds between two reads of the log while the service pushes
RECHECK = 5.0  # seconds between two looks for the service
BATCH = 1000


def drain(app: App, after: int, emit: Callable[[Event], None]) -> int:
    """Hand `emit` every event after sequence `after`, in order; the last sequence handed."""
    while True:
        batch = event_log.after(app.store.conn, after, BATCH)
        for event in batch:
            emit(event)
            after = event.seq
        if len(batch) < BATCH:
            return after


def follow(
    app: App,
    after: int,
    interval: float,
    emit: Callable[[Event], None],
    flush: Callable[[], None] = lambda: None,
    start_service: bool = True,
) -> None:
    """Forever (until interrupted): `drain`, then wait for more (see the module's doc)."""
    running = (svc.ensure_running(app) if start_service else svc.status(app)).running
    looked = app.clock.monotonic()
    news = _subscribe(app) if running else None
    try:
        while True:
            if not running:
                observe.refresh(app)
            after = drain(app, after, emit)
            flush()
            if news is not None:
                if servicesock.wait_news(news, RECHECK) is None:  # the news ended (the
                    news.close()  # service went, or dropped a slow reader): look at once and
                    # for a whole RECHECK (a turn in a blind gap would go unrecorded)
                    news, running, looked = None, False, app.clock.monotonic()
            else:
                app.clock.sleep(CHECK if running else interval)
            if app.clock.monotonic() - looked >= RECHECK:
                running, looked = svc.status(app).running, app.clock.monotonic()
                if running and news is None:
                    news = _subscribe(app)
                elif not running and news is not None:
                    news.close()
                    news = None
    finally:
        if news is not None:
            news.close()


def _subscribe(app: App) -> Any:
    """The service's news of the log (system/servicesock.py), or None (then: CHECK-second reads)."""
    ident = servicesock.ident(app.tmux.socket, app.environ)
    return servicesock.follow(str(app.paths.home), ident)
