"""Where roost's files and tmux server are. Import-light (os only): `roost ls` starts here."""

from __future__ import annotations

import os
import stat
import sys

TYPE_CHECKING = False  # not typing's: `roost ls` imports this before anything else
if TYPE_CHECKING:
    from collections.abc import Mapping  # (collections costs ~2.5 ms to import)

DEFAULT_SOCKET = "roost"
MAX_FILE = 1 << 20  # bytes: config.toml and tmux.conf are a few KiB; anything bigger is no config


def file_problem(mode: int, size: int, limit: int = MAX_FILE) -> str | None:
    """Why a file with this st_mode and st_size is not one roost reads: only regular files of
    bounded size (a FIFO would hang the reader, /dev/zero never ends)."""
    if not stat.S_ISREG(mode):
        kind = (
            "a FIFO"
            if stat.S_ISFIFO(mode)
            else "a device"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket"
            if stat.S_ISSOCK(mode)
            else "a folder"
            if stat.S_ISDIR(mode)
            else "special"
        )
        return f"is {kind}, not a regular file"
    if size > limit:
        return f"is {size} bytes, more than the {limit} roost reads"
    return None


def read_small(path: str, limit: int = MAX_FILE) -> bytes | None:
    """The bytes of the regular file at `path` (a symlink to one is followed); None when there
    is none. ValueError says why not: never blocks (O_NONBLOCK opens a FIFO at once) and never
    reads more than `limit`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        info = os.fstat(fd)
        problem = file_problem(info.st_mode, info.st_size, limit)
        if problem:
            raise ValueError(f"it {problem}")
        data = os.read(fd, limit + 1)
        while len(data) <= limit and (chunk := os.read(fd, limit + 1 - len(data))):
            data += chunk
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew while read
        raise ValueError(f"it is more than the {limit} bytes roost reads")
    return data


def read_toml(path: str) -> tuple[dict[str, object], str]:
    """The TOML file at `path` as (data, text); ({}, "") when there is none. ValueError says
    why it cannot be read (no small regular file, not UTF-8, not TOML). The one reader of
    config.toml, for the full CLI (system/config.py) and `roost ls`'s fast path alike."""
    raw = read_small(path)  # a FIFO or /dev/zero: refused, not read
    if raw is None:
        return {}, ""
    import tomllib

    text = raw.decode("utf-8")
    return tomllib.loads(text), text


def _valid_config_path(roost_home: str) -> str:
    return os.path.join(roost_home, "run", "config-valid.toml")


def valid_config_text(roost_home: str) -> str | None:
    """The text of config.toml that core/settings.py last found valid, or None: while the file
    still holds it, `roost ls` reads its three keys (core/lsconfig.py) without checking it again
    (defining Settings' sections costs the cold path ~12 ms of CPU)."""
    try:
        raw = read_small(_valid_config_path(roost_home))
    except ValueError:
        return None
    return raw.decode("utf-8", errors="replace") if raw is not None else None


def remember_valid_config(roost_home: str, text: str) -> None:
    """Keep `text` (config.toml, just found valid) under run/ for `valid_config_text`: written
    whole and renamed in place, 0600; skipped when it is already kept or run/ is missing (a
    cache: nothing depends on it being there)."""
    path = _valid_config_path(roost_home)
    if not text or valid_config_text(roost_home) == text:
        return
    temp = f"{path}.{os.getpid()}"
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, text.encode("utf-8"))
        finally:
            os.close(fd)
        os.replace(temp, path)
    except OSError:
        try:
            os.unlink(temp)
        except OSError:
            pass


def roost_home() -> str:
    """$ROOST_HOME, else the platform's user data dir for roost (XDG on Linux)."""
    env = os.environ.get("ROOST_HOME")
    if env:
        return os.path.realpath(os.path.expanduser(env))
    if sys.platform.startswith("linux"):
        base = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
        return os.path.join(base, "roost")
    import platformdirs  # macOS and others: their own conventions

    return str(platformdirs.user_data_dir("roost", appauthor=False))


def socket_name() -> str | None:
    """$ROOST_TMUX_SOCKET or "roost"; None when it is not a plain name."""
    name = os.environ.get("ROOST_TMUX_SOCKET", DEFAULT_SOCKET)
    return name if name and "/" not in name else None


# What finds this roost's runtime besides ROOST_HOME: its tmux socket's name and folder, and
# whether a command may start the service. A `roost mcp` that a CLI starts gets the environment
# that CLI chooses (Codex passes a short allowlist): without these it would act on (and start a
# service on) another tmux server than the roost that launched the agent.
RUNTIME_ENV = ("ROOST_TMUX_SOCKET", "TMUX_TMPDIR", "ROOST_SERVICE_AUTOSTART")


def runtime_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The RUNTIME_ENV variables `environ` sets."""
    return {name: environ[name] for name in RUNTIME_ENV if name in environ}


def tmux_client_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The caller's environment for a tmux client: without $TMUX/$TMUX_PANE (tmux would guess a
    "current" pane from them, maybe on the user's own server) and without roost's agent tags
    (a server started from inside an agent must not carry them, or stopping that agent's
    process tree would stop the server too)."""
    drop = ("TMUX", "TMUX_PANE", "ROOST_AGENT_ID", "ROOST_AGENT_NAME")
    return {k: v for k, v in environ.items() if k not in drop}


def private_tree(home: str) -> bool:
    """Whether ROOST_HOME and its run/, agents/ and locks/ folders are real folders only this
    user can write to (the full check, with the reason and the fix, is config.ensure_private_tree;
    this is its cheap yes/no for `roost ls`'s fast path)."""
    if exposed_folder(home) is not None:
        return False
    uid = os.getuid()
    for folder in (home, *(os.path.join(home, sub) for sub in ("run", "agents", "locks"))):
        try:
            info = os.lstat(folder)
        except FileNotFoundError:
            continue
        except OSError:  # e.g. a home that is a file: not a tree (the full CLI says why)
            return False
        if info.st_uid != uid or info.st_mode & 0o022 or (info.st_mode & 0o170000) == 0o120000:
            return False
    return True


def exposed_folder(path: str) -> tuple[str, int, int] | None:
    """The first folder above `path` in which someone else could rename `path` away and put
    their own in its place (OpenSSH's rule for ~/.ssh): one owned by another user than this one
    or root, or one group or others may write to without the sticky bit (/tmp's, which keeps
    entries to their owners). Its (path, owner, mode), or None. Folders not made yet are skipped:
    roost makes them private."""
    uid = os.getuid()
    folder = os.path.dirname(path)
    while True:
        try:
            info = os.stat(folder)
        except OSError:
            info = None
        if info is not None and (
            info.st_uid not in (0, uid) or (info.st_mode & 0o022 and not info.st_mode & 0o1000)
        ):
            return folder, info.st_uid, info.st_mode
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def tmux_binary(configured: str | None) -> str:
    """The tmux roost runs: config.toml's `[tmux] bin`, else "tmux" on PATH. Every tmux client
    (the fast `roost ls` included) takes it from here, so all of them talk to the same tmux."""
    return configured or "tmux"
