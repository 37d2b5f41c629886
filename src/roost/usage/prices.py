"""Estimated cost of token usage: a dated price table shipped with roost, overridable in
config.toml (`[prices."model-name"] input = 3.0` ...). Every figure is US dollars per million
tokens. An estimate only: providers change prices, plans are not billed per token, and a model
roost has no price for costs "?" (None), never a guess.

>>> cost("claude-sonnet-4-5-20250929", Tokens(1_000_000, 0, 0, 0))
3.0
>>> cost("some-new-model", Tokens(10, 0, 0, 0)) is None
True
"""

from __future__ import annotations

from collections.abc import Mapping

from roost.usage.rules import Tokens

TAKEN = "2026-12-05"  # when the figures below were read off the pages named with them
SOURCE = (
    "the providers' public API price pages: platform.claude.com/docs/en/about-claude/pricing "
    "and its model pages, developers.openai.com/api/docs/pricing and its model pages, "
    "ai.google.dev/gemini-api/docs/pricing; cache_write is the 5-minute cache write"
)
KINDS = ("input", "output", "cache_write", "cache_read")

# model name (or the start of one: the longest match wins) -> (input, output, cache_write,
# cache_read) in dollars per million tokens, the standard (not batch, not fast) rate of a prompt
# of ordinary length: a model that charges more past a prompt length (Haiku 5.5 past 100k
# tokens, GPT-6.1 Sol past 272k, Gemini 3.1 Pro past 200k) is estimated low for those turns.
# The pinned CLIs' default models (docs/USAGE.md; tests/test_usage_unit.py checks each has one):
# Claude Code 2.1.332 claude-opus-5-5 (and claude-haiku-5-5 for its small tasks), Codex 0.169.0
# gpt-6.1-sol, Gemini CLI 0.61.0 gemini-3.1-pro-preview (gemini-2.5-pro without preview
# access, gemini-3.5-flash-lite to route), aider 0.86.2 gpt-4o or claude-sonnet-4-5.
SHIPPED: dict[str, tuple[float, float, float, float]] = {
    # platform.claude.com/docs/en/models/<model>/overview and /docs/en/about-claude/pricing
    "claude-opus-5-5": (4.0, 20.0, 5.0, 0.20),
    "claude-opus-5": (5.0, 25.0, 6.25, 0.50),
    "claude-sonnet-5-5": (2.0, 10.0, 2.50, 0.10),  # cache reads cut from $0.20 on 2026-10-07
    "claude-sonnet-5": (2.0, 10.0, 2.50, 0.20),
    "claude-haiku-5-5": (0.10, 0.50, 0.125, 0.01),  # prompts up to 100k tokens (past: 5x)
    "claude-fable-5-1": (10.0, 50.0, 12.50, 0.25),
    "claude-fable-5": (10.0, 50.0, 12.50, 1.0),
    "claude-opus-4-8": (5.0, 25.0, 6.25, 0.50),
    "claude-opus-4-7": (5.0, 25.0, 6.25, 0.50),
    "claude-opus-4-6": (5.0, 25.0, 6.25, 0.50),
    "claude-opus-4-5": (5.0, 25.0, 6.25, 0.50),
    "claude-opus-4": (15.0, 75.0, 18.75, 1.50),
    "claude-sonnet-4": (3.0, 15.0, 3.75, 0.30),
    "claude-3-7-sonnet": (3.0, 15.0, 3.75, 0.30),
    "claude-haiku-4-5": (1.0, 5.0, 1.25, 0.10),
    "claude-3-5-haiku": (0.80, 4.0, 1.0, 0.08),
    # developers.openai.com/api/docs/models/<model> and /api/docs/pricing
    "gpt-6.1-sol": (2.0, 10.0, 2.50, 0.10),
    "gpt-6-sol": (2.0, 10.0, 2.50, 0.20),
    "gpt-5-mini": (0.25, 2.0, 0.25, 0.025),
    "gpt-5-nano": (0.05, 0.40, 0.05, 0.005),
    "gpt-5": (1.25, 10.0, 1.25, 0.125),
    "gpt-4o-mini": (0.15, 0.60, 0.15, 0.075),
    "gpt-4o": (2.50, 10.0, 2.50, 1.25),
    # ai.google.dev/gemini-api/docs/pricing (Gemini writes no cache: cache_write is input's)
    "gemini-3.1-pro-preview": (2.0, 12.0, 2.0, 0.20),
    "gemini-3.5-flash-lite": (0.30, 2.50, 0.30, 0.03),
    "gemini-3.5-flash": (1.50, 9.0, 1.50, 0.15),
    "gemini-3-flash-preview": (0.50, 3.0, 0.50, 0.05),
    "gemini-2.5-pro": (1.25, 10.0, 1.25, 0.125),
    "gemini-2.5-flash-lite": (0.10, 0.40, 0.10, 0.01),
    "gemini-2.5-flash": (0.30, 2.50, 0.30, 0.03),
}

Prices = Mapping[str, tuple[float, float, float, float]]


def table(
    overrides: Mapping[str, Mapping[str, object]] | None = None,
) -> dict[str, tuple[float, ...]]:
    """The shipped table with config.toml's `[prices."model"]` entries over it: an entry keeps
    the figures it does not name from the model's shipped entry (none: 0). A figure that is no
    price (core/settings.py refuses it in the file) is left out here as well.

    >>> table({"m": {"input": 1, "output": float("nan")}})["m"]
    (1.0, 0.0, 0.0, 0.0)
    """
    found: dict[str, tuple[float, ...]] = dict(SHIPPED)
    for model, given in (overrides or {}).items():
        if not isinstance(given, Mapping):
            continue
        base = price_of(model, found) or (0.0, 0.0, 0.0, 0.0)
        found[model] = tuple(
            float(p) if is_price(p := given.get(k)) else b  # type: ignore[arg-type]
            for k, b in zip(KINDS, base, strict=True)
        )
    return found


def is_price(value: object) -> bool:
    """Dollars per million tokens: a number, finite, at least 0 (TOML's inf and nan are not).

    >>> is_price(3), is_price(0.3), is_price(-1), is_price(float("inf")), is_price(True)
    (True, True, False, False, False)
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return value >= 0 and value != float("inf")  # nan >= 0 is False


def price_of(model: str, prices: Mapping[str, tuple[float, ...]]) -> tuple[float, ...] | None:
    """The prices of `model`: its own entry, else the longest entry it starts with up to a
    separator (dated names such as claude-sonnet-4-5-20250929; never gpt-5.5 as gpt-5), with
    a router's provider prefix (aider's openai/gpt-4o) left off.

    >>> [price_of(m, SHIPPED) is not None for m in ("openai/gpt-4o", "gpt-5.5", "gpt-5-codex")]
    [True, False, True]
    """
    for name in (model, model.rsplit("/", 1)[-1]):
        if name in prices:
            return prices[name]
        starts = [k for k in prices if name.startswith(k) and _separated(name[len(k)])]
        if starts:
            return prices[max(starts, key=len)]
    return None


def _separated(after: str) -> bool:
    """Whether a name goes on past an entry's name at a separator (-, @, [, :), not inside
    a version or a word."""
    return not (after.isalnum() or after == ".")


def cost(
    model: str, tokens: Tokens, prices: Mapping[str, tuple[float, ...]] | None = None
) -> float | None:
    """Dollars `tokens` of `model` cost at `prices` (default: the shipped table); None when
    the model has no price."""
    found = price_of(model, SHIPPED if prices is None else prices)
    if found is None:
        return None
    return sum(n * p for n, p in zip(tokens.as_tuple(), found, strict=True)) / 1_000_000
