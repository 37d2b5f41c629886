"""`roost ls`'s answer without Click: one SELECT, one `tmux list-panes -a`, at most one chained
`capture-pane` call, and the hook logs' last lines, run through the status pipeline
(ops/observe.py's `statuses`). Built to start fast: it imports only os, sys, time, sqlite3 (in
the store), typing, dataclasses and roost's own modules (no Click, no subprocess, no json, and
the typed config, core/settings.py, only for a config.toml not found valid before), because
people and scripts run `roost ls` all the time.
cli/fast.py prints it when the service does not answer; the roost service answers with it too
(service/readers.py), already warm.

It only reads. It hands over to the full CLI (returns None) whenever there is something to write
or fix: a missing, damaged or older database, session ids to learn, unread hook events, a
status that changed since it was stored, or a pane whose exit status tmux has not collected yet.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from roost.core import lsconfig, observation, present
from roost.ops import learn, observe
from roost.store import status as listing
from roost.system import locate
from roost.tmux import format as panefmt
from roost.tmux import run
from roost.tmux import timeout as tmux_timeout

if TYPE_CHECKING:
    from collections.abc import Mapping

    from roost.core.model import Agent


class _HandOver(Exception):
    """Something unexpected: the full CLI takes over."""


def answer(
    as_json: bool,
    environ: Mapping[str, str],
    now: float,
    warm: Warm | None = None,
) -> tuple[int, str, str] | None:
    """`roost ls`'s (exit code, stdout, stderr) at `now` (epoch seconds); None when the full CLI
    must take over. `environ` gives the tmux time limit and the tmux client's environment;
    `warm`, what a long-lived caller keeps between answers."""
    name = locate.socket_name()
    home = locate.roost_home()
    db = os.path.join(home, "roost.db")
    if name is None or not os.path.exists(db) or not locate.private_tree(home):
        return None
    try:
        config = _config(home)  # Invalid (a ValueError): the full CLI says what is wrong
        tmux = locate.tmux_binary(lsconfig.tmux_bin(config))
        records = _records(db, as_json) if warm is None else warm.rows(as_json)
        if records is None:
            return None  # an older or damaged store: the full CLI says what to do
        if any(learn.awaits_session_id(r) for r in records):
            return None
        guessed = warm.captured if warm is not None else []
        looked = _look(tmux, name, guessed, environ)
        if looked is None:
            return None
        text, early = looked
        panes = panefmt.panes(text)
        if any(p.dead and p.dead_status is None for p in panes):
            return None
        seen = observation.join(records, panes)
        # Unread hook events (session id changes to record) can only come from an agent that has
        # a pane; one without (hibernated, home gone) wrote its last event long ago.
        if any(o.pane is not None and learn.unread_hook_events(home, o.agent) for o in seen):
            return None

        def capture(ids: list[str]) -> dict[str, str]:
            if warm is not None:
                warm.captured = ids
            late = [i for i in ids if i not in early]
            return {
                **{i: early[i] for i in ids if i in early},
                **_capture(tmux, name, late, environ),
            }

        found = observe.statuses(seen, home, capture, lsconfig.patterns(config), now)
        if observation.changes(found):
            return None  # the full CLI records the change (status_since, the event log)
    except TmuxSilent as silent:
        return 5, "", f"roost: {silent}\n"
    except (listing.Unreadable, OSError, ValueError, _HandOver):
        return None
    prices = _prices(lsconfig.prices(config)) if as_json else None
    if warm is not None:
        return 0, warm.render(found, as_json, prices), ""
    return 0, present.render(found, as_json, prices=prices), ""


class Warm:
    """What a long-lived caller (the roost service) keeps between answers: the store's rows,
    read again only when the store changed (store/status.KeptRecords), and the last text,
    rendered again only when those rows or anything seen of the agents since (their panes,
    statuses, reasons, exit codes) differ. Nothing else goes into the text."""

    def __init__(self, db: str) -> None:
        self.rows = listing.KeptRecords(db)
        self._last: dict[bool, tuple[object, str]] = {}  # the table's and the JSON's
        # The panes whose screens the last answer read: most likely the next one's too, so
        # they are captured in the same tmux call as the listing (_look).
        self.captured: list[str] = []

    def render(
        self,
        found: list[observation.Observation],
        as_json: bool,
        prices: dict[str, tuple[float, ...]] | None,
    ) -> str:
        key = (
            self.rows.generation,
            as_json,
            None if prices is None else tuple(sorted(prices.items())),
            tuple(_shown(o) for o in found),
        )
        last = self._last.get(as_json)
        if last is not None and last[0] == key:
            return last[1]
        text = present.render(found, as_json, prices=prices)
        self._last[as_json] = (key, text)
        return text

    def close(self) -> None:
        self.rows.close()
        self._last.clear()


def _shown(o: observation.Observation) -> tuple[object, ...]:
    """What ls shows of an agent besides its stored row (core/present.py reads no more)."""
    limit = (o.limit.kind, o.limit.resets_at) if o.limit is not None else None
    state = (o.alive, o.state, o.pid, o.exit_code, o.status, o.status_source, o.status_since)
    return (o.agent.id, *state, o.status_reason, limit)


def _records(db: str, details: bool) -> list[Agent] | None:
    conn = listing.open_current(db)
    if conn is None:
        return None
    try:
        return listing.records(conn, details)
    finally:
        conn.close()


def _config(roost_home: str) -> dict[str, object]:
    """config.toml read as the full CLI reads it, checked unless it is the text roost last
    found valid (then only its three keys are read: core/lsconfig.py); ValueError hands over."""
    data, text = locate.read_toml(os.path.join(roost_home, "config.toml"))
    if text and text != locate.valid_config_text(roost_home):
        from roost.core import settings  # sixteen dataclasses: only for a text not seen valid

        settings.parse(data)  # Invalid, a ValueError: the full CLI says what is wrong
        locate.remember_valid_config(roost_home, text)
    return data


def _prices(given: Mapping[str, Mapping[str, float]]) -> dict[str, tuple[float, ...]]:
    """The price table usage costs are estimated with: config.toml's [prices] over roost's."""
    from roost.usage import prices

    return prices.table(given)


def _look(
    tmux: str, socket: str, guessed: list[str], environ: Mapping[str, str]
) -> tuple[str, dict[str, str]] | None:
    """The pane listing, and the screens of the `guessed` panes in the same tmux call (one
    process, not two) when they fit one; None on anything unexpected. A guessed pane gone
    since fails the call: the listing is asked again alone."""
    listing_args = ["list-panes", "-a", "-F", panefmt.FORMAT]
    batches = panefmt.capture_batches(guessed, panefmt.MARKER)
    if len(batches) == 1:
        end = f"{panefmt.MARKER}{LISTED}"
        args = [*listing_args, ";", "display", "-p", end, ";"]
        captures = panefmt.capture_args(batches[0], panefmt.MARKER)
        lines = (_tmux(tmux, socket, [*args, *captures], environ) or "").split("\n")
        if end in lines:  # a listing's line starts with a pane id, never with the marker
            cut = lines.index(end)
            rest = "\n".join(lines[cut + 1 :])
            return "".join(f"{line}\n" for line in lines[:cut]), panefmt.split_captures(
                rest, panefmt.MARKER
            )
    text = _tmux(tmux, socket, listing_args, environ)
    return None if text is None else (text, {})


LISTED = "listed"  # after the marker: the line that ends the listing in a combined call


def _capture(
    tmux: str, socket: str, pane_ids: list[str], environ: Mapping[str, str]
) -> dict[str, str]:
    screens: dict[str, str] = {}
    for batch in panefmt.capture_batches(pane_ids, panefmt.MARKER):
        captured = _tmux(tmux, socket, panefmt.capture_args(batch, panefmt.MARKER), environ)
        if captured is None:
            raise _HandOver
        screens.update(panefmt.split_captures(captured, panefmt.MARKER))
    return screens


class TmuxSilent(Exception):
    """tmux did not answer in time: a hung server must not hang `roost ls`."""


def _tmux(tmux: str, socket: str, args: list[str], environ: Mapping[str, str]) -> str | None:
    """One tmux client call through the runner every tmux call uses (tmux/run.py), bounded by
    the same time limit (tmux/timeout.py). "" when no server runs; None on anything unexpected
    (tmux missing, an error)."""
    argv = [tmux, "-u", "-L", socket, "-f", "/dev/null", *args]
    limit = tmux_timeout.seconds(environ)  # ValueError: the full CLI says what is wrong
    try:
        code, out, err = run.call(argv, locate.tmux_client_env(environ), limit)
    except OSError:
        return None
    except run.Silent:
        raise TmuxSilent(
            f"tmux did not answer within {limit:g} s ({args[0]} on server "
            f"{socket}); {tmux_timeout.ENV} sets the limit"
        ) from None
    if code == 0:
        return out.decode(errors="replace")
    return "" if any(s in err.decode(errors="replace") for s in panefmt.NO_SERVER) else None
