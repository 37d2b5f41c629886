"""`roost ls --all`, the one (the entry's fast path and the full CLI's command both print it
here, without Click): every host is asked first (each on a thread of its own, over its warm ssh
connection), and this machine's agents are read while they answer (cli/fast.py's way: the
roost service's answer, else ops/quicklist's), so the hosts' round trips overlap the local
interpreter's work instead of following it. The rows and lines are core/fleet.py's.

The entry's path reads the config and the hosts without the App (hosts/operations.reach); one it
cannot read hands over to the full CLI, whose App says what is wrong (hosts/commands.py). A local
answer that must record a change first is the full pipeline's, here (the hosts are already
asked).
"""

from __future__ import annotations

import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from roost.cli import fast
from roost.core import fleet
from roost.core.errors import RoostError
from roost.hosts import operations as hosts
from roost.store import status as listing
from roost.system import servicesock


def fast_all(as_json: bool) -> int | None:
    """entry.py's `roost ls --all`; None: a config or store the full CLI must explain."""
    try:
        reach = hosts.reach()
        found = hosts.every(reach)
    except (RoostError, OSError, ValueError, listing.Unreadable):
        return None  # the full CLI says what is wrong
    return ls_all(reach, found, as_json)


def ls_all(reach: hosts.Reach, found: list[hosts.Host], as_json: bool) -> int:
    """Print every agent here and on the hosts `found` (a host that does not answer is one
    line on stderr and, with --json, an entry with its reason: not a failure); the exit code."""
    pool = ThreadPoolExecutor(max_workers=max(1, min(16, len(found))))
    try:
        pending = [pool.submit(hosts.ask, reach, h) for h in found]  # asked now
        try:
            local = _local_json()
            views = [p.result() for p in pending]
        except RoostError as exc:  # e.g. ssh's folder of masters not private
            sys.stderr.write(f"roost: {exc}\n")
            return exc.code
        except _Said as said:  # a hung tmux: said once, not waited for again
            sys.stderr.write(said.text)
            return said.code
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    rows, missing = fleet.combined(local, views)
    if as_json:
        rows += [fleet.unreachable_row(h, why) for h, why in missing]
        sys.stdout.write(json.dumps(rows) + "\n")
    else:
        sys.stdout.write(fleet.table(rows))
    for host, why in missing:
        sys.stderr.write(fleet.unreachable_line(host, why) + "\n")
    return 0


def host_answer() -> int:
    """`roost _hostls`, what a local roost's `ls --all` asks this machine over ssh: this
    machine's `ls --json` rows, and where its service listens with the ident a reader sends,
    when the service answered this very call (the asker then reads that socket through its ssh
    master next time, with no roost process here: hosts/operations.py)."""
    reader, rows = None, None
    found = fast.service_address()
    where = servicesock.path(found[0]) if found is not None else None
    if found is not None and where is not None:
        served = servicesock.ask_ls(found[0], True, found[1])
        try:
            rows = json.loads(served) if served is not None else None
        except (ValueError, RecursionError):
            rows = None  # not what the service writes: answered here instead
        reader = {"socket": where, "ident": found[1]} if isinstance(rows, list) else None
    try:
        rows = rows if isinstance(rows, list) else _computed_json()  # the service was asked
    except _Said as said:
        sys.stderr.write(said.text)
        return said.code
    sys.stdout.write(json.dumps({"rows": rows, "reader": reader}) + "\n")
    return 0


class _Said(Exception):
    """The quick answer's own failure (a tmux that does not answer): its exit code and line."""

    def __init__(self, code: int, text: str) -> None:
        super().__init__(text)
        self.code, self.text = code, text


def _local_json() -> list[dict[str, object]]:
    """This machine's `roost ls --json` rows: the service's, the quick answer, or (when that
    hands over) the full pipeline's, which records what changed."""
    served = fast.from_service(as_json=True)
    return list(json.loads(served)) if served is not None else _computed_json()


def _computed_json() -> list[dict[str, object]]:
    """_local_json's rows computed here, with no service asked."""
    from roost.ops import quicklist

    answer = quicklist.answer(True, os.environ, time.time())
    if answer is not None and answer[0] == 0:
        return list(json.loads(answer[1]))
    if answer is not None:
        raise _Said(answer[0], answer[2])
    from roost.core import present
    from roost.ops import observe
    from roost.ops.root import open_app

    app = open_app(reading=True)
    try:
        return list(json.loads(present.render(observe.current(app), True)))
    finally:
        app.close()
