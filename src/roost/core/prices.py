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

from roost.core.usage import Tokens

TAKEN = "2025-11"  # when the figures below were copied
SOURCE = (
    "the providers' public API price pages (anthropic.com/pricing, openai.com/api/pricing, "
    "ai.google.dev/gemini-api/docs/pricing); cache_write is the 5-minute cache write"
)
KINDS = ("input", "output", "cache_write", "cache_read")

# model name (or the start of one: the longest match wins) -> (input, output, cache_write,
# cache_read) in dollars per million tokens.
SHIPPED: dict[str, tuple[float, float, float, float]] = {
    "claude-opus-4-5": (5.0, 25.0, 6.25, 0.50),
    "claude-opus-4": (15.0, 75.0, 18.75, 1.50),
    "claude-sonnet-4": (3.0, 15.0, 3.75, 0.30),
    "claude-3-7-sonnet": (3.0, 15.0, 3.75, 0.30),
    "claude-haiku-4-5": (1.0, 5.0, 1.25, 0.10),
    "claude-3-5-haiku": (0.80, 4.0, 1.0, 0.08),
    "gpt-5-mini": (0.25, 2.0, 0.25, 0.025),
    "gpt-5-nano": (0.05, 0.40, 0.05, 0.005),
    "gpt-5": (1.25, 10.0, 1.25, 0.125),
    "gemini-2.5-pro": (1.25, 10.0, 1.25, 0.125),
    "gemini-2.5-flash-lite": (0.10, 0.40, 0.10, 0.01),
    "gemini-2.5-flash": (0.30, 2.50, 0.30, 0.03),
}

Prices = Mapping[str, tuple[float, float, float, float]]


def table(
    overrides: Mapping[str, Mapping[str, object]] | None = None,
) -> dict[str, tuple[float, ...]]:
    """The shipped table with config.toml's `[prices."model"]` entries over it: an entry keeps
    the figures it does not name from the model's shipped entry (none: 0)."""
    found: dict[str, tuple[float, ...]] = dict(SHIPPED)
    for model, given in (overrides or {}).items():
        base = price_of(model, found) or (0.0, 0.0, 0.0, 0.0)
        found[model] = tuple(
            float(given[k]) if isinstance(given.get(k), int | float) else b  # type: ignore[arg-type]
            for k, b in zip(KINDS, base, strict=True)
        )
    return found


def price_of(model: str, prices: Mapping[str, tuple[float, ...]]) -> tuple[float, ...] | None:
    """The prices of `model`: its own entry, else the longest entry it starts with (dated
    names such as claude-sonnet-4-5-20250929)."""
    if model in prices:
        return prices[model]
    starts = [name for name in prices if model.startswith(name)]
    return prices[max(starts, key=len)] if starts else None


def cost(
    model: str, tokens: Tokens, prices: Mapping[str, tuple[float, ...]] | None = None
) -> float | None:
    """Dollars `tokens` of `model` cost at `prices` (default: the shipped table); None when
    the model has no price."""
    found = price_of(model, SHIPPED if prices is None else prices)
    if found is None:
        return None
    return sum(n * p for n, p in zip(tokens.as_tuple(), found, strict=True)) / 1_000_000
