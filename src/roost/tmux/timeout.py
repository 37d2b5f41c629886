"""How long roost waits for one tmux client call. Import-light (os only), so the fast `roost ls`
can use the same limit as the full CLI.

30 s by default: far longer than any healthy tmux call (milliseconds), short enough that a stuck
server ends a command with an error instead of hanging it forever. ROOST_TMUX_TIMEOUT (seconds)
overrides it, e.g. for tests of a tmux that does not answer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

DEFAULT = 30.0
ENV = "ROOST_TMUX_TIMEOUT"


def seconds(environ: Mapping[str, str]) -> float:
    """The limit from the environment; ValueError (with the reason) for a value that is not a
    number of seconds above 0."""
    text = environ.get(ENV, "").strip()
    if not text:
        return DEFAULT
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{ENV} must be a number of seconds above 0 (got {text!r})")
    return value
