"""The launch hand-over: a private file holding an agent's argv and environment (API keys
included) that `python -m roost.launch FILE` reads and deletes before the agent starts.

A secret must not outlive the start: the file is created owner-only and never through a symlink,
removed at once when the start fails, and any file older than a start can take (a roost killed
between writing it and starting the agent) is swept by the next roost command.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

MAX_AGE = 60.0  # seconds: far longer than a launcher takes to read its file
SUFFIX = ".json"


def write(run_dir: Path, agent_id: str, spec: dict[str, Any]) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = run_dir / f"{agent_id}-{os.urandom(6).hex()}{SUFFIX}"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(spec, fh)
    except BaseException:
        discard(path)
        raise
    return path


def discard(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def sweep(run_dir: Path, now: float | None = None, max_age: float = MAX_AGE) -> list[Path]:
    """Remove hand-over files older than `max_age`; returns what was removed."""
    now = time.time() if now is None else now
    removed = []
    try:
        entries = list(os.scandir(run_dir))
    except FileNotFoundError:
        return []
    for entry in entries:
        try:
            if entry.name.endswith(SUFFIX) and now - entry.stat(follow_symlinks=False).st_mtime \
                    > max_age:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except FileNotFoundError:
            continue  # its launcher took it meanwhile
    return removed
