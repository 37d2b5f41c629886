"""`roost answer`: the person answers an agent's question from anywhere (the CLI, the TUI, the
web page, a parent through MCP), never by typing into it blind.

The question is read off the agent's screen now (core/questions.py); a choice it does not offer
is refused, and so is an answer prepared for a question that has changed since it was shown
(its fingerprint). The answer is logged before its keys are pressed (intent before effect),
pressed under the agent's send lock (never between a send's paste and its Enter), and
acknowledged: roost waits for the question to leave the screen and reports what the agent
shows next. Then what roost held for the agent (a first prompt, ops/held.py) goes in, once it
is at its input.
"""

from __future__ import annotations

from dataclasses import dataclass

from roost.core import questions
from roost.core.errors import RoostError
from roost.core.names import check_name
from roost.core.observation import Observation
from roost.core.questions import Choice, Question
from roost.core.status import SETTLED, Status
from roost.ops import held, observe
from roost.ops.context import App
from roost.system import locks

GONE_TIMEOUT = 10.0  # seconds the question has to leave the screen after the keys
SETTLE_TIMEOUT = 30.0  # seconds to wait for what the agent shows next (a CLI starting up)
KEY_GAP = 0.15  # seconds between two keys: a CLI redraws its list between them
MOVE_WAIT = 1.0  # seconds a move of the selection has to show before it is pressed again
MOVE_TRIES = 3  # presses of a move, at most, per row of the list
SCREEN_LINES = 60  # lines of the screen read for a question
NEXT = SETTLED  # what may follow an answer


@dataclass(frozen=True, slots=True)
class Asked:
    """An agent's open question, as the person is shown it."""

    name: str
    question: Question


@dataclass(frozen=True, slots=True)
class Answered:
    name: str
    question: Question
    choice: Choice
    status: str  # what it shows next: idle, waiting (another question), working, exited...
    reason: str | None  # that status's words (the next question's, an error's)
    # what became of the texts roost held for it: all went in (True), some are still held
    # (False), none were held (None)
    held: bool | None


def _observed(app: App, name: str) -> Observation:
    found = observe.one(app, name)
    if found is None:
        raise RoostError(f"no agent named {name!r}")
    return found


def _open_question(app: App, found: Observation) -> Question:
    name = found.agent.name
    if found.pane is None or not found.alive:
        raise RoostError(f"{name} is not running: no question to answer")
    if found.status != Status.WAITING:
        raise RoostError(f"{name} is not waiting for an answer (it is {found.status})")
    q = questions.read(app.tmux.capture(found.pane.pane_id, SCREEN_LINES))
    if q is None:
        raise RoostError(
            f"{name} is waiting, but roost cannot read its choices: roost attach {name}"
        )
    return q


def asked(app: App, name: str) -> Asked:
    """The agent's open question and its choices; refused when it asks none."""
    check_name(name)
    app.store.require(name)
    return Asked(name, _open_question(app, _observed(app, name)))


def answer(
    app: App,
    name: str,
    wanted: str,
    expect: str | None = None,
    settle: float = SETTLE_TIMEOUT,
) -> Answered:
    """Pick the choice `wanted` names (its number, y/n, or its words) of the agent's open
    question; `expect`: the fingerprint of the question the person was shown (refused when the
    question on the screen is another). Returns once the question left the screen and the agent
    shows what comes next (at most `settle` s for that)."""
    check_name(name)
    agent = app.store.require(name)
    with locks.hold(app.paths.locks, f"{name}.send", timeout=30):
        found = _observed(app, name)
        q = _open_question(app, found)
        if expect is not None and expect != q.fingerprint:
            raise RoostError(
                f"{name}'s question changed since it was shown (now: {q.text!r}); "
                "nothing was pressed"
            )
        choice = q.find(wanted)
        if choice is None:
            offered = "; ".join(f"{c.key}. {c.label}" for c in q.choices)
            raise RoostError(f"{name}'s question offers no choice {wanted!r} ({offered})", code=2)
        assert found.pane is not None
        pane = found.pane.pane_id
        had = bool(held.pending(app, agent))
        app.store.log(agent, "answered", question=q.text, choice=choice.label)
        _press(app, name, pane, q, choice)
        _wait_gone(app, name, pane, q)
    after = _next(app, name, settle, q)
    if had and after.status == Status.IDLE:  # the service may be delivering them: its lock
        told = held.deliver(app, agent)
        if told is not None and not told.delivered and told.question:
            after = _observed(app, name)
    went_in = None if not had else not held.pending(app, agent)
    return Answered(name, q, choice, after.status or Status.UNKNOWN, after.status_reason, went_in)


def _press(app: App, name: str, pane: str, q: Question, choice: Choice) -> None:
    """Press the keys that pick `choice`. A list's selection is moved one row at a time, each
    move seen on the screen before the next key (a CLI that has drawn its question may not
    read keys yet: Claude Code 2.1.332 drops a key pressed right after its trust question
    shows), and Enter only once the choice is the selected one."""
    keys = q.keys_for(choice)
    if q.yes_no or q.selected is None:
        for i, key in enumerate(keys):
            if i:
                app.clock.sleep(KEY_GAP)
            app.tmux.press(pane, key)
        return
    target = q.choices.index(choice)
    for _ in range(MOVE_TRIES * max(1, len(q.choices))):
        now = _on_screen(app, pane)
        if now is None or now.fingerprint != q.fingerprint:
            raise RoostError(f"{name}'s question changed while roost answered it: attach {name}")
        if now.selected == target:
            app.tmux.press(pane, "Enter")
            return
        key = "Down" if (now.selected or 0) < target else "Up"
        app.tmux.press(pane, key)
        _wait_moved(app, pane, q, now.selected)
    raise RoostError(
        f"{name}'s question did not take the keys that move its selection: roost attach {name}"
    )


def _on_screen(app: App, pane: str) -> Question | None:
    """The question on the screen now; a screen caught between two frames of a redraw (the
    list erased, not drawn yet) is looked at again, for at most MOVE_WAIT s."""
    deadline = app.clock.monotonic() + MOVE_WAIT
    while True:
        found = questions.read(app.tmux.capture(pane, SCREEN_LINES))
        if found is not None or app.clock.monotonic() >= deadline:
            return found
        app.clock.sleep(0.05)


def _wait_moved(app: App, pane: str, q: Question, was: int | None) -> None:
    """Until the selection moved from `was`, at most MOVE_WAIT s (then the move is pressed
    again)."""
    deadline = app.clock.monotonic() + MOVE_WAIT
    while app.clock.monotonic() < deadline:
        app.clock.sleep(KEY_GAP)
        now = questions.read(app.tmux.capture(pane, SCREEN_LINES))
        if now is None or now.fingerprint != q.fingerprint or now.selected != was:
            return


def _wait_gone(app: App, name: str, pane: str, q: Question) -> None:
    deadline = app.clock.monotonic() + GONE_TIMEOUT
    while True:
        here = next((p for p in app.tmux.list_panes() if p.pane_id == pane), None)
        if here is None or here.dead:
            return  # the CLI exited on the answer (its last screen still shows the question)
        now = questions.read(app.tmux.capture(pane, SCREEN_LINES))
        if now is None or now.fingerprint != q.fingerprint:
            return
        if app.clock.monotonic() >= deadline:
            raise RoostError(
                f"pressed the answer, but {name}'s question is still on its screen after "
                f"{GONE_TIMEOUT:g} s: roost attach {name}"
            )
        app.clock.sleep(0.1)


def _next(app: App, name: str, settle: float, answered: Question) -> Observation:
    """The agent once it shows what follows the answer: at its input, another question, an
    error, or gone; or, after `settle` s, whatever it shows then (still starting, working).
    A `waiting` whose screen shows no other question is the answered one's, not yet caught up
    with (a hook's status holds until the CLI's next event)."""
    deadline = app.clock.monotonic() + settle
    while True:
        found = _observed(app, name)
        if app.clock.monotonic() >= deadline:
            return found
        if found.status == Status.WAITING and found.pane is not None:
            now = questions.read(app.tmux.capture(found.pane.pane_id, SCREEN_LINES))
            if now is not None and now.fingerprint != answered.fingerprint:
                return found
        elif found.status in NEXT:
            return found
        app.clock.sleep(0.2)
