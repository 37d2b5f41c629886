"""The real Gemini CLI for tests: a pinned install from npm, and the pieces to run it offline.

Run as a script to install (idempotently) and print the path of the ``gemini`` executable:

    python tests/real_gemini.py            # -> /.../gemini-cli/0.61.0/node_modules/.bin/gemini

The install lives in ``$ROOST_TEST_CACHE/gemini-cli/<version>`` (default: ``tests/.cache``,
which is gitignored), built aside and renamed into place under a lock, like real_claude.py's.

Offline set-up (checked on 0.61.0): ``GOOGLE_GEMINI_BASE_URL`` points it at
tests/gemini_stub.py, any ``GEMINI_API_KEY`` does, and ``~/.gemini/settings.json`` picks the API
key (``security.auth.selectedType``), skips the folder-trust dialog (``security.folderTrust``)
and turns off what would reach the network (usage statistics, update checks).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from cli_install import cache_root, npm_install, runs_as

PINNED_VERSION = "0.61.0"
PACKAGE = "@google/gemini-cli"
DUMMY_API_KEY = "roost-test-gemini-key"


def install_dir(version: str = PINNED_VERSION) -> Path:
    return cache_root() / "gemini-cli" / version


def install_gemini(version: str = PINNED_VERSION) -> Path:
    """Install ``@google/gemini-cli@version`` (once) and return its ``gemini`` executable."""

    def find(root: Path) -> Path | None:
        binary = root / "node_modules" / ".bin" / "gemini"
        return binary if runs_as(binary, version) else None

    return npm_install(PACKAGE, version, install_dir(version), find)


def prepare_home(home: Path) -> Path:
    """Write ``home/.gemini/settings.json`` for an offline run; returns its path."""
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    }
    path = home / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2))
    return path


def gemini_env(
    base: Mapping[str, str], home: Path, base_url: str, api_key: str = DUMMY_API_KEY
) -> dict[str, str]:
    """The environment for an offline Gemini CLI run against the stand-in. Without CI and
    GITHUB_ACTIONS: Gemini CLI 0.61.0 runs headless when either is "true" (a CI machine's
    environment would make every interactive agent exit 42 at once; docs/PROVIDERS.md)."""
    env = {
        k: v
        for k, v in base.items()
        if not k.startswith(("TMUX", "GEMINI", "GOOGLE", "CLOUDSDK"))
        and k not in ("CI", "GITHUB_ACTIONS")
    }
    env.update(
        HOME=str(home),
        GEMINI_API_KEY=api_key,
        GOOGLE_GEMINI_BASE_URL=base_url,
        TERM="xterm-256color",
        LANG="C.UTF-8",
    )
    return env


def chat_file(home: Path, session_id: str) -> Path | None:
    """A session's chat file, found by its id alone (the test's view, not roost's)."""
    found = sorted((home / ".gemini" / "tmp").glob(f"*/chats/session-*-{session_id[:8]}.jsonl"))
    return found[0] if found else None


def chat_entries(path: Path | None) -> list[dict[str, object]]:
    if path is None or not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # being written
        if isinstance(entry, dict):
            out.append(entry)
    return out


def said(path: Path | None, kind: str) -> list[str]:
    """The texts of a chat file's messages of one kind ("user" or "gemini")."""
    texts = []
    for entry in chat_entries(path):
        if entry.get("type") != kind:
            continue
        content = entry.get("content")
        if isinstance(content, list):
            texts.append("".join(str(p.get("text", "")) for p in content if isinstance(p, dict)))
        else:
            texts.append(str(content))
    return texts


def main() -> int:
    started = time.monotonic()
    print(install_gemini())
    print(f"({time.monotonic() - started:.1f}s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
