"""The three things `roost ls` reads of config.toml (`[tmux] bin`, `[status.patterns]`,
`[prices]`), taken from the parsed table of a file already found valid. Import-light (no
dataclasses): `roost ls`'s cold path reads them without defining core/settings.py's sixteen
frozen sections (~12 ms of CPU on Python 3.11) while config.toml is the text roost last found
valid (system/locate.py keeps it). core/settings.py builds its Settings with the same functions,
so both read a key alike.

    >>> data = {"tmux": {"bin": "/opt/tmux"}, "prices": {"m": {"input": 3}}}
    >>> tmux_bin(data), prices(data)
    ('/opt/tmux', {'m': {'input': 3.0}})
    >>> patterns({"status": {"patterns": {"codex": {"waiting": ["Allow?"]}}}})
    {'codex': {'waiting': ('Allow?',)}}
    >>> tmux_bin({}), patterns({}), prices({})
    (None, {}, {})
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping


def tmux_bin(data: Mapping[str, Any]) -> str | None:
    """`[tmux] bin`: the tmux roost runs (system/locate.tmux_binary's default when None)."""
    found: str | None = (data.get("tmux") or {}).get("bin")
    return found


def patterns(data: Mapping[str, Any]) -> dict[str, dict[str, tuple[str, ...]]]:
    """`[status.patterns]`: provider -> status kind -> the texts that show it (core/status.py)."""
    given = (data.get("status") or {}).get("patterns") or {}
    return {
        provider: {kind: tuple(texts) for kind, texts in kinds.items()}
        for provider, kinds in given.items()
    }


def prices(data: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """`[prices."model"]`: kind -> dollars per million tokens, over roost's table (usage/prices)."""
    return {
        model: {kind: float(price) for kind, price in given.items()}
        for model, given in (data.get("prices") or {}).items()
    }
