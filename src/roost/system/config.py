"""Where roost keeps things and which executables it runs: environment first, then config file."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from roost.core.errors import RoostError
from roost.core.ids import is_roost_id
from roost.core.present import command
from roost.system import locate

if TYPE_CHECKING:
    from roost.core.settings import Settings


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
        """The agent's own folder. Only for a roost id: `rm` deletes this folder, so a stored
        value of any other shape (`../../victim`) must never name a path."""
        if not is_roost_id(agent_id):
            raise RoostError(
                f"{agent_id!r} is not a roost id (a UUID); refusing to use it as "
                "a folder (the database holds a record roost did not write)",
                code=3,
            )
        return self.home / "agents" / agent_id


def roost_home() -> Path:
    return Path(locate.roost_home())


def paths() -> Paths:
    return Paths(roost_home())


def ensure_private_dir(path: Path) -> Path:
    """Make `path` (0700) if missing, then refuse it unless only this user can write to it."""
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:  # a file, a device, /proc: one line, never a traceback
        why = "it is not a folder" if isinstance(exc, FileExistsError) else exc.strerror
        raise RoostError(
            f"cannot use {path} as a roost folder ({why}); set ROOST_HOME to a folder of your own",
            code=2,
        ) from None
    check_private_dir(path)
    return path


def ensure_private_tree(p: Paths) -> None:
    """ROOST_HOME and the folders roost runs code from (launch specs in run/, hook settings in
    agents/, locks/): someone else who can write there could swap a launch spec between its
    write and its read, or plant a symlink, and run code as this user. Refused, as ssh refuses
    a ~/.ssh others can write to. The folders above it too: someone who may rename the home
    away could put their own in its place."""
    check_ancestors(p.home)
    ensure_private_dir(p.home)
    for folder in (p.run, p.home / "agents", p.locks):
        ensure_private_dir(folder)


def trust_problem(path: Path, st_uid: int, st_mode: int, is_link: bool, my_uid: int) -> str | None:
    """Why a roost folder must not be used, with the fix; None when only its owner, this user,
    can write to it."""
    if is_link:
        return (
            f"{path} is a symlink; roost keeps its files in real folders (remove it: "
            f"{command('rm', str(path))})"
        )
    if st_uid != my_uid:
        return (
            f"{path} belongs to uid {st_uid}, not to you (uid {my_uid}); use a ROOST_HOME "
            "of your own"
        )
    if st_mode & 0o022:
        return (
            f"{path} can be written by others (mode {st_mode & 0o777:o}); fix: "
            f"{command('chmod', 'go-w', str(path))}"
        )
    return None


def check_ancestors(home: Path) -> None:
    exposed = locate.exposed_folder(str(home))
    if exposed is None:
        return
    folder, owner, mode = exposed
    if owner not in (0, os.getuid()):
        why, fix = (
            f"belongs to uid {owner}, who could rename it away",
            "set ROOST_HOME to a folder of your own",
        )
    else:
        why = (
            f"can be written by others (mode {mode & 0o7777:o}, not sticky), who could rename "
            "it away and put their own in its place"
        )
        fix = command("chmod", "go-w", folder, note="or set ROOST_HOME elsewhere")
    raise RoostError(
        f"refusing to use {home}: the folder above it, {folder}, {why}; fix: {fix}", code=2
    )


def check_private_dir(path: Path) -> None:
    info = os.lstat(path)
    problem = trust_problem(
        path, info.st_uid, info.st_mode, stat.S_ISLNK(info.st_mode), os.getuid()
    )
    if problem:
        raise RoostError(f"refusing to use {path}: {problem}", code=2)


def socket_name() -> str:
    name = locate.socket_name()
    if name is None:
        raise RoostError(
            "ROOST_TMUX_SOCKET must be a plain socket name, not "
            f"{os.environ.get('ROOST_TMUX_SOCKET')!r}",
            code=2,
        )
    return name


def load_config(p: Paths) -> Settings:
    """The optional TOML config file, checked and typed: a broken or wrongly typed one is one
    clear error naming the file, the line and the key, never silently ignored and never a
    traceback."""
    from roost.core import settings

    try:
        data, text = locate.read_toml(str(p.config_file))
    except ValueError as exc:  # no small regular file, not UTF-8, not TOML: all ValueErrors
        raise RoostError(f"config {p.config_file}: {exc}; fix or move it aside", code=2) from None
    except OSError as exc:
        raise RoostError(
            f"config {p.config_file}: {exc.strerror or exc}; fix or move it aside", code=2
        ) from None
    try:
        checked = settings.parse(data)
    except settings.Invalid as exc:
        first = exc.problems[0]
        line = settings.line_of(text, first.key)
        where = f" line {line}" if line else ""
        raise RoostError(
            f"config {p.config_file}{where}: {first.key} {first.message}", code=2
        ) from None
    locate.remember_valid_config(str(p.home), text)  # `roost ls` reads it unchecked meanwhile
    return checked
