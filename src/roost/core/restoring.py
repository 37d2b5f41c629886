"""`roost restore`'s decisions beyond the plan (core.workspace.plan_restore): how many agents
start at once and how far apart, and the report of what happened. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from roost.core.errors import RoostError
from roost.core.workspace import RestorePlan

DEFAULT_CONCURRENCY = 3
DEFAULT_STAGGER = 0.25  # seconds between two starts


def limits(
    conf: Mapping[str, Any], concurrency: int | None, stagger: float | None
) -> tuple[int, float]:
    """(concurrency, stagger): the flags, else config.toml's [restore] `conf`, else the defaults.

    >>> limits({"concurrency": 5}, None, 0.0)
    (5, 0.0)
    """
    cap = int(conf.get("concurrency", DEFAULT_CONCURRENCY)) if concurrency is None else concurrency
    gap = float(conf.get("stagger", DEFAULT_STAGGER)) if stagger is None else stagger
    if cap < 1 or gap < 0:
        raise RoostError("--concurrency must be at least 1 and --stagger not negative", code=2)
    return cap, gap


# Seconds between two starts of one account (provider and config folder), whatever the
# stagger: CLIs refresh a shared login at start, and single-use refresh tokens make
# simultaneous refreshes log each other out (issue 23, part 3).
DEFAULT_ACCOUNT_GAP = 0.5


def account_gap(conf: Mapping[str, Any]) -> float:
    """config.toml's [restore] account_gap, else the default.

    >>> account_gap({}), account_gap({"account_gap": 0})
    (0.5, 0.0)
    """
    return float(conf.get("account_gap", DEFAULT_ACCOUNT_GAP))


def named(ids: Sequence[str], names: Mapping[str, str]) -> list[str]:
    """Agent ids as names; an agent removed meanwhile (a concurrent `roost rm`) is left out."""
    return [names[a] for a in ids if a in names]


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

    @property
    def ok(self) -> bool:
        """Every agent it meant to start runs (`roost restore` exits 1 otherwise)."""
        return not self.failed and not self.skipped

    def as_json(self) -> dict[str, Any]:
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
        }

    def text(self) -> str:
        lines = [
            f"restored in {self.seconds:.1f}s: {self.live} live expected, "
            f"{len(self.started)} started, {len(self.already_running)} already running, "
            f"{len(self.hibernated)} hibernated, {len(self.failed)} failed"
            + (f", {len(self.skipped)} not started" if self.skipped else "")
        ]
        if self.left_stopped:
            lines.append(
                f"  left stopped, as you stopped them: {', '.join(self.left_stopped)}"
                " (roost wake NAME starts one)"
            )
        lines += [f"  failed {name}: {why}" for name, why in sorted(self.failed.items())]
        if self.skipped:
            lines.append(f"  not started: {', '.join(sorted(self.skipped))}")
        lines += [f"  {line}" for line in self.advice]
        return "\n".join(lines) + "\n"


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
) -> Report:
    """`found_running`: agents the plan meant to start that were running by the time their start
    came (another roost started them meanwhile); they count as already running, not started."""
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
    )
