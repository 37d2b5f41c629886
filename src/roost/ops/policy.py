"""An agent's restart policy: what the supervisor (ops/supervise.py) does when its program
exits with a failure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.core.errors import RoostError

if TYPE_CHECKING:
    from roost.ops.context import App

RESTART_POLICIES = ("never", "on-failure")


def set_restart_policy(app: App, name: str, policy: str) -> None:
    if policy not in RESTART_POLICIES:
        raise RoostError(f"the restart policy must be one of {', '.join(RESTART_POLICIES)}", code=2)
    app.store.update(app.store.require(name).id, restart_policy=policy)
