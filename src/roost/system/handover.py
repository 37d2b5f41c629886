"""The launch hand-over: a private file holding an agent's argv and environment (API keys
included) that `python -m roost.launch FILE` reads and deletes before the agent starts.

A secret must not outlive the start: the file is created owner-only and never through a symlink,
removed at once when the start fails, and swept by the next roost command when it is abandoned:
its writer (named in the file name) is gone and a launcher had time to read it, or it is older
than any start can take.

Besides, the environment of an agent's last start is kept in its own folder (ENV_FILE), owner-
only, so that a restart by the supervisor or a wake from the keeper (run by tmux, whose server
holds no secrets) starts the agent as the user last did. It goes with the agent (`roost rm`).
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Mapping
from pathlib import Path

from roost.core.errors import RoostError

MAX_AGE = 60.0  # seconds: far longer than a launcher takes to read its file
ORPHAN_AGE = 15.0  # seconds after which a file whose writer died is abandoned: the launcher
# tmux started before that death has long read it (a launcher starts in well under a second)
SUFFIX = ".json"
ENV_FILE = "env.json"


def write(run_dir: Path, agent_id: str, spec: Mapping[str, object]) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = run_dir / f"{agent_id}-{os.getpid()}-{os.urandom(6).hex()}{SUFFIX}"
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


def sweep(
    run_dir: Path,
    now: float | None = None,
    max_age: float = MAX_AGE,
    orphan_age: float = ORPHAN_AGE,
) -> list[Path]:
    """Remove abandoned hand-over files; returns what was removed."""
    now = time.time() if now is None else now
    removed = []
    try:
        entries = list(os.scandir(run_dir))
    except FileNotFoundError:
        return []
    for entry in entries:
        if not entry.name.endswith(SUFFIX):
            continue
        try:
            age = now - entry.stat(follow_symlinks=False).st_mtime
            if age > max_age or (age > orphan_age and not _alive(writer_of(entry.name))):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except FileNotFoundError:
            continue  # its launcher took it meanwhile
    return removed


def writer_of(file_name: str) -> int | None:
    """The pid of the roost process that wrote a hand-over file (AGENT-PID-RANDOM.json)."""
    parts = file_name[: -len(SUFFIX)].rsplit("-", 2)
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None


def _alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone's process: not ours to judge
    return True


def remember_environment(agent_dir: Path, env: Mapping[str, str]) -> None:
    """Replace the agent's saved start environment, atomically, owner-only, never through a
    symlink (a new file under a random name, then renamed over the old one)."""
    agent_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = agent_dir / f".{ENV_FILE}.{os.urandom(6).hex()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(dict(env), fh)
        os.replace(tmp, agent_dir / ENV_FILE)
    except BaseException:
        discard(tmp)
        raise


def recall_environment(agent_dir: Path) -> dict[str, str] | None:
    """The saved start environment; None when there is none. An environment decides what runs
    (PATH, LD_PRELOAD), so a file that is a symlink, someone else's, open to others or not an
    environment is refused, never used."""
    path = agent_dir / ENV_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise RoostError(
            f"cannot read the saved environment {path}: {exc.strerror}; "
            "wake the agent from a shell (roost wake NAME)"
        ) from None
    with os.fdopen(fd, encoding="utf-8") as fh:
        info = os.fstat(fh.fileno())
        if info.st_uid != os.getuid() or info.st_mode & 0o077 or not stat.S_ISREG(info.st_mode):
            raise RoostError(
                f"refusing the saved environment {path}: not a private file of "
                "this user; remove it and wake the agent from a shell"
            )
        try:
            env = json.load(fh)
        except ValueError:
            env = None
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env.items()
    ):
        raise RoostError(
            f"the saved environment {path} is damaged; remove it and wake the agent from a shell"
        )
    return env
