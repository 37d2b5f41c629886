"""The real Codex CLI for tests: a pinned install from npm, and the pieces to run it offline.

Run as a script to install (idempotently), build the daemon's CODEX_HOME template
(:func:`daemon_template`) and print the path of the ``codex`` executable:

    python tests/real_codex.py            # -> /.../codex/0.169.0/node_modules/.bin/codex

The install lives in ``$ROOST_TEST_CACHE/codex/<version>`` (default: ``tests/.cache``, which is
gitignored). The package is a Node launcher (``bin/codex.js``) plus its native binary in a
per-platform optional dependency (``@openai/codex-linux-x64``); the launcher execs the binary, so
a running codex is ``node .../codex.js`` with one ``codex`` child.

What a test needs around the CLI, with no roost in it:

* :func:`prepare_codex_home`: ``$CODEX_HOME/config.toml`` with a custom model provider that
  points at tests/openai_responses_stub.py (``wire_api = "responses"``, ``env_key``,
  ``supports_websockets = false``) and each cwd trusted, so codex starts at its prompt;
* :func:`codex_env`: the environment for it (a temp HOME, CODEX_HOME, the dummy key);
* :func:`daemon_home`: a CODEX_HOME that already holds codex's ``packages/`` (the ~400 MB copy
  of itself that codex makes for its shared ``app-server --managed-daemon`` at the first start
  without ``--no-daemon``): built once in the cache, hard-linked per test;
* rollout files: :func:`rollouts`, :func:`rollout_meta`, :func:`rollout_texts`;
* the screen cues read off 0.169.0 (:data:`IDLE_CUE`, :data:`BUSY_CUE`, ...).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from cli_install import cache_root, npm_install, runs_as

PINNED_VERSION = "0.169.0"
PACKAGE = "@openai/codex"
DUMMY_API_KEY = "sk-roost-test-codex-0000000000000000"

# -- screen cues, read off 0.169.0 in a 120x40 pane -----------------------------------------------
IDLE_CUE = "? for shortcuts"  # the footer under the composer ("› Ask Codex to do anything")
BUSY_CUE = "esc to interrupt"  # "• Working (3s • esc to interrupt)" while a turn runs
RECONNECTING_CUE = "Reconnecting to server"  # its shared app-server went away


# -- install --------------------------------------------------------------------------------------


def install_dir(version: str = PINNED_VERSION) -> Path:
    return cache_root() / "codex" / version


def install_codex(version: str = PINNED_VERSION) -> Path:
    """Install ``@openai/codex@version`` (once) and return its ``codex`` executable
    (tests/cli_install.py: safe from concurrent test workers)."""

    def find(root: Path) -> Path | None:
        binary = root / "node_modules" / ".bin" / "codex"
        return binary if runs_as(binary, f"codex-cli {version}") else None

    return npm_install(PACKAGE, version, install_dir(version), find)


# -- config ---------------------------------------------------------------------------------------


def _toml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid TOML basic string


def prepare_codex_home(codex_home: Path, base_url: str, cwds: Iterable[Path]) -> Path:
    """Write ``codex_home/config.toml``: the stand-in as the model provider, every cwd trusted
    (no trust dialog), no update check. Returns the file's path."""
    codex_home.mkdir(parents=True, exist_ok=True)
    lines = [
        'model = "stub-model"',
        'model_provider = "local"',
        "check_for_update_on_startup = false",
        "",
        "[model_providers.local]",
        'name = "local stand-in"',
        f"base_url = {_toml_string(base_url.rstrip('/') + '/v1')}",
        'wire_api = "responses"',
        'env_key = "OPENAI_API_KEY"',
        "supports_websockets = false",
        "request_max_retries = 0",
        "stream_max_retries = 0",
    ]
    for cwd in cwds:
        lines += [
            "",
            f"[projects.{_toml_string(str(Path(cwd).resolve()))}]",
            'trust_level = "trusted"',
        ]
    path = codex_home / "config.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def codex_env(
    base: Mapping[str, str], home: Path, codex_home: Path, api_key: str = DUMMY_API_KEY
) -> dict[str, str]:
    """The environment for an offline codex run against the stand-in."""
    env = {
        k: v for k, v in base.items() if not k.startswith(("TMUX", "CODEX", "OPENAI", "RUST_LOG"))
    }
    env.update(
        HOME=str(home),
        CODEX_HOME=str(codex_home),
        OPENAI_API_KEY=api_key,
        TERM="xterm-256color",
        LANG="C.UTF-8",
    )
    return env


# -- the shared daemon's packages ---------------------------------------------------------------

PACKAGES = "packages"
DAEMON_PACKAGE = Path(PACKAGES) / "app-server-daemon"


def _daemon_processes(codex_home: Path) -> list[int]:
    """Pids of the app-server daemon processes that run from ``codex_home``."""
    import psutil

    needle = str(codex_home / PACKAGES)
    found = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        with contextlib.suppress(psutil.Error):
            if any(needle in part for part in proc.info["cmdline"] or ()):
                found.append(proc.info["pid"])
    return found


def stop_daemon(codex: Path, env: Mapping[str, str], codex_home: Path) -> None:
    """Stop the daemon of ``codex_home`` and whatever helper of it outlives the stop."""
    import psutil

    subprocess.run(
        [str(codex), "app-server", "daemon", "stop"],
        env={**env, "CODEX_HOME": str(codex_home)},
        capture_output=True,
        timeout=60,
        check=False,
    )
    procs = []
    for pid in _daemon_processes(codex_home):
        with contextlib.suppress(psutil.Error):
            procs.append(psutil.Process(pid))
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(procs, timeout=5)


def daemon_template(codex: Path, version: str = PINNED_VERSION) -> Path:
    """A CODEX_HOME whose ``packages/`` holds the daemon's copy of codex, built once in the
    cache (``codex app-server daemon start`` makes it, then the daemon is stopped)."""
    target = cache_root() / "codex" / f"{version}-daemon-home"
    if (target / DAEMON_PACKAGE / "current").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{version}-daemon-home.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / DAEMON_PACKAGE / "current").exists():
            return target
        staging = Path(tempfile.mkdtemp(prefix=f".{version}-home-", dir=target.parent))
        try:
            env = codex_env(os.environ, staging / "home", staging)
            proc = subprocess.run(
                [str(codex), "app-server", "daemon", "start"],
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            stop_daemon(codex, env, staging)
            if proc.returncode != 0 or not (staging / DAEMON_PACKAGE / "current").exists():
                raise RuntimeError(
                    f"codex app-server daemon start failed ({proc.returncode}):"
                    f"\n{proc.stdout}\n{proc.stderr}"
                )
            kept = Path(tempfile.mkdtemp(prefix=f".{version}-kept-", dir=target.parent))
            (staging / PACKAGES).rename(kept / PACKAGES)
            _relink_current(kept)
            if target.exists():
                shutil.rmtree(target)
            kept.rename(target)
            _relink_current(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return target


def _relink_current(codex_home: Path) -> None:
    """``packages/app-server-daemon/current`` is an absolute symlink: point it into this home."""
    link = codex_home / DAEMON_PACKAGE / "current"
    if not link.is_symlink():
        return
    release = Path(os.readlink(link)).name
    link.unlink()
    link.symlink_to(codex_home / DAEMON_PACKAGE / "releases" / release)


def daemon_home(codex: Path, codex_home: Path) -> Path:
    """Give ``codex_home`` the daemon's packages from the cached template (hard links: no 400 MB
    copy per test; a plain copy where the cache is on another file system)."""
    template = daemon_template(codex)
    codex_home.mkdir(parents=True, exist_ok=True)
    try:
        shutil.copytree(
            template / PACKAGES, codex_home / PACKAGES, symlinks=True, copy_function=os.link
        )
    except (OSError, shutil.Error):
        shutil.rmtree(codex_home / PACKAGES, ignore_errors=True)
        shutil.copytree(template / PACKAGES, codex_home / PACKAGES, symlinks=True)
    _relink_current(codex_home)
    return codex_home


def start_daemon(codex: Path, env: Mapping[str, str], codex_home: Path) -> int:
    """Start the shared app-server daemon on ``codex_home`` as a user's own codex would, outside
    any agent (own process group); returns its pid."""
    proc = subprocess.run(
        [str(codex), "app-server", "daemon", "start"],
        env={**env, "CODEX_HOME": str(codex_home)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        start_new_session=True,
    )
    for line in proc.stdout.splitlines():
        with contextlib.suppress(ValueError):
            answer = json.loads(line)
            if isinstance(answer, dict) and answer.get("status") == "started":
                return int(answer["pid"])
    raise RuntimeError(
        f"codex app-server daemon start failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    )


# -- rollout files --------------------------------------------------------------------------------


def rollouts(codex_home: Path) -> list[Path]:
    """Every rollout file: ``sessions/YYYY/MM/DD/rollout-<local time>-<id>.jsonl``."""
    return sorted((codex_home / "sessions").glob("*/*/*/rollout-*.jsonl"))


def read_rollout(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text().splitlines():
        with contextlib.suppress(ValueError):
            out.append(json.loads(line))
    return out


def rollout_meta(path: Path) -> dict[str, Any]:
    """Line 1's payload: ``{"id", "cwd", "timestamp", ...}``."""
    first = read_rollout(path)[:1]
    if not first or first[0].get("type") != "session_meta":
        return {}
    payload = first[0].get("payload")
    return payload if isinstance(payload, dict) else {}


def rollout_texts(path: Path, role: str) -> list[str]:
    """The plain texts of the ``role`` messages recorded in a rollout (response items)."""
    texts = []
    for entry in read_rollout(path):
        payload = entry.get("payload")
        if entry.get("type") != "response_item" or not isinstance(payload, dict):
            continue
        if payload.get("type") != "message" or payload.get("role") != role:
            continue
        texts += [
            part.get("text", "") for part in payload.get("content") or [] if isinstance(part, dict)
        ]
    return texts


def rollout_of(codex_home: Path, session_id: str) -> Path | None:
    return next((p for p in rollouts(codex_home) if p.stem.endswith(session_id)), None)


if __name__ == "__main__":  # .ci/run: install, and build the daemon's CODEX_HOME template once
    executable = install_codex()
    daemon_template(executable)
    print(executable)
    sys.exit(0)
