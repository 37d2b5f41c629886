"""A send's confirmation as a pure decision: what one look's readers saw, where the
confirmation stands and the clock in, the next step out (core/confirming.decide). No tmux, no
store, no sleeping; "now" is fixed."""

from __future__ import annotations

import math

import pytest

from roost.core import confirming as cf
from roost.core.confirming import Looking, Seen, Signals, Wait
from roost.core.delivery import Confirmed, Verdict

NOW = 100.0
HOOKS = Signals(hooks=True)  # claude: its UserPromptSubmit
COMMAND = Signals(hooks=True, command=True)  # claude's /clear: its effect, screen, exit
BARE_COMMAND = Signals(command=True)  # a command typed into a CLI without hooks
RECORD = Signals(record=True)  # gemini, aider: their own record
SCREEN = Signals()  # a CLI with neither: the screen changing
LOOKING = Looking(NOW + 10.0, None, NOW + 2.0)
QUEUED = Looking(NOW + 10.0, Confirmed.QUEUED, NOW + 2.0)
SCREEN_SEEN = Looking(NOW + 10.0, Confirmed.SCREEN)
ALIVE_SCREEN = Seen(screen=True)


def took(how: Confirmed, failure: str | None = None) -> Verdict:
    return Verdict(True, how, failure=failure)


@pytest.mark.parametrize(
    ("seen", "looking", "signals", "expected"),
    [
        # ---- hooks
        pytest.param(Seen(hook="hook"), LOOKING, HOOKS, took(Confirmed.HOOK), id="prompt-hook"),
        pytest.param(Seen(), LOOKING, HOOKS, Wait(LOOKING), id="no-hook-yet-waits"),
        pytest.param(
            Seen(hook="new session id"),
            LOOKING,
            COMMAND,
            took(Confirmed.NEW_SESSION),
            id="clear-new-session",
        ),
        pytest.param(
            Seen(hook="effect"),
            LOOKING,
            COMMAND,
            Wait(Looking(NOW + cf.SETTLE, Confirmed.HOOK, NOW + 2.0)),
            id="effect-settles-for-the-new-session",
        ),
        pytest.param(
            Seen(hook="hook", pane="dead"),
            LOOKING,
            HOOKS,
            took(Confirmed.HOOK),
            id="hook-landed-before-its-death",
        ),
        pytest.param(Seen(pane="dead"), LOOKING, HOOKS, Verdict(False), id="died-without-sign"),
        pytest.param(
            Seen(hook="effect", pane="gone"),
            LOOKING,
            COMMAND,
            took(Confirmed.HOOK),
            id="command-effect-then-pane-gone",
        ),
        # ---- a command's exit and the screen
        pytest.param(Seen(pane="dead"), LOOKING, COMMAND, took(Confirmed.EXIT), id="exit-ends-it"),
        pytest.param(Seen(pane="gone"), LOOKING, COMMAND, Verdict(False), id="gone-is-no-exit"),
        pytest.param(
            Seen(screen=True, changed=True),
            LOOKING,
            SCREEN,
            took(Confirmed.SCREEN),
            id="screen-changed",
        ),
        pytest.param(ALIVE_SCREEN, LOOKING, SCREEN, Wait(LOOKING), id="screen-unchanged-waits"),
        pytest.param(
            Seen(screen=True, changed=True),
            LOOKING,
            COMMAND,
            Wait(Looking(NOW + cf.SETTLE, Confirmed.SCREEN, NOW + 2.0)),
            id="command-screen-waits-for-its-hook",
        ),
        pytest.param(
            Seen(),
            SCREEN_SEEN,
            COMMAND,
            Wait(Looking(NOW + cf.SETTLE, Confirmed.SCREEN)),
            id="settle-shortens-the-deadline",
        ),
        pytest.param(
            Seen(),
            Looking(NOW + 0.5, Confirmed.SCREEN),
            COMMAND,
            Wait(Looking(NOW + 0.5, Confirmed.SCREEN)),
            id="settle-never-lengthens-it",
        ),
        pytest.param(
            Seen(pane="dead"), SCREEN_SEEN, BARE_COMMAND, took(Confirmed.EXIT), id="bare-exit"
        ),
        pytest.param(
            Seen(screen=True, changed=True, error="API Error", submitted=True),
            LOOKING,
            SCREEN,
            took(Confirmed.SCREEN, "API Error"),
            id="screen-error-text-gone-turn-failed",
        ),
        pytest.param(
            Seen(screen=True, changed=True, error="Reconnecting"),
            LOOKING,
            SCREEN,
            Verdict(False, error="Reconnecting"),
            id="screen-error-text-still-there-not-taken",
        ),
        pytest.param(
            Seen(screen=True, changed=False, error="old error"),
            LOOKING,
            SCREEN,
            Wait(LOOKING),
            id="unchanged-error-is-the-baselines",
        ),
        # ---- the CLI's own record
        pytest.param(Seen(recorded=True), LOOKING, RECORD, took(Confirmed.RECORD), id="recorded"),
        pytest.param(
            Seen(recorded=True, screen=True, error="quota"),
            LOOKING,
            RECORD,
            took(Confirmed.RECORD, "quota"),
            id="recorded-then-its-turn-failed",
        ),
        pytest.param(
            Seen(screen=True, error="quota"),
            LOOKING,
            RECORD,
            Verdict(False, error="quota"),
            id="error-before-it-recorded",
        ),
        pytest.param(
            Seen(screen=True, error="quota"),
            QUEUED,
            RECORD,
            took(Confirmed.SCREEN, "quota"),
            id="queued-then-its-turn-failed",
        ),
        pytest.param(
            Seen(screen=True, held=True, error="drawn under the queue"),
            LOOKING,
            RECORD,
            Wait(Looking(NOW + 10.0, Confirmed.QUEUED, NOW + 2.0)),
            id="held-in-queue-is-no-error",
        ),
        pytest.param(
            ALIVE_SCREEN, LOOKING, RECORD, Wait(LOOKING, watch=True), id="not-recorded-watches"
        ),
        pytest.param(
            ALIVE_SCREEN,
            Looking(NOW + 10.0, None, NOW),
            RECORD,
            Wait(Looking(NOW + 10.0, None, NOW), watch=True, nudge=True),
            id="enter-again-when-due",
        ),
        pytest.param(ALIVE_SCREEN, QUEUED, RECORD, Wait(QUEUED), id="queued-waits-quietly"),
        pytest.param(Seen(pane="dead"), QUEUED, RECORD, Verdict(False), id="died-with-its-queue"),
        pytest.param(
            Seen(pane="dead", recorded=True),
            QUEUED,
            RECORD,
            took(Confirmed.RECORD),
            id="recorded-just-before-it-died",
        ),
    ],
)
def test_decide(seen: Seen, looking: Looking, signals: Signals, expected: Verdict | Wait) -> None:
    assert cf.decide(seen, looking, NOW, signals) == expected


def test_a_queue_waits_as_long_as_readiness_would() -> None:
    held = Seen(screen=True, held=True)
    assert cf.decide(held, LOOKING, NOW, RECORD, queued_until=NOW + 60.0) == Wait(
        Looking(NOW + 60.0, Confirmed.QUEUED, NOW + 2.0)
    )
    assert cf.decide(held, LOOKING, NOW, RECORD, queued_until=NOW + 1.0) == Wait(
        Looking(NOW + 10.0, Confirmed.QUEUED, NOW + 2.0)
    )


@pytest.mark.parametrize(
    ("looking", "expected"),
    [
        pytest.param(Looking(NOW), Verdict(False), id="no-sign"),
        pytest.param(SCREEN_SEEN, took(Confirmed.SCREEN), id="a-sign-a-moment-more-kept"),
        pytest.param(QUEUED, took(Confirmed.QUEUED), id="held-in-its-queue-is-delivered"),
    ],
)
def test_when_time_runs_out(looking: Looking, expected: Verdict) -> None:
    assert looking.verdict() == expected


def test_start_and_nudge_times() -> None:
    assert Looking.start(NOW, 15.0, RECORD) == Looking(NOW + 15.0, None, NOW + cf.ENTER_AGAIN)
    assert Looking.start(NOW, 15.0, HOOKS).enter_again == math.inf
    assert LOOKING.nudged(NOW + 5.0).enter_again == NOW + 5.0 + cf.ENTER_AGAIN
