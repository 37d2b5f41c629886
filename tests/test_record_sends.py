"""Sends to a CLI confirmed by its own record (Gemini CLI's chat file), on the in-memory tmux
and a manual clock, through the screens Gemini CLI 0.61.0 really draws: on a loaded machine it
clears its input box at the Enter and shows the prompt (and records it) only seconds later; it
redraws its whole screen at each change, so one look can catch a frame half drawn; a resumed
session is loaded under "Resuming session..." with no input line at all. None of these may
make roost send a text twice or call the CLI's history a draft."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from fake_app import WORLD_START

from roost.core.clock import ManualClock
from roost.ops import lifecycle, send
from roost.ops.context import App
from roost.tmux.fake import FakeTmux

# Gemini CLI 0.61.0's screen, idle (read off the real CLI in tmux): the input box's line, its
# placeholder, the footer.
PLACEHOLDER = "  Type your message or @path/to/file"
COMPOSER = f" Shift+Tab to accept edits\n > {PLACEHOLDER}\n workspace (/directory)\n /w"
HISTORY = " ▝▜▄     Gemini CLI v0.61.0\n > an earlier prompt\n✦ its answer\n"
IDLE = HISTORY + COMPOSER
# While a resumed session loads: the history redrawn, a spinner, the box's rule, no input line.
RESUMING = (
    HISTORY + "⠋ Resuming session...\n──────────\n Shift+Tab to accept edits\n"
    " workspace (/directory)\n /w"
)
# A frame caught half drawn: the history written, the input box not yet.
HALF_DRAWN = HISTORY
# A prompt taken while its MCP servers start (read off the real CLI under load).
QUEUED = (
    HISTORY + "ℹ Waiting for MCP servers to initialize... Slash commands are still available and"
    " prompts will be queued.\n  Queued (press ↑ to edit):\n    hello\n" + COMPOSER
)


# A turn the API refused (Gemini CLI 0.61.0's words), under the prompt it recorded.
FAILED = (
    HISTORY + " > api-error\n"
    '✕ [API Error: {"error":{"code":401,"message":"API key not valid. Please pass a valid API\n'
    '  key.","status":"UNAUTHENTICATED"}}]\n' + COMPOSER
)


class ScriptedClock(ManualClock):
    """The manual clock, and what happens in the fake world when it reaches a moment."""

    def __init__(self) -> None:
        super().__init__(WORLD_START)
        self.due: list[tuple[float, Callable[[], None]]] = []

    def at(self, moment: float, happen: Callable[[], None]) -> None:
        self.due.append((moment, happen))

    def advance(self, seconds: float) -> None:
        super().advance(seconds)
        for entry in [d for d in self.due if d[0] <= self.elapsed]:
            self.due.remove(entry)
            entry[1]()


class Looks(FakeTmux):
    """The fake tmux, where a single pane's look (capture) can first catch given frames."""

    def __init__(self) -> None:
        super().__init__()
        self.caught: list[str] = []
        self.on_look: Callable[[], None] | None = None  # what the CLI does just as roost looks

    def capture(self, pane_id: str, lines: int) -> str:
        if self.on_look is not None:
            happen, self.on_look = self.on_look, None
            happen()
        if self.caught:
            self._record("capture", pane_id)
            return self.caught.pop(0)
        return super().capture(pane_id, lines)


@pytest.fixture
def clock() -> ScriptedClock:
    return ScriptedClock()


@pytest.fixture
def fake() -> Looks:
    return Looks()


def spawn_gemini(app: App, fake: FakeTmux, clock: ScriptedClock) -> tuple[str, Path]:
    """A gemini agent at its idle screen, past its start, with an (empty) chat file."""
    app.environ["ROOST_GEMINI_BIN"] = "/bin/sh"
    fake.on_start = lambda pane: fake.set_screen(pane.id, IDLE)
    cwd = str(app.paths.home)
    agent = lifecycle.spawn(app, "gm", provider="gemini", cwd=cwd).agent
    home = Path(app.environ["HOME"]) / ".gemini"
    home.mkdir(parents=True, exist_ok=True)
    (home / "projects.json").write_text(json.dumps({"projects": {cwd: "w"}}))
    sid = str(agent.provider_session_id)
    chat = home / "tmp" / "w" / "chats" / f"session-2031-03-04T05-06-{sid[:8]}.jsonl"
    chat.parent.mkdir(parents=True)
    chat.write_text(json.dumps({"sessionId": sid}) + "\n")
    clock.advance(60)  # past its start
    return fake.pane_of(agent.id).id, chat


def record(chat: Path, text: str, role: str = "user") -> None:
    entry = {"id": f"{role} {text}", "type": role, "content": [{"text": text}]}
    with chat.open("a") as fh:
        fh.write(json.dumps(entry) + "\n")


def test_a_prompt_the_cli_took_but_shows_late_is_pasted_once(
    app: App, fake: Looks, clock: ScriptedClock
) -> None:
    """Gemini CLI 0.61.0 clears its input at the Enter, then awaits its logger before it shows
    the prompt and records it: seconds on a loaded machine, with an empty idle box and the text
    nowhere on the screen. A second paste there was a second prompt (CI: "I am g3" twice)."""
    pane, chat = spawn_gemini(app, fake, clock)
    took = clock.elapsed

    def enter(_pane: object) -> None:
        fake.set_screen(pane, IDLE)  # the box cleared, the prompt not shown yet
        if len(fake.calls_of("send_enter")) == 1:  # an Enter on the empty box does nothing
            clock.at(took + 6.0, lambda: record(chat, "hello"))

    fake.on_enter = enter
    sent = send.send(app, "gm", "hello")
    assert sent.delivered and sent.how == "session file"
    assert fake.calls_of("paste") == [("paste", pane, "hello")]


def test_a_turn_that_failed_as_roost_looked_was_still_delivered(
    app: App, fake: Looks, clock: ScriptedClock
) -> None:
    """The CLI recorded the text and showed its turn's failure between roost's read of the
    record and its look at the screen (CI, loaded: "not delivered ... shows an error" for a text
    the CLI had taken, and a script would send it again)."""
    pane, chat = spawn_gemini(app, fake, clock)

    def fails() -> None:
        record(chat, "api-error")
        fake.set_screen(pane, FAILED)

    def enter(_pane: object) -> None:
        fake.on_look = fails

    fake.on_enter = enter
    sent = send.send(app, "gm", "api-error")
    assert sent.delivered, sent.how
    assert sent.failure is not None and "API key not valid" in sent.failure
    assert fake.calls_of("paste") == [("paste", pane, "api-error")]


@pytest.mark.parametrize(
    "caught",
    [
        # The look for a draft caught the resume's frame (no input line: the history's
        # "> an earlier prompt" was read as one, and the send refused).
        pytest.param([RESUMING, RESUMING], id="resuming-screen-waited-out"),
        pytest.param([HALF_DRAWN], id="frame-caught-half-drawn"),
    ],
)
def test_a_frame_with_no_input_line_is_no_draft(
    app: App, fake: Looks, clock: ScriptedClock, caught: list[str]
) -> None:
    pane, chat = spawn_gemini(app, fake, clock)
    fake.caught = list(caught)
    fake.on_enter = lambda _p: record(chat, "hello")
    sent = send.send(app, "gm", "hello")
    assert sent.delivered, sent.how
    assert fake.calls_of("paste") == [("paste", pane, "hello")]


def test_a_draft_that_stays_is_still_refused(app: App, fake: Looks, clock: ScriptedClock) -> None:
    pane, _chat = spawn_gemini(app, fake, clock)
    fake.set_screen(
        pane, HISTORY + COMPOSER.replace("  Type your message or @path/to/file", "half a thought")
    )
    sent = send.send(app, "gm", "hello")
    assert not sent.delivered and '("half a thought")' in sent.how
    assert fake.calls_of("paste", "send_enter") == []


def test_a_prompt_the_cli_holds_in_its_queue_is_waited_for_then_confirmed(
    app: App, fake: Looks, clock: ScriptedClock
) -> None:
    """Gemini CLI takes a prompt while its MCP servers start and holds it in its queue (CI: 15 s
    was not enough on a loaded machine, "no sign that the agent took it"): the record gets as
    long as a wait for readiness, and the text is never sent again."""
    pane, chat = spawn_gemini(app, fake, clock)
    took = clock.elapsed

    def enter(_pane: object) -> None:
        fake.set_screen(pane, QUEUED)
        clock.at(took + 40.0, lambda: record(chat, "hello"))

    fake.on_enter = enter
    sent = send.send(app, "gm", "hello")
    assert sent.delivered and sent.how == "session file"
    assert fake.calls_of("paste") == [("paste", pane, "hello")]


def test_a_prompt_still_queued_when_time_runs_out_is_delivered_to_the_queue(
    app: App, fake: Looks, clock: ScriptedClock
) -> None:
    """The CLI will submit it itself once it is ready: "not delivered" would have a script
    send it twice."""
    pane, _chat = spawn_gemini(app, fake, clock)
    began = clock.elapsed
    fake.on_enter = lambda _p: fake.set_screen(pane, QUEUED)
    sent = send.send(app, "gm", "hello", timeout=30)
    assert sent.delivered and sent.how == send.QUEUED
    assert fake.calls_of("paste") == [("paste", pane, "hello")]
    assert fake.calls_of("send_enter") == [("send_enter", pane)]  # none into a draft typed since
    assert clock.elapsed - began <= 30.5  # --timeout bounds the wait on the queue too


def test_a_wait_on_a_queued_text_gets_the_answer_to_the_prompt_it_joined(
    app: App, fake: Looks, clock: ScriptedClock
) -> None:
    """Gemini CLI submits its queue as one prompt, the texts joined by a blank line: the answer
    to that prompt is the answer to each of them (`send --wait` found none: "its CLI's record
    holds no answer")."""
    pane, chat = spawn_gemini(app, fake, clock)
    took = clock.elapsed
    record(chat, "an earlier one\n\nhello")  # a joined prompt that asked it before
    record(chat, "not this answer", "gemini")

    def working() -> None:
        record(chat, "first\n\nhello")
        fake.set_screen(pane, HISTORY + "⠋ Thinking (esc to cancel)\n" + COMPOSER)

    def answered() -> None:
        record(chat, "both done", "gemini")
        fake.set_screen(pane, IDLE)

    def enter(_pane: object) -> None:
        fake.set_screen(pane, QUEUED)
        clock.at(took + 20.0, working)
        clock.at(took + 30.0, answered)

    fake.on_enter = enter
    sent = send.send(app, "gm", "hello", wait=True)
    assert sent.delivered and sent.reply == "both done", sent


def test_a_queue_seen_late_still_ends_within_the_timeout(
    app: App, fake: Looks, clock: ScriptedClock
) -> None:
    pane, _chat = spawn_gemini(app, fake, clock)
    began = clock.elapsed
    fake.on_enter = lambda _p: clock.at(clock.elapsed + 12.0, lambda: fake.set_screen(pane, QUEUED))
    sent = send.send(app, "gm", "hello", timeout=30)
    assert sent.delivered and sent.how == send.QUEUED
    assert clock.elapsed - began <= 30.5


def test_a_long_text_in_the_queue_after_a_resume_is_never_pasted_again(
    app: App, fake: Looks, clock: ScriptedClock
) -> None:
    """The queue previews a long text cut at the screen's width ("…"): it is held, whatever a
    look saw before (here the resume's frame, which alone allows a paste again)."""
    pane, chat = spawn_gemini(app, fake, clock)
    text = "please read every file under src and tell me which module parses the config"
    cut = QUEUED.replace("    hello", "    " + text[:40] + "…")

    def enter(_pane: object) -> None:
        if len(fake.calls_of("send_enter")) == 1:
            fake.set_screen(pane, RESUMING)
            clock.at(clock.elapsed + 0.5, lambda: fake.set_screen(pane, cut))
            clock.at(clock.elapsed + 30.0, lambda: record(chat, "earlier\n\n" + text))

    fake.on_enter = enter
    sent = send.send(app, "gm", text)
    assert sent.delivered and sent.how == "session file"  # one part of the prompt the queue made
    assert len(fake.calls_of("paste")) == 1


def test_a_person_typing_through_the_ready_limit_keeps_the_draft(
    app: App, fake: Looks, clock: ScriptedClock
) -> None:
    """Two looks that never agree (a draft that grows as someone types) are not an empty input:
    when the time to be ready runs out the send is refused, as for any draft."""
    _pane, _chat = spawn_gemini(app, fake, clock)
    fake.caught = [HISTORY + COMPOSER.replace(PLACEHOLDER, "x" * n) for n in range(1, 200)]
    sent = send.send(app, "gm", "hello", timeout=3)
    assert not sent.delivered and "has a draft on its input line" in sent.how
    assert fake.calls_of("paste", "send_enter") == []


def test_a_paste_that_came_while_the_cli_had_no_input_line_is_pasted_again(
    app: App, fake: Looks, clock: ScriptedClock
) -> None:
    """A paste and its Enter that reach Gemini CLI while it loads a resumed session are dropped
    (it has no input line then: seen beside a CPU hog, "no sign" after 15 s). The look that saw
    "Resuming session..." with the text nowhere is what allows the one paste again."""
    pane, chat = spawn_gemini(app, fake, clock)

    def enter(_pane: object) -> None:
        pastes = len(fake.calls_of("paste"))
        if pastes == 1 and len(fake.calls_of("send_enter")) == 1:
            fake.set_screen(pane, RESUMING)  # the paste and this Enter: gone with the input
            clock.at(clock.elapsed + 1.0, lambda: fake.set_screen(pane, IDLE))
        elif pastes == 2:
            record(chat, "hello")

    fake.on_enter = enter
    sent = send.send(app, "gm", "hello")
    assert sent.delivered and sent.how == "session file"
    assert fake.calls_of("paste") == [("paste", pane, "hello")] * 2


def test_a_draft_typed_while_the_record_is_late_gets_no_enter(
    app: App, fake: Looks, clock: ScriptedClock
) -> None:
    """Someone types while the CLI shows and records the prompt late: roost's Enter again
    would submit their draft."""
    pane, chat = spawn_gemini(app, fake, clock)
    typed = HISTORY + COMPOSER.replace(PLACEHOLDER, "my own words")

    def enter(_pane: object) -> None:
        if len(fake.calls_of("send_enter")) == 1:
            fake.set_screen(pane, IDLE)
            clock.at(clock.elapsed + 1.0, lambda: fake.set_screen(pane, typed))
            clock.at(clock.elapsed + 6.0, lambda: record(chat, "hello"))

    fake.on_enter = enter
    sent = send.send(app, "gm", "hello")
    assert sent.delivered and sent.how == "session file"
    assert fake.calls_of("paste", "send_enter") == [("paste", pane, "hello"), ("send_enter", pane)]


def test_no_paste_again_onto_a_draft_typed_after_the_resume(
    app: App, fake: Looks, clock: ScriptedClock
) -> None:
    pane, _chat = spawn_gemini(app, fake, clock)
    typed = HISTORY + COMPOSER.replace(PLACEHOLDER, "my own words")

    def enter(_pane: object) -> None:
        if len(fake.calls_of("send_enter")) == 1:
            fake.set_screen(pane, RESUMING)
            clock.at(clock.elapsed + 1.0, lambda: fake.set_screen(pane, typed))

    fake.on_enter = enter
    sent = send.send(app, "gm", "hello")
    assert not sent.delivered and sent.how == send.NO_SIGN
    assert fake.calls_of("paste", "send_enter") == [("paste", pane, "hello"), ("send_enter", pane)]


def test_a_large_paste_whose_enter_was_lost_gets_its_enter_again(
    app: App, fake: Looks, clock: ScriptedClock
) -> None:
    """Gemini shows a paste of over 5 lines as "[Pasted Text: N lines]": roost's own text,
    so the Enter again is pressed."""
    pane, chat = spawn_gemini(app, fake, clock)
    text = "\n".join(f"line {n}" for n in range(8))
    fake.set_screen(pane, HISTORY + COMPOSER.replace(PLACEHOLDER, "[Pasted Text: 8 lines]"))

    def enter(_pane: object) -> None:
        if len(fake.calls_of("send_enter")) == 2:
            record(chat, text)

    fake.on_enter = enter
    fake.caught = [IDLE, IDLE]  # the draft looks before the paste: an empty input
    sent = send.send(app, "gm", text)
    assert sent.delivered and sent.how == "session file"
    assert len(fake.calls_of("send_enter")) == 2


def test_a_lost_enter_under_a_quoting_text_is_pressed_again(
    app: App, fake: Looks, clock: ScriptedClock
) -> None:
    """A text whose later line starts with `>` (a quote) shows that line as the input box's
    last `>` row: still roost's own text, so its lost Enter is pressed again."""
    pane, chat = spawn_gemini(app, fake, clock)
    text = "the test is flaky\n> a quoted line of the log it printed"
    rows = "the test is flaky\n   > a quoted line of the log it printed"
    box = COMPOSER.replace(PLACEHOLDER, rows)
    fake.caught = [IDLE]  # the draft look before the paste: an empty input
    fake.set_screen(pane, HISTORY + box)

    def enter(_pane: object) -> None:
        if len(fake.calls_of("send_enter")) == 2:  # the first was lost
            record(chat, text)

    fake.on_enter = enter
    sent = send.send(app, "gm", text)
    assert sent.delivered and sent.how == "session file"
    assert fake.calls_of("paste") == [("paste", pane, text)]


@pytest.mark.parametrize("hint", ["Press 'Esc' for NORMAL mode.", "Press 'i' for INSERT mode."])
def test_gemini_vim_modes_empty_input_is_no_draft(
    app: App, fake: Looks, clock: ScriptedClock, hint: str
) -> None:
    pane, chat = spawn_gemini(app, fake, clock)
    fake.set_screen(pane, HISTORY + COMPOSER.replace(PLACEHOLDER, hint))
    fake.on_enter = lambda _p: record(chat, "hello")
    sent = send.send(app, "gm", "hello")
    assert sent.delivered, sent.how
