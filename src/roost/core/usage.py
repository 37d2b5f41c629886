"""Token usage from the CLIs' own session files (issue 23 part 4). Pure: complete lines of a
file and the reader's remembered state in, usage per (day, model) and the new state out;
ops/usage.py reads only the bytes appended since its last look and stores the totals.

Four counts, named the way prices are (core/prices.py): `input` (fresh input, billed at the
input price), `output`, `cache_write` and `cache_read`. Each CLI writes them differently:

- Claude Code: an `assistant` line's `message.usage`, repeated on each line of one message (one
  per content block); counted once per `message.id` + `requestId`, keeping the largest
  `output_tokens` seen. `<synthetic>` messages (roost's own, errors) carry no real usage.
- Codex: `event_msg` lines of type `token_count`, whose `info.total_token_usage` is cumulative:
  the difference from the last one counts. `cached_input_tokens` is part of `input_tokens`. The
  model is the last `turn_context`'s.
- Gemini CLI: each `gemini` message line's `tokens`; a message written again (same `id`) counts
  only what grew. `cached` is part of `input`; `thoughts` are billed as output and `tool`
  (tool-use prompt tokens) as input. `$set` lines restate messages already written: skipped.

>>> line = '{"type":"assistant","requestId":"r1","timestamp":"2026-01-02T03:04:05Z",'
>>> line += '"message":{"id":"m1","model":"claude-x","usage":{"input_tokens":3,"output_tokens":2}}}'
>>> found, state = read("claude", [line, line], {})
>>> found
{('2026-01-02', 'claude-x'): Tokens(input=3, output=2, cache_write=0, cache_read=0)}
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

REMEMBERED = 256  # message keys kept to add only what grew: a CLI rewrites recent messages only
UNKNOWN_MODEL = "?"
State = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Tokens:
    input: int = 0
    output: int = 0
    cache_write: int = 0
    cache_read: int = 0

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(*(a + b for a, b in zip(self.as_tuple(), other.as_tuple(), strict=True)))

    def as_tuple(self) -> tuple[int, int, int, int]:
        return (self.input, self.output, self.cache_write, self.cache_read)

    @property
    def total(self) -> int:
        return sum(self.as_tuple())


Found = dict[tuple[str, str], Tokens]  # (UTC day "YYYY-MM-DD", model) -> tokens


def read(provider: str, lines: Iterable[str], state: Mapping[str, Any]) -> tuple[Found, State]:
    """The usage in `lines` (complete lines appended to the file since the last read) and the
    state the next read starts from. A provider without usage records finds nothing."""
    reader = READERS.get(provider)
    new: State = json.loads(json.dumps(dict(state)))  # a deep copy: the caller's stays as it was
    found: Found = {}
    if reader is None:
        return found, new
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # not JSON: nothing of ours
        if isinstance(entry, dict):
            for day_model, tokens in reader(entry, new):
                if tokens.total:
                    found[day_model] = found.get(day_model, Tokens()) + tokens
    return found, new


# The most tokens one record may count for one field: no model reads or writes more in one
# message. A larger number is another program's garbage (a transcript holding 10**30 made every
# later sum overflow SQLite's integers): it counts as nothing.
MAX_TOKENS = 10**9


def _int(value: object) -> int:
    """A token count as recorded: a positive int up to MAX_TOKENS, else 0.

    >>> _int(12), _int(10**30), _int(-3), _int(True), _int("7"), _int(1.5)
    (12, 0, 0, 0, 0, 0)
    """
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_TOKENS:
        return value
    return 0


def _day(entry: Mapping[str, Any]) -> str:
    stamp = entry.get("timestamp")
    return stamp[:10] if isinstance(stamp, str) and len(stamp) >= 10 else "unknown"


def _grown(state: State, key: str, now: Tokens) -> Tokens:
    """What `now` adds over what was already counted for message `key` (each count only ever
    grows: a later copy of a message never takes tokens back), remembering the largest."""
    seen: dict[str, list[int]] = state.setdefault("seen", {})
    before = seen.pop(key, [0, 0, 0, 0])
    kept = [max(a, b) for a, b in zip(before, now.as_tuple(), strict=True)]
    seen[key] = kept  # re-inserted: the newest key last
    while len(seen) > REMEMBERED:
        del seen[next(iter(seen))]
    return Tokens(*(k - b for k, b in zip(kept, before, strict=True)))


def _claude(entry: dict[str, Any], state: State) -> list[tuple[tuple[str, str], Tokens]]:
    message = entry.get("message")
    if entry.get("type") != "assistant" or not isinstance(message, dict):
        return []
    usage, model = message.get("usage"), message.get("model")
    if not isinstance(usage, dict) or model == "<synthetic>":
        return []
    tokens = Tokens(
        _int(usage.get("input_tokens")),
        _int(usage.get("output_tokens")),
        _int(usage.get("cache_creation_input_tokens")),
        _int(usage.get("cache_read_input_tokens")),
    )
    key = f"{message.get('id')}:{entry.get('requestId')}"
    grown = _grown(state, key, tokens) if message.get("id") else tokens
    return [((_day(entry), str(model or UNKNOWN_MODEL)), grown)]


_CODEX_FIELDS = ("input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens")


def _codex(entry: dict[str, Any], state: State) -> list[tuple[tuple[str, str], Tokens]]:
    payload = entry.get("payload")
    if not isinstance(payload, dict):
        return []
    if entry.get("type") == "turn_context" and isinstance(payload.get("model"), str):
        state["model"] = payload["model"]
        return []
    info = payload.get("info")
    if entry.get("type") != "event_msg" or payload.get("type") != "token_count":
        return []
    total = info.get("total_token_usage") if isinstance(info, dict) else None
    if not isinstance(total, dict):
        return []  # `info` is null before the first answer
    now = [_int(total.get(f)) for f in _CODEX_FIELDS]
    before = state.get("total", [0, 0, 0, 0])
    if any(n < b for n, b in zip(now, before, strict=True)):
        before = [0, 0, 0, 0]  # the counts started again (a new conversation in the file)
    state["total"] = now
    fresh, cached, written, out = (n - b for n, b in zip(now, before, strict=True))
    tokens = Tokens(max(0, fresh - cached - written), out, written, cached)
    return [((_day(entry), str(state.get("model") or UNKNOWN_MODEL)), tokens)]


def _gemini(entry: dict[str, Any], state: State) -> list[tuple[tuple[str, str], Tokens]]:
    tokens = entry.get("tokens")
    if entry.get("type") != "gemini" or not isinstance(tokens, dict):
        return []
    cached = _int(tokens.get("cached"))
    now = Tokens(
        max(0, _int(tokens.get("input")) - cached) + _int(tokens.get("tool")),
        _int(tokens.get("output")) + _int(tokens.get("thoughts")),
        0,
        cached,
    )
    key = entry.get("id")
    grown = _grown(state, str(key), now) if key else now
    return [((_day(entry), str(entry.get("model") or UNKNOWN_MODEL)), grown)]


READERS = {"claude": _claude, "codex": _codex, "gemini": _gemini}


# ---- reports (roost usage, ls --json) -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Line:
    """One row of a usage report: whose (an agent's name, a tab's, a tree's root's), which
    day and model, the tokens and their estimated cost in dollars (None: no price known)."""

    who: str
    day: str
    model: str
    tokens: Tokens
    cost: float | None


def summed(lines: Iterable[Line]) -> tuple[Tokens, float | None, bool]:
    """The tokens and estimated cost of `lines` in all, and whether some had no price (their
    cost is left out of the sum: the sum is then a lower bound)."""
    tokens, cost, unpriced = Tokens(), 0.0, False
    for line in lines:
        tokens += line.tokens
        if line.cost is None:
            unpriced = True
        else:
            cost += line.cost
    return tokens, cost, unpriced


def dollars(cost: float | None, unpriced: bool = False) -> str:
    """An estimated cost as a person reads it: "~$1.23", "?" when unknown, "≥~$1.23" when a
    part of it had no price."""
    if cost is None or (unpriced and not cost):
        return "?"
    return f"{'≥' if unpriced else ''}~${cost:,.2f}"


def count(n: int) -> str:
    """Tokens, short: 950, 12.3k, 4.56M."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.2f}M"


def table(lines: list[Line], taken: str) -> str:
    """`roost usage`'s table: a row per who, day and model, then the total, and what the cost
    is: an estimate from a dated price table."""
    head = ("WHO", "DAY", "MODEL", "INPUT", "OUTPUT", "CACHE-W", "CACHE-R", "COST (EST.)")
    body = [
        (ln.who, ln.day, ln.model, *(str(n) for n in ln.tokens.as_tuple()), dollars(ln.cost))
        for ln in lines
    ]
    tokens, cost, unpriced = summed(lines)
    body.append(("total", "", "", *(str(n) for n in tokens.as_tuple()), dollars(cost, unpriced)))
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    out = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in [head, *body]
    ]
    out.append(
        f"costs are estimates from roost's price table of {taken} (per million tokens; "
        '[prices."MODEL"] in config.toml overrides); "?": no price for that model'
    )
    return "\n".join(out) + "\n"


def as_json(lines: list[Line], taken: str) -> dict[str, object]:
    tokens, cost, unpriced = summed(lines)
    return {
        "estimate": True,
        "prices_taken": taken,
        "rows": [
            {
                "who": ln.who,
                "day": ln.day,
                "model": ln.model,
                **totals_json(ln.tokens),
                "cost_usd": None if ln.cost is None else round(ln.cost, 6),
            }
            for ln in lines
        ],
        "total": {
            **totals_json(tokens),
            "cost_usd": None if unpriced and not cost else round(cost or 0.0, 6),
            "cost_incomplete": unpriced,
        },
    }


def totals_json(t: Tokens) -> dict[str, int]:
    return {
        "input": t.input,
        "output": t.output,
        "cache_write": t.cache_write,
        "cache_read": t.cache_read,
        "total": t.total,
    }
