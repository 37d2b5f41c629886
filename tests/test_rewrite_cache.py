"""conftest.rewrite_test_modules_once: the cache xdist's controller writes before its workers
start is what pytest itself would load for the module: its asserts rewritten."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc, get_cache_dir

from conftest import rewrite_test_modules_once

MODULE = "def test_it():\n    left = 1\n    assert left == 2\n"


def cached(module: Path) -> object:
    return _read_pyc(module, get_cache_dir(module) / (module.name[:-3] + PYC_TAIL))


def test_the_controller_writes_the_rewritten_module_pytest_loads(
    tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    module = tmp_path / "test_sample.py"
    module.write_text(MODULE)
    old = time.time() - 60
    os.utime(module, (old, old))
    assert cached(module) is None
    rewrite_test_modules_once(pytestconfig, [module])
    code = cached(module)
    assert code is not None
    scope: dict[str, Any] = {}
    exec(code, scope)  # type: ignore[arg-type]
    with pytest.raises(AssertionError) as failed:
        scope["test_it"]()
    assert "assert 1 == 2" in str(failed.value)  # rewritten: a plain assert says nothing


def test_a_module_saved_this_second_is_left_to_the_workers(
    tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    module = tmp_path / "test_fresh.py"
    module.write_text(MODULE)
    rewrite_test_modules_once(pytestconfig, [module])
    assert cached(module) is None
