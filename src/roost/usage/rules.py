"""Token usage from the CLIs' own session files (issue 23 part 4). Pure: complete lines of a
file and the reader's remembered state in, usage per (day, model) and the new state out;
usage/operations.py reads only the bytes appended since its last look and stores the totals.

Four counts, named the way prices are (usage/prices.py): `input` (fresh input, billed at the
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

A fork (`roost fork`) counts its own turns only: its reader starts from the original's state at
the fork point (`fork_point`, issue 35), so the original's history at the head of its file adds
nothing.

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
State = dict[str, object]


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


def read(provider: str, lines: Iterable[str], state: Mapping[str, object]) -> tuple[Found, State]:
    """The usage in `lines` (complete lines appended to the file since the last read) and the
    state the next read starts from. A provider without usage records finds nothing."""
    reader = READERS.get(provider)
    new: State = json.loads(json.dumps(dict(state)))  # a deep copy: the caller's stays as it was
    found: Found = {}
    if reader is None:
        return found, new
    for line in lines:
        if not line.strip():
            continue
        entry = _json(line)
        if not isinstance(entry, dict):  # no JSON object, so no record's line: left out
            skip(new, MALFORMED)
            continue
        for day_model, tokens in reader(entry, new):
            if tokens.total:
                found[day_model] = found.get(day_model, Tokens()) + tokens
        if new.pop(ABSURD, False):
            skip(new, OUT_OF_RANGE)
    return found, new


# ---- lines left out (issue 35): `roost doctor` says how many, per agent, and why -----------
# Counted in the reader's state, so they are stored with the cursor that read them and counted
# once: a line over untrusted.LINE_LIMIT (usage/operations.py), one that is no JSON object, one
# whose token count no model could reach (it counts as 0, the rest of the line as it says).
SKIPPED = "skipped"
TOO_LONG, MALFORMED, OUT_OF_RANGE = "too_long", "malformed", "out_of_range"
ABSURD = "absurd"  # this line held a count out of range (read() turns it into a count)


def skip(state: State, why: str) -> None:
    """Count one line left out of the file (or read with a count out of range) for `why`."""
    counts = state.get(SKIPPED)
    if not isinstance(counts, dict):
        counts = state[SKIPPED] = {}
    counts[why] = int(counts.get(why, 0)) + 1


def skipped(state: object) -> dict[str, int]:
    """The lines a stored state counts as left out, by why (nothing that is not a count).

    >>> skipped({"skipped": {"too_long": 1, "malformed": "x"}}), skipped([])
    ({'too_long': 1}, {})
    """
    found = state.get(SKIPPED) if isinstance(state, dict) else None
    if not isinstance(found, dict):
        return {}
    return {
        why: n
        for why, n in found.items()
        if why in (TOO_LONG, MALFORMED, OUT_OF_RANGE)
        and isinstance(n, int)
        and not isinstance(n, bool)
        and n > 0
    }


def _json(line: str) -> object:
    try:
        return json.loads(line)
    except (ValueError, RecursionError):  # RecursionError: nested past Python's stack
        return None


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


def _count(state: State, value: object) -> int:
    """`_int(value)`, noting in `state` an int out of range (below 0, over MAX_TOKENS): read()
    counts its line for doctor."""
    if isinstance(value, int) and not isinstance(value, bool) and not 0 <= value <= MAX_TOKENS:
        state[ABSURD] = True
    return _int(value)


def _day(entry: Mapping[str, Any]) -> str:
    stamp = entry.get("timestamp")
    return stamp[:10] if isinstance(stamp, str) and len(stamp) >= 10 else "unknown"


def _grown(state: State, key: str, now: Tokens) -> Tokens:
    """What `now` adds over what was already counted for message `key` (each count only ever
    grows: a later copy of a message never takes tokens back), remembering the largest."""
    seen = state.get("seen")
    if not isinstance(seen, dict):
        seen = state["seen"] = {}
    before = seen.pop(key, None)
    if before is None:
        before = _copied(state, key)
    kept = [max(a, b) for a, b in zip(before, now.as_tuple(), strict=True)]
    seen[key] = kept  # re-inserted: the newest key last
    while len(seen) > REMEMBERED and not state.get(RECORDING):
        del seen[next(iter(seen))]
    return Tokens(*(k - b for k, b in zip(kept, before, strict=True)))


# ---- a fork's own turns (issue 35) ---------------------------------------------------------
# A fork's file begins with its original's conversation: Claude Code copies every line (message
# ids kept), Codex restates no line but carries the original's running totals on. Its reader
# starts from the original's state at the fork point, so that history counts once, for the
# original; only what the fork says itself counts for the fork.

RECORDING = "recording"  # the original's whole conversation is being read: every key is kept
COPIED = "copied"  # message key -> counts the original had: the copy at the head of the fork


def fork_point(provider: str, lines: Iterable[str]) -> State:
    """The state a fork's reader starts from: the original's conversation (`lines`, the whole
    file) read as counted already, with every message key it holds, however many.

    >>> line = '{"type":"assistant","requestId":"r1","timestamp":"2026-01-02T03:04:05Z",'
    >>> line += '"message":{"id":"m1","model":"c","usage":{"input_tokens":3,"output_tokens":2}}}'
    >>> start = fork_point("claude", [line])
    >>> read("claude", [line], start)[0]  # the copy of the original's message: nothing new
    {}
    """
    _found, state = read(provider, lines, {RECORDING: True})
    state.pop(RECORDING, None)
    copied = state.pop("seen", None)
    state.pop(SKIPPED, None)  # the original's lines left out: its count, not the fork's
    if copied:
        state[COPIED] = copied
    return state


def _copied(state: State, key: str) -> list[int]:
    """What the original counted for message `key`, when a fork's file still reads the copy
    of its conversation. The fork's own first message ends the copy (the copy comes first):
    the keys left are dropped, the state stays small."""
    copied = state.get(COPIED)
    if not isinstance(copied, dict):
        return [0, 0, 0, 0]
    counts = copied.pop(key, None)
    if counts is None:
        del state[COPIED]
        return [0, 0, 0, 0]
    if not (isinstance(counts, list) and len(counts) == 4 and all(map(_is_count, counts))):
        return [0, 0, 0, 0]
    return counts


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKENS


def _claude(entry: dict[str, object], state: State) -> list[tuple[tuple[str, str], Tokens]]:
    message = entry.get("message")
    if entry.get("type") != "assistant" or not isinstance(message, dict):
        return []
    usage, model = message.get("usage"), message.get("model")
    if not isinstance(usage, dict) or model == "<synthetic>":
        return []
    tokens = Tokens(
        _count(state, usage.get("input_tokens")),
        _count(state, usage.get("output_tokens")),
        _count(state, usage.get("cache_creation_input_tokens")),
        _count(state, usage.get("cache_read_input_tokens")),
    )
    key = f"{message.get('id')}:{entry.get('requestId')}"
    grown = _grown(state, key, tokens) if message.get("id") else tokens
    return [((_day(entry), str(model or UNKNOWN_MODEL)), grown)]


_CODEX_FIELDS = ("input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens")


def _codex(entry: dict[str, object], state: State) -> list[tuple[tuple[str, str], Tokens]]:
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
    now = [_count(state, total.get(f)) for f in _CODEX_FIELDS]
    total = state.get("total")
    before: list[int] = total if isinstance(total, list) else [0, 0, 0, 0]
    if any(n < b for n, b in zip(now, before, strict=True)):
        before = [0, 0, 0, 0]  # the counts started again (a new conversation in the file)
    state["total"] = now
    fresh, cached, written, out = (n - b for n, b in zip(now, before, strict=True))
    tokens = Tokens(max(0, fresh - cached - written), out, written, cached)
    return [((_day(entry), str(state.get("model") or UNKNOWN_MODEL)), tokens)]


def _gemini(entry: dict[str, object], state: State) -> list[tuple[tuple[str, str], Tokens]]:
    tokens = entry.get("tokens")
    if entry.get("type") != "gemini" or not isinstance(tokens, dict):
        return []
    cached = _count(state, tokens.get("cached"))
    now = Tokens(
        max(0, _count(state, tokens.get("input")) - cached) + _count(state, tokens.get("tool")),
        _count(state, tokens.get("output")) + _count(state, tokens.get("thoughts")),
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
