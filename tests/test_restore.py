"""Restore's queue and telemetry, in process: the cap holds, failures stay local, a span is sent."""

from __future__ import annotations

import threading
import time

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from test_approval_unit import imported

from roost.core.errors import NeedsPerson
from roost.ops import lifecycle
from roost.ops.context import App
from roost.ops.restore import run_queue, start_all
from roost.tmux.fake import FakeTmux

from conftest import Env


def test_queue_never_exceeds_its_cap_and_staggers_starts() -> None:
    now, peak, lock = [0], [0], threading.Lock()
    launched: list[float] = []

    def start(name: str) -> bool:
        with lock:
            launched.append(time.monotonic())
            now[0] += 1
            peak[0] = max(peak[0], now[0])
        time.sleep(0.05)
        with lock:
            now[0] -= 1
        return True

    pauses: list[float] = []

    def noted_sleep(seconds: float) -> None:
        pauses.append(seconds)
        time.sleep(seconds)

    done = run_queue([f"a{i}" for i in range(12)], start, 3, 0.01, sleep=noted_sleep)
    assert sorted(done.started) == sorted(f"a{i}" for i in range(12)) and done.failed == {}
    assert 2 <= peak[0] <= 3 and done.peak == peak[0]  # the cap holds, and is used
    assert pauses == [0.01] * 11  # a pause between every two starts


def test_one_failure_does_not_stop_the_rest() -> None:
    def start(name: str) -> bool:
        if name == "bad":
            raise RuntimeError("no such cwd")
        return name != "up"

    pauses: list[float] = []
    done = run_queue(["a", "bad", "up", "b"], start, 2, 0, pauses.append)
    assert pauses == []  # no stagger: no pause
    assert sorted(done.started) == ["a", "b"] and done.failed == {"bad": "no such cwd"}
    assert done.already_running == ["up"]  # found running: never counted as started


def test_what_a_person_must_fix_is_wakes_typed_refusal_and_restore_lists_it(
    app: App, fake: FakeTmux
) -> None:
    """Wake refuses with NeedsPerson, keeping its exit code and words: an agent that needs
    approval (2), whose provider's executable is missing (6), whose conversation is gone (7).
    Restore catches that one class and lists each as not started with the wake's own words;
    nothing starts, nothing is failed. Before: plain RoostErrors, which restore told apart by
    their exit codes 6 and 7, and approval it checked itself (another read of each agent,
    other words than wake's)."""
    imported(app)  # guest: claude, needs approval
    for name, provider in (("nobin", "codex"), ("lost", "claude")):
        app.environ[f"ROOST_{provider.upper()}_BIN"] = "/bin/sh"  # the fake tmux never runs it
        lifecycle.spawn(app, name, provider=provider, cwd=str(app.paths.home))
        lifecycle.kill(app, name)
    app.environ["ROOST_CODEX_BIN"] = str(app.paths.home / "no-such-codex")
    app.store.update(app.store.require("lost").id, conversation_seen=True)  # its transcript: none

    refusals = {}
    for name, code, words in (
        ("guest", 2, "guest needs approval: .*roost approve guest"),
        ("nobin", 6, "codex: executable .*no-such-codex.* not found"),
        ("lost", 7, "unresumable: lost's conversation .* is gone"),
    ):
        with pytest.raises(NeedsPerson, match=words) as refused:
            lifecycle.wake(app, name)
        assert refused.value.code == code
        refusals[name] = refused.value.why
    assert refusals["guest"].startswith("needs approval: ")  # the list names the agent itself

    panes = len(fake.list_panes())
    done = start_all(app, ["guest", "nobin", "lost"], concurrency=1, stagger=0)
    assert done.skipped == refusals
    assert done.started == [] and done.failed == {} and len(fake.list_panes()) == panes


@pytest.mark.tmux
def test_restore_emits_a_span_with_its_counts(world: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    world.roost("spawn", "t1", "--cwd", str(world.tmp / "work"))
    world.roost("spawn", "p1", "--cwd", str(world.tmp / "work"), "--detached")
    world.tmux("kill-server")
    for key, value in world.env.items():
        monkeypatch.setenv(key, value)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", None)
    monkeypatch.setattr(trace, "_TRACER_PROVIDER_SET_ONCE", trace.Once())
    trace.set_tracer_provider(provider)

    from roost.ops.restore import restore
    from roost.ops.root import open_app

    report = restore(open_app(), concurrency=2, stagger=0)
    assert report.started == ["t1"] and report.hibernated == ["p1"]
    [span] = exporter.get_finished_spans()
    assert span.name == "roost.restore"
    attrs = dict(span.attributes or {})
    assert attrs["roost.live_expected"] == 1 and attrs["roost.started"] == 1
    assert attrs["roost.hibernated"] == 1 and attrs["roost.failed"] == 0
    seconds = attrs["roost.seconds"]
    assert isinstance(seconds, float) and seconds > 0
