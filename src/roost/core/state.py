"""An agent's state from intent (store) and reality (tmux). `roost ls` uses it."""

from typing import Final, Literal

State = Literal["running", "stopped", "hibernated", "failed"]
RUNNING: Final = "running"
STOPPED: Final = "stopped"
HIBERNATED: Final = "hibernated"
FAILED: Final = "failed"


def derive(
    alive: bool, has_window: bool, intent: str, placement: str | None, last_error: str | None
) -> State:
    """running: a live pane. failed: its last start failed (until a good start). hibernated: no
    process on purpose (`roost hibernate`, or a parked/buried agent with no window, as after a
    restore). stopped: anything else without a live pane (exited, killed, home lost)."""
    if alive:
        return RUNNING
    if last_error:
        return FAILED
    if intent == HIBERNATED or (not has_window and placement in ("detached", "buried")):
        return HIBERNATED
    return STOPPED
