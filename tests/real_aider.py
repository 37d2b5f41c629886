"""The real Aider for tests: a pinned install from PyPI in a venv of its own, and the pieces to
run it offline.

Run as a script to install (idempotently) and print the path of the ``aider`` executable:

    python tests/real_aider.py             # -> /.../aider/0.86.2/bin/aider

The venv lives in ``$ROOST_TEST_CACHE/aider/<version>`` (default: ``tests/.cache``, gitignored):
aider-chat pins hundreds of packages that must not meet roost's own.

Offline set-up (checked on 0.86.2): ``~/.aider.conf.yml`` names the model and
``openai-api-base`` (tests/chat_completions_stub.py), any ``OPENAI_API_KEY`` does; analytics,
update checks, release notes, model warnings and git are off. Aider and litellm fetch model
prices from GitHub at start: ``LITELLM_LOCAL_MODEL_COST_MAP`` keeps litellm on its bundled copy,
and that copy seeded as aider's day-old-at-most cache keeps aider from fetching.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from cli_install import cache_root, venv_install

PINNED_VERSION = "0.86.2"
REQUIREMENT = f"aider-chat=={PINNED_VERSION}"
DUMMY_API_KEY = "sk-roost-test-aider-key"
MODEL = "gpt-4o"


def install_dir(version: str = PINNED_VERSION) -> Path:
    return cache_root() / "aider" / version


def install_aider() -> Path:
    """Install aider-chat (once) and return its ``aider`` executable."""
    return venv_install(REQUIREMENT, PINNED_VERSION, install_dir(), "bin/aider")


def prepare_home(home: Path, base_url: str, aider: Path) -> Path:
    """Write ``home/.aider.conf.yml`` for an offline run (and seed aider's model-price cache
    from the install's litellm); returns the config's path."""
    config = home / ".aider.conf.yml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        f"model: {MODEL}\n"
        f"openai-api-base: {base_url}/v1\n"
        "analytics-disable: true\n"
        "check-update: false\n"
        "show-release-notes: false\n"
        "show-model-warnings: false\n"
        "git: false\n"
    )
    bundled = next(
        aider.parent.parent.glob(
            "lib/python*/site-packages/litellm/model_prices_and_context_window_backup.json"
        )
    )
    cache = home / ".aider" / "caches" / "model_prices_and_context_window.json"
    cache.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(bundled, cache)
    return config


def aider_env(base: Mapping[str, str], home: Path, api_key: str = DUMMY_API_KEY) -> dict[str, str]:
    """The environment for an offline aider run against the stand-in."""
    env = {
        k: v
        for k, v in base.items()
        if not k.startswith(("TMUX", "OPENAI", "AIDER", "ANTHROPIC", "LITELLM"))
    }
    env.update(
        HOME=str(home),
        OPENAI_API_KEY=api_key,
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        TERM="xterm-256color",
        LANG="C.UTF-8",
    )
    return env


def prompts_and_replies(history: Path) -> tuple[list[str], str]:
    """The ``#### `` prompts of a chat history, and its whole text."""
    text = history.read_text() if history.exists() else ""
    return [line[5:].rstrip() for line in text.splitlines() if line.startswith("#### ")], text


def main() -> int:
    started = time.monotonic()
    print(install_aider())
    print(f"({time.monotonic() - started:.1f}s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
