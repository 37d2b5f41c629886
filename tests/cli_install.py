"""Pinned installs of the real agent CLIs for the tests (tests/real_claude.py, real_codex.py,
real_gemini.py, real_aider.py), cached in ``$ROOST_TEST_CACHE`` (default ``tests/.cache``,
gitignored): an npm package, or a PyPI package in a venv of its own.

Safe from concurrent test workers: an flock serialises installs of one version, and an install
that did not finish is never used (npm's is built aside and renamed into place; a venv cannot
move, so it is built in place and counts only once its ``.installed`` mark is written).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def cache_root() -> Path:
    return Path(os.environ.get("ROOST_TEST_CACHE") or TESTS / ".cache")


def runs_as(binary: Path, version: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether ``binary`` is an executable file whose ``--version`` runs and names ``version``."""
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        return False
    try:
        proc = subprocess.run(
            [str(binary), "--version"],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, **(env or {})},
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0 and version in proc.stdout


def _run(cmd: Sequence[str], cwd: Path | None = None, timeout: float = 1800) -> None:
    proc = subprocess.run(
        list(cmd),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(cmd)} failed ({proc.returncode}):\n"
            f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
        )


def npm_install(
    package: str, version: str, target: Path, find: Callable[[Path], Path | None]
) -> Path:
    """``npm install package@version`` into ``target`` (once); returns the executable that
    ``find(install root)`` picks (None: that install has no runnable one)."""
    found = find(target) if target.exists() else None
    if found:
        return found
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = find(target) if target.exists() else None
        if found:
            return found
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError(f"npm is needed to install {package} for the real-CLI tests")
        staging = Path(tempfile.mkdtemp(prefix=f".{version}-", dir=target.parent))
        try:
            (staging / "package.json").write_text('{"private": true}\n')
            _run(
                [
                    npm,
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--no-save",
                    "--no-package-lock",
                    "--loglevel=error",
                    f"{package}@{version}",
                ],
                cwd=staging,
            )
            if find(staging) is None:
                raise RuntimeError(
                    f"{package}@{version} installed but no runnable executable "
                    f"was found in {staging}/node_modules"
                )
            if target.exists():
                shutil.rmtree(target)
            staging.chmod(0o755)
            staging.rename(target)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
    found = find(target)
    if found is None:
        raise RuntimeError(f"no runnable {package} executable in {target}")
    return found


def venv_install(requirement: str, version: str, target: Path, binary: str) -> Path:
    """``pip install requirement`` into a venv at ``target`` (once), kept apart from roost's
    own environment; returns ``target/binary``."""
    found = target / binary
    mark = target / ".installed"
    if mark.exists() and runs_as(found, version):
        return found
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if mark.exists() and runs_as(found, version):
            return found
        if target.exists():
            shutil.rmtree(target)  # a venv whose install did not finish
        python = getattr(sys, "_base_executable", None) or sys.executable
        _run([python, "-m", "venv", str(target)])
        pip = target / "bin" / "pip"
        _run([str(pip), "install", "-q", "--disable-pip-version-check", requirement])
        if not runs_as(found, version):
            raise RuntimeError(f"{requirement} installed but {binary} does not run")
        mark.write_text(requirement + "\n")
    return found
