"""`roost restore`'s decisions beyond the plan (core.workspace.plan_restore): how many agents
start at once and how far apart, and the report of what happened. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from roost.core.errors import RoostError
from roost.core.present import few
from roost.core.settings import RestoreSettings
from roost.core.workspace import RestorePlan


def limits(
    conf: RestoreSettings, concurrency: int | None, stagger: float | None
) -> tuple[int, float]:
    """(concurrency, stagger): the flags, else config.toml's [restore] `conf` (its defaults).

    >>> limits(RestoreSettings(concurrency=5), None, 0.0)
    (5, 0.0)
    """
    cap = conf.concurrency if concurrency is None else concurrency
    gap = conf.stagger if stagger is None else stagger
    if cap < 1 or gap < 0:
        raise RoostError("--concurrency must be at least 1 and --stagger not negative", code=2)
    return cap, gap


def named(ids: Sequence[str], names: Mapping[str, str]) -> list[str]:
    """Agent ids as names; an agent removed meanwhile (a concurrent `roost rm`) is left out."""
    return [names[a] for a in ids if a in names]


# What became of an agent restore meant to start: a progress line each, as its start settles.
RESUMED = "resumed"  # started, its conversation brought back
STARTED = "started"  # started with no conversation to bring back (a new one, or a program's)
FAILED = "failed"  # started and died at once, or its start broke
NOT_STARTED = "not started"  # refused before any start: a person must act first
ALREADY_RUNNING = "already running"  # another roost started it meanwhile

FEW = 10  # agents a report names; beyond it, it counts them


@dataclass(frozen=True, slots=True)
class Settled:
    name: str
    outcome: str  # RESUMED, STARTED, FAILED, NOT_STARTED, ALREADY_RUNNING
    detail: str | None = None  # the session id (RESUMED, STARTED), else why


def plan_line(to_start: int, hibernating: int, running: int, cap: int) -> str:
    """The first progress line: what the restore is about to do.

    >>> plan_line(3, 26, 1, 2)
    'restoring: 3 to start (2 at a time), 26 to hibernate, 1 already running'
    """
    return (
        f"restoring: {to_start} to start ({cap} at a time), {hibernating} to hibernate, "
        f"{running} already running"
    )


def progress_line(settled: Settled, done: int, total: int) -> str:
    r"""One agent's line as its start settles, `done` of `total`, on one line whatever its words.

    >>> progress_line(Settled("api", RESUMED, "4f1c"), 1, 3)
    '[1/3] api: resumed its conversation 4f1c'
    >>> progress_line(Settled("logs", STARTED), 2, 3)
    '[2/3] logs: started (no conversation to resume)'
    >>> progress_line(Settled("bad", FAILED, "exit 3:\n  boom"), 3, 3)
    '[3/3] bad: failed: exit 3: boom'
    """
    return f"[{done}/{total}] {settled.name}: {_outcome(settled)}"


def _outcome(settled: Settled) -> str:
    detail = " ".join((settled.detail or "").split())
    if settled.outcome == RESUMED:
        return f"resumed its conversation {detail}" if detail else "resumed its conversation"
    if settled.outcome == STARTED:
        if detail:
            return f"started a new conversation {detail}"
        return "started (no conversation to resume)"
    if settled.outcome == ALREADY_RUNNING:
        return "already running (another roost started it)"
    return f"{settled.outcome}: {_without_prefix(detail)}"


def _without_prefix(why: str) -> str:
    return why.removeprefix(f"{NOT_STARTED}: ")


@dataclass(frozen=True, slots=True)
class Report:
    live: int
    started: list[str]
    already_running: list[str]
    hibernated: list[str]
    failed: dict[str, str]
    peak: int
    seconds: float
    left_stopped: list[str] = field(default_factory=list)  # tiles the user stopped
    skipped: dict[str, str] = field(default_factory=dict)  # not started, and why
    advice: list[str] = field(default_factory=list)  # what to do about the skipped ones
    # started agents whose conversation came back: name -> its session id (None: its CLI has
    # no ids, as aider's chat history)
    resumed: dict[str, str | None] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Every agent it meant to start runs (`roost restore` exits 1 otherwise)."""
        return not self.failed and not self.skipped

    def as_json(self) -> dict[str, object]:
        return {
            "live_expected": self.live,
            "started": len(self.started),
            "already_running": len(self.already_running),
            "hibernated": len(self.hibernated),
            "failed": len(self.failed),
            "seconds": round(self.seconds, 3),
            "peak_concurrent_starts": self.peak,
            "started_agents": self.started,
            "failed_agents": self.failed,
            "left_stopped": len(self.left_stopped),
            "left_stopped_agents": self.left_stopped,
            "not_started": len(self.skipped),
            "not_started_agents": self.skipped,
            "advice": self.advice,
            "resumed": len(self.resumed),
            "resumed_agents": self.resumed,
            "already_running_agents": self.already_running,
            "hibernated_agents": self.hibernated,
        }

    def text(self) -> str:
        """A summary line, then each group with its names (a long group counted), each failure
        and refusal with its why, and the advice."""
        lines = [
            f"restored in {self.seconds:.1f}s: {self.live} live expected, "
            f"{len(self.started)} started"
            + (f" ({len(self.resumed)} resumed)" if self.resumed else "")
            + f", {len(self.already_running)} already running, "
            f"{len(self.hibernated)} hibernated, {len(self.failed)} failed"
            + (f", {len(self.skipped)} not started" if self.skipped else "")
        ]
        lines += [
            f"  resumed {name}: its conversation" + (f" {sid}" if sid else "")
            for name, sid in self.resumed.items()
        ]
        fresh = [n for n in self.started if n not in self.resumed]
        if fresh:
            lines.append(f"  started with no conversation to resume: {few(fresh, FEW)}")
        if self.already_running:
            lines.append(f"  already running: {few(self.already_running, FEW)}")
        if self.hibernated:
            lines.append(
                f"  still hibernated: {few(self.hibernated, FEW)} (they wake when used; "
                "roost wake NAME starts one now)"
            )
        if self.left_stopped:
            lines.append(
                f"  left stopped, as you stopped them: {', '.join(self.left_stopped)}"
                " (roost wake NAME starts one)"
            )
        lines += [f"  failed {name}: {why}" for name, why in sorted(self.failed.items())]
        lines += [
            f"  not started {', '.join(names)}: {_without_prefix(why)}"
            for why, names in _by_reason(self.skipped)
        ]
        lines += [f"  {line}" for line in self.advice]
        return "\n".join(lines) + "\n"


def _by_reason(why: Mapping[str, str]) -> list[tuple[str, list[str]]]:
    """(reason, its agents' names), one entry a reason: a fleet refused for one account's
    limit is one line.

    >>> _by_reason({"b": "limit", "a": "limit", "c": "approve c"})
    [('limit', ['a', 'b']), ('approve c', ['c'])]
    """
    grouped: dict[str, list[str]] = {}
    for name in sorted(why):
        grouped.setdefault(why[name], []).append(name)
    return sorted(grouped.items(), key=lambda item: item[1][0])


def report(
    plan: RestorePlan,
    names: Mapping[str, str],
    started: list[str],
    failed: dict[str, str],
    peak: int,
    seconds: float,
    found_running: Sequence[str] = (),
    skipped: Mapping[str, str] | None = None,
    advice: Sequence[str] = (),
    resumed: Mapping[str, str | None] | None = None,
) -> Report:
    """`found_running`: agents the plan meant to start that were running by the time their start
    came (another roost started them meanwhile); they count as already running, not started.
    `resumed`: the started agents whose conversation came back, with its session id."""
    return Report(
        live=len(plan.start) + len(plan.running),
        started=started,
        already_running=[*named(plan.running, names), *found_running],
        hibernated=named(plan.hibernate, names),
        failed=failed,
        peak=peak,
        seconds=seconds,
        left_stopped=named(plan.kept_stopped, names),
        skipped=dict(skipped or {}),
        advice=list(advice),
        resumed={n: sid for n, sid in (resumed or {}).items() if n in started},
    )
