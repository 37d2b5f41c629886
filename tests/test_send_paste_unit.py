"""A paste the CLI dropped (Gemini CLI 0.61, resumed with -r, empties its input once its session
is loaded: the real CLI's test saw "who am I" pasted, gone, its Enter pressed on nothing) is
pasted again into the empty input line before the Enter; a paste on the line is never repeated."""

from __future__ import annotations

from dataclasses import dataclass, field

from roost.ops import send

EMPTY = " > I am g2\n✦ stub reply: I am g2\n\n │ >   Type your message or @path/to/file │\n"


def typed(text: str) -> str:
    return EMPTY.replace("  Type your message or @path/to/file", f" {text}")


@dataclass
class Screen:
    """A pane whose first `drops` pastes vanish (the CLI was not ready), then show."""

    drops: int
    pastes: list[str] = field(default_factory=list)

    def paste(self, pane_id: str, text: str, buffer: str) -> None:
        self.pastes.append(text)

    def capture(self, pane_id: str, lines: int) -> str:
        return typed(self.pastes[-1]) if len(self.pastes) > self.drops else EMPTY


@dataclass
class Clock:
    now: float = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class App:
    tmux: Screen
    clock: Clock = field(default_factory=Clock)


@dataclass
class Agent:
    id: str = "a1"
    name: str = "g2"
    provider: str = "gemini"


def test_a_dropped_paste_is_pasted_again_into_the_empty_line() -> None:
    pane = Screen(drops=1)
    pane.pastes.append("who am I")  # the send's own paste, dropped
    send._paste_held(App(pane), Agent(), "%1", "who am I")  # type: ignore[arg-type]
    assert pane.pastes == ["who am I", "who am I"]  # once more: the line was empty


def test_a_paste_on_the_line_is_never_repeated() -> None:
    pane = Screen(drops=0)
    pane.pastes.append("who am I")
    app = App(pane)
    send._paste_held(app, Agent(), "%1", "who am I")  # type: ignore[arg-type]
    assert pane.pastes == ["who am I"] and app.clock.now == 0.0


def test_it_gives_up_after_its_tries() -> None:
    pane = Screen(drops=99)
    pane.pastes.append("x")
    send._paste_held(App(pane), Agent(), "%1", "x")  # type: ignore[arg-type]
    assert len(pane.pastes) == 1 + send.PASTE_TRIES
