"""The composition root: the App that commands, the service and the interfaces open, with the
status pipeline's reactions assembled here (context.OnStatus), above every module that reacts,
so that ops/observe imports none of them (a layers contract in pyproject.toml keeps it so).

The reactions run in the transaction that stores a status change, in this order:
- a parent's notice of its child's change (ops/notify.py),
- a usage limit kept until a turn goes on (limits/operations.py),
- a limit's resume planned, a turn's prompt closed (ops/resume.py),
- a worktree agent's collisions judged at its turn's end (merge/operations.py: git is asked
  before the transaction, the marks and a new pair's one alert stored in it).
What the service does once a change is stored (budgets at a turn's end, alerts) it hears from
the event log that transaction wrote: a change recorded by any process reaches it
(service/main.py hands each component its batch).
"""

from __future__ import annotations

from roost.limits import operations as limits
from roost.merge import operations as merge
from roost.ops import context, notify, resume
from roost.ops.context import App, OnStatus

ON_STATUS: tuple[OnStatus, ...] = (
    notify.ON_STATUS,
    limits.ON_STATUS,
    resume.ON_STATUS,
    merge.ON_STATUS,
)


def open_app(environ: dict[str, str] | None = None, reading: bool = False) -> App:
    """`reading`: the command only reads (Store.open's): a read-only or full filesystem still
    serves it."""
    return context.open_app(environ, reading, on_status=ON_STATUS)
