"""What to do when an agent's pane dies: pure decisions from facts the shell gathered.

Given the agent's past exits (its event log), its restart policy, this exit's status, the screen
the program left and the time now, `decide` answers: it just exited, its conversation cannot be
resumed, restart it after a backoff (1 s, 2 s, 4 s...), or stop: a crash loop (more than
`max_failures` failed exits within `window` seconds) puts it in `failed` until the user wakes it.
Tested with scripted histories, without tmux and without sleeping (honcho's manager tests are
the model).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from roost.core.model import INTENT_HIBERNATED, INTENT_STOPPED, Agent
from roost.core.pane import Pane

MAX_FAILURES = 3
WINDOW = 60.0  # seconds

Triage = Literal["ignored", "killed"]
Action = Literal["exited", "unresumable", "restart", "failed"]


@dataclass(frozen=True, slots=True)
class Exit:
    """One exit of the agent's program, as the event log recorded it."""

    at: datetime
    code: int | None

    @property
    def failed(self) -> bool:
        return self.code not in (0, None)


@dataclass(frozen=True, slots=True)
class Policy:
    restart: str = "never"  # "never" | "on-failure"
    max_failures: int = MAX_FAILURES
    window: float = WINDOW


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    delay: float = 0.0  # restart: seconds to wait before starting it again
    failures: int = 0  # restart, failed: failed exits within the window, this one included


def triage(
    pane: Pane | None, agent: Agent | None, window_state: str, stopping: bool = False
) -> Triage | None:
    """Whether a pane death is an agent's exit to handle: "ignored" for a pane that is gone,
    alive again, or belongs to no known agent; "killed" when roost stopped it (kill, hibernate
    and rm mark the window `stopped` first and log it themselves); None: handle it.

    The window's tag alone is not trusted: a `roost kill` cut off after tagging leaves it on a
    running agent. The store's intent says roost stopped it: written when the kill completes,
    and before its signal as a stop under way (`stopping`: store/intents.py, for this launch,
    its deadline not passed); the caller reads both under the agent's lock."""
    if pane is None or not pane.dead or agent is None:
        return "ignored"
    if stopping or (
        window_state == "stopped" and agent.intent in (INTENT_STOPPED, INTENT_HIBERNATED)
    ):
        return "killed"
    return None


def decide(
    history: Sequence[Exit],
    policy: Policy,
    exit_code: int | None,
    screen: str,
    now: datetime,
    not_found: Sequence[str] = (),
) -> Decision:
    """What to do about the exit happening `now` with `exit_code`; `history` holds the agent's
    earlier exits (any order, any age); `not_found` holds what the agent's CLI prints when the
    conversation it was asked to resume does not exist (its provider's traits).

    >>> from datetime import timezone
    >>> now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> decide([], Policy("on-failure"), 1, "", now)
    Decision(action='restart', delay=1.0, failures=1)
    >>> decide([], Policy("never"), 1, "", now).action
    'exited'
    """
    if is_unresumable(screen, not_found):
        return Decision("unresumable")
    if policy.restart != "on-failure" or exit_code == 0:
        return Decision("exited")
    failures = recent_failures([*history, Exit(now, exit_code)], now, policy.window)
    if failures > policy.max_failures:
        return Decision("failed", failures=failures)
    return Decision("restart", delay=backoff(failures), failures=failures)


def is_unresumable(screen: str, not_found: Sequence[str]) -> bool:
    """The CLI said the conversation it was asked to resume does not exist."""
    return any(marker in screen for marker in not_found)


def recent_failures(exits: Sequence[Exit], now: datetime, window: float) -> int:
    since = now - timedelta(seconds=window)
    return sum(1 for e in exits if e.failed and e.at >= since)


def backoff(failures: int) -> float:
    """1 s, 2 s, 4 s... for the 1st, 2nd, 3rd failure."""
    return float(2 ** max(0, failures - 1))


def still_wanted(agent: Agent | None, pane: Pane | None, stopping: bool = False) -> bool:
    """After the backoff: restart only if the user did nothing meanwhile (no kill, hibernate or
    rm, done or under way: `stopping`; no wake that already started it)."""
    if agent is None or stopping or agent.intent in (INTENT_STOPPED, INTENT_HIBERNATED):
        return False
    return pane is None or pane.dead
