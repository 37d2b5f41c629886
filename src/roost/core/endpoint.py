"""The shared MCP endpoint's address, as data (pure; ops/mcpendpoint.py and mcp/lazy.py do the
I/O): which ports a roost home's endpoint asks for first, and a recorded URL's port.

The address an agent is launched with must outlive the service that serves it (a stop and a
start, a kill -9, a reboot): a home's endpoint keeps the port it once took for good, and its
first port is one of a few derived from the home's path, below the ports the kernel hands out
for outgoing connections, so no other program's connection takes it by chance (and a client
that retries a closed port there never connects to itself).
"""

from __future__ import annotations

import hashlib
from urllib.parse import urlsplit

# Below Linux's ephemeral ports (32768-60999 by default; macOS's start at 49152), above most
# well-known services.
BAND = (20000, 32768)
TRIES = 8  # ports of the band a home asks for before any free one
STEP = 7919  # a prime: the tries spread over the band


def home_ports(home: str, tries: int = TRIES) -> list[int]:
    """The ports a home's endpoint asks for first, in order: the same for the same home.

    >>> home_ports("/home/me/.roost") == home_ports("/home/me/.roost")
    True
    >>> all(BAND[0] <= p < BAND[1] for p in home_ports("/x"))
    True
    >>> len(set(home_ports("/x"))), home_ports("/x") != home_ports("/y")
    (8, True)
    """
    low, high = BAND
    span = high - low
    start = int.from_bytes(hashlib.sha256(home.encode("utf-8", "surrogateescape")).digest()[:4])
    return [low + (start + i * STEP) % span for i in range(tries)]


def port_of(url: str) -> int | None:
    """The port of a recorded endpoint URL; None when it names none.

    >>> port_of("http://127.0.0.1:20345/mcp"), port_of("http://127.0.0.1/mcp")
    (20345, None)
    """
    try:
        return urlsplit(url).port
    except ValueError:
        return None
