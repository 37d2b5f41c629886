"""`roost ls`'s fast path, without Click: the roost service's answer when it runs (already warm,
computed at the call from the store and tmux: service/readers.py), else ops/quicklist.py's, computed
here. None hands over to the full CLI, which says what is wrong or records what changed.

Import-light: asking the service imports only os and `_socket` (system/servicesock.py); the
quick answer's modules load only when no service answers.
"""

from __future__ import annotations

import os
import sys
import time

from roost.system import locate, servicesock


def fast(as_json: bool) -> int | None:
    """Print `roost ls`; None when the full CLI must take over."""
    served = from_service(as_json)
    if served is not None:
        sys.stdout.flush()
        sys.stdout.buffer.write(served)
        return 0
    from roost.ops import quicklist

    found = quicklist.answer(as_json, os.environ, time.time())
    if found is None:
        return None
    code, out, err = found
    sys.stdout.write(out)
    sys.stderr.write(err)
    return code


def from_service(as_json: bool) -> bytes | None:
    """`roost ls`'s output as the roost service computed it at this call; None without one."""
    if (sys.stdout.encoding or "").lower().replace("-", "") != "utf8":
        return None  # the service writes UTF-8
    found = service_address()
    return None if found is None else servicesock.ask_ls(found[0], as_json, found[1])


def service_address() -> tuple[str, str] | None:
    """(ROOST_HOME, the ident its service answers) for a reader here; None when no service may
    answer one (a tmux socket that is no plain name, a home others may write to)."""
    name = locate.socket_name()
    home = locate.roost_home()
    if name is None or not locate.private_tree(home):
        return None
    return home, servicesock.ident(name, os.environ)
