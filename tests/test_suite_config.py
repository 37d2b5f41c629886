"""How the suite itself is checked (issue 20): mypy covers the tests and benchmarks, not only
src/roost, and its per-module relaxations name modules that exist."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def mypy_config() -> dict[str, Any]:
    return dict(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"])


def test_mypy_checks_src_tests_and_bench_with_every_body_checked() -> None:
    config = mypy_config()
    assert {"src/roost", "tests", "bench"} <= set(config.get("files", []))
    assert config["check_untyped_defs"] is True
    # CI runs the configured check as it is (no paths on its command line to narrow it)
    assert ".venv/bin/mypy\n" in (ROOT / ".ci" / "run").read_text()


def test_roost_stays_strict_and_no_override_says_strict() -> None:
    """mypy applies `strict` from an overrides section to every module (it was how the whole of
    src/roost came to be strict): the flags are spelled out for roost.* instead."""
    overrides = mypy_config()["overrides"]
    assert not [o for o in overrides if "strict" in o]
    roost = next(o for o in overrides if "roost.*" in o["module"])
    assert roost["warn_return_any"] is True
    # the two that bind tests and bench too (issue 37 point 4) are set for every module, and
    # no override takes them back
    config = mypy_config()
    for flag in ("disallow_untyped_defs", "disallow_any_generics"):
        assert config[flag] is True, flag
        assert not [o for o in overrides if o.get(flag) is False], flag


def test_the_baseline_names_only_modules_that_exist() -> None:
    """A relaxation for a module that was renamed or removed would silently outlive it."""
    baseline = [o for o in mypy_config()["overrides"] if "disable_error_code" in o]
    assert baseline
    for entry in baseline:
        for module in entry["module"]:
            assert (ROOT / "tests" / f"{module}.py").exists() or (
                ROOT / "bench" / f"{module}.py"
            ).exists(), module


class FakeItem:
    """What the ordering reads of a collected test: its markers."""

    def __init__(self, name: str, *markers: str) -> None:
        self.name = name
        self.markers = [getattr(pytest.mark, m).mark for m in markers]

    def iter_markers(self) -> list[pytest.Mark]:
        return self.markers

    def add_marker(self, marker: pytest.MarkDecorator) -> None:
        self.markers.append(marker.mark)


def test_the_longest_tests_are_dealt_out_first() -> None:
    """With `-n 2` xdist hands tests out in collection order as workers free up: a real-CLI
    test (minutes) collected last would run alone at the end while the other worker idles."""
    import conftest

    items: list[Any] = [
        FakeItem("unit"),
        FakeItem("tmux_a", "tmux"),
        FakeItem("real", "tmux", "real_claude"),
        FakeItem("unit_b"),
        FakeItem("tmux_b", "tmux"),
        FakeItem("codex", "real_codex"),
        FakeItem("recap", "tmux", "real_claude", "minutes"),
        FakeItem("install", "tmux"),
    ]
    items[-1].markers.append(pytest.mark.timeout(600).mark)  # it says it is long
    conftest.pytest_collection_modifyitems(items)
    assert [i.name for i in items] == [
        "recap",
        "real",
        "codex",
        "install",
        "tmux_a",
        "tmux_b",
        "unit",
        "unit_b",
    ]
