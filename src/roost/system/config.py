"""Where roost keeps things and which executables it runs: environment first, then config file."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roost.system import locate
from roost.core.errors import RoostError


@dataclass(frozen=True, slots=True)
class Paths:
    home: Path  # ROOST_HOME

    @property
    def db(self) -> Path:
        return self.home / "roost.db"

    @property
    def config_file(self) -> Path:
        return self.home / "config.toml"

    @property
    def locks(self) -> Path:
        return self.home / "locks"

    @property
    def run(self) -> Path:
        """Short-lived hand-over files (the environment for a launch); private to the user."""
        return self.home / "run"

    def agent_dir(self, agent_id: str) -> Path:
        return self.home / "agents" / agent_id


def roost_home() -> Path:
    return Path(locate.roost_home())


def paths() -> Paths:
    return Paths(roost_home())


def ensure_private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def socket_name() -> str:
    name = locate.socket_name()
    if name is None:
        raise RoostError("ROOST_TMUX_SOCKET must be a plain socket name, not "
                         f"{os.environ.get('ROOST_TMUX_SOCKET')!r}", code=2)
    return name


def load_config(p: Paths) -> dict[str, Any]:
    """The optional TOML config file; a broken one is an error, never silently ignored."""
    if not p.config_file.exists():
        return {}
    import tomllib

    try:
        with p.config_file.open("rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise RoostError(f"cannot read config {p.config_file}: {exc}", code=2) from exc
