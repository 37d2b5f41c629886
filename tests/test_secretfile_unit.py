"""A secret in a file of roost's own (the web's tokens, the VAPID key): made once, owner only,
refused when group or others may read it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from roost.system import secretfile


def test_a_secret_is_made_once_owner_only_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "key"
    made = secretfile.read_or_make(path, lambda: b"first")
    assert made == b"first" and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert secretfile.read_or_make(path, lambda: b"second") == b"first"


def test_a_secret_others_may_read_is_refused_and_left(tmp_path: Path) -> None:
    path = tmp_path / "key"
    path.write_bytes(b"kept")
    os.chmod(path, 0o644)
    with pytest.raises(PermissionError, match=r"readable by others .*chmod 600"):
        secretfile.read_or_make(path, lambda: b"new")
    assert path.read_bytes() == b"kept"
