"""Real git repositories for the tests: one runner, one identity, no user or system config."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
}


def git(cwd: Path | str, *args: str, check: bool = True) -> str:
    """git's output, stripped; a failure is the test's (with git's words) unless not `check`."""
    proc = subprocess.run(
        ["git", "-C", str(cwd), *args], capture_output=True, text=True, timeout=30, check=False
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {args}: {proc.stderr}")
    return proc.stdout.strip()


def made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: Mapping[str, str | bytes]) -> Path:
    """A repository at tmp_path/repo on branch main whose first commit holds `files`."""
    for key, value in IDENTITY.items():
        monkeypatch.setenv(key, value)
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for name, content in files.items():
        if isinstance(content, bytes):
            (repo / name).write_bytes(content)
        else:
            (repo / name).write_text(content)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "first")
    return repo
