"""Codex's `-c key=value` overrides are TOML (issue 18 item 15): a ROOST_HOME outside the
Basic Multilingual Plane became JSON's surrogate-pair escapes (`\\ud83d\\ude00`), which TOML,
codex's parser as Python's, rejects. Every value must parse back to what it says."""

from __future__ import annotations

import tomllib

import pytest

from roost.providers.mcpwire import server_entry, toml_value

HOMES = [
    "/home/u/.local/share/roost",
    "/tmp/r\U0001f600ost",
    '/tmp/\u00e9t\u00e9 "q" \\b',
    "/tmp/ctl\x01\x7f\tx",
    "/tmp/\U00010348\U0001f9ea",
]


@pytest.mark.parametrize("home", HOMES)
def test_every_override_value_parses_as_toml_to_what_it_says(home: str) -> None:
    entry = server_entry(home, "0f0e0d0c-0000-4000-8000-000000000001")
    for key in ("command", "args", "env"):
        parsed = tomllib.loads(f"v = {toml_value(entry[key])}")["v"]
        assert parsed == entry[key], key
