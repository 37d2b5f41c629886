"""Whether a start held (issue 19, items 5 and 6): a start holds when its CLI shows it is ready
(its idle, working or waiting screen, or a draft on its input line), or once it lived well past
its CLI's slowest measured start (providers.traits start_time, core.status.start_window); the
status pipeline's start grace ends at the same moment. Pure decisions here; the real Gemini CLI
(whose slow death of a bad flag is the cause) in test_real_starts.py; the fake aider below."""

from __future__ import annotations

import time

import pytest

from roost.core import starts, status
from roost.ops import observe
from roost.providers import traits

from conftest import Env


@pytest.mark.parametrize("provider", ["claude", "codex", "gemini", "aider"])
def test_a_start_held_only_when_ready_or_alive_well_past_its_clis_start(provider: str) -> None:
    window = status.start_window(traits.of(provider).start_time)
    slowest = traits.of(provider).start_time
    # alive, nothing ready yet, at its slowest start: still pending (a bad flag may kill it yet)
    assert starts.verdict(True, None, 0.0, True, slowest, window) == starts.PENDING
    assert starts.verdict(True, None, 0.0, True, window, window) == starts.HELD
    assert starts.verdict(True, "idle", 0.0, True, 0.5, window) == starts.HELD
    assert starts.verdict(True, None, 0.0, True, 0.5, window, typed=True) == starts.HELD
    assert starts.verdict(False, None, 0.0, True, slowest, window) == starts.DIED


def test_gemini_and_aider_windows_outlast_their_slow_deaths_of_a_bad_flag() -> None:
    # measured on a loaded machine (docs/PROVIDERS.md): gemini died of a bad flag after up to
    # 26 s, aider after up to 11 s; the old fixed window was 3 s
    assert status.start_window(traits.GEMINI.start_time) > 26 * 2
    assert status.start_window(traits.AIDER.start_time) > 11 * 2


AIDER_DRAFT = "aider v0.86.2\nModel: gpt-4o\n\n> half a thought"


def test_a_draft_on_the_input_line_ends_the_start_grace() -> None:
    patterns = status.patterns_for(traits.AIDER.patterns)
    assert observe.typed(AIDER_DRAFT, "aider")
    assert not observe.typed(AIDER_DRAFT.replace("half a thought", ""), "aider")
    common = dict(
        alive=True,
        has_window=True,
        base_state="running",
        roost_stopped=False,
        hook=None,
        screen=AIDER_DRAFT,
        activity=100.0,
        started_at=100.0,
        patterns=patterns,
        now=105.0,
        grace=observe.start_grace("aider"),
    )
    assert status.classify(**common)[0] == "starting"  # type: ignore[arg-type]
    assert status.classify(**common, typed=True)[:2] == ("idle", "screen")  # type: ignore[arg-type]


@pytest.mark.parametrize("provider", ["claude", "codex", "gemini", "aider", "command"])
def test_the_start_grace_lasts_as_long_as_a_start_may_take_to_hold(provider: str) -> None:
    assert observe.start_grace(provider) >= status.start_window(traits.of(provider).start_time)
    assert observe.start_grace(provider) >= status.STARTING_GRACE


def test_aider_with_a_draft_right_after_its_start_is_not_starting(world: Env) -> None:
    world.roost("spawn", "ag", "--provider", "aider", "--cwd", str(world.tmp / "work"))
    pane = world.pane_of("ag")
    world.wait_for(lambda: world.screen(pane).rstrip().endswith(">"), what="aider's prompt")
    world.tmux("send-keys", "-t", pane, "-l", "half a thought")
    world.wait_screen(pane, "> half a thought")
    assert world.ls()["ag"]["status"] != "starting"
    began = time.monotonic()
    proc = world.roost("send", "ag", "hello", check=False)
    assert proc.returncode != 0 and "half a thought" in proc.stderr, proc.stderr
    assert time.monotonic() - began < 10  # refused at once, not when a grace ran out
