"""Recall (issue 39): indexing speed, index size and query latency over generated transcripts
in each CLI's record format, against grep (or rg) over the same files.

The transcripts: --mb megabytes (default 1000, the issue's size: ~2.5 minutes on the 2-core
test machine, most of it generating; ~490,000 messages, as the records' tool results are
kilobytes long as real ones are) split between Claude Code (50 %),
Codex (25 %), Gemini CLI (15 %) and Aider (10 %) records of ~4 MB each, one agent each,
written where each provider's readers find them (a private HOME, CODEX_HOME and ROOST_HOME in
a temp dir), with the lines each CLI writes (metadata, tool calls and results of 1-6 KB, token
counts, Gemini's rewritten messages). Words follow a Zipf law over a made-up vocabulary of
50,000, so a query word is as selective as a real one.

Measured in one run:
- indexing: `recall.catch_up` in this process, MB of records per CPU second of one core
  (target >= 50);
- size: recall.db (its WAL checkpointed) / the records' bytes (target <= 60 %);
- queries: `recall.search(app, q, limit=20)` (a connect, the FTS5 query, bm25 order,
  snippets) over --queries queries (words of middling rank, two-word ANDs, phrases, prefixes),
  p95 (target <= 100 ms), against `rg -F` (or `grep -rF` when rg is not installed) for the
  same words over the same files, median of --grep-runs (target: p95 <= 1/20 of it).

    .venv/bin/python bench/bench_recall.py [--mb 1000] [--queries 60] [--grep-runs 5] [--json]
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from itertools import accumulate, pairwise
from pathlib import Path

from roost.core.model import Agent
from roost.ops.context import App
from roost.ops.root import open_app
from roost.providers.aider import history_file
from roost.recall import operations as recall

from _common import environ, finish, mb, ms, parser, table

SPEED_TARGET = 50.0  # MB of records per CPU second
SIZE_TARGET = 0.60  # index bytes / record bytes
P95_TARGET = 0.100  # seconds
GREP_RATIO = 1 / 20
FILE_MB = 4
SHARES = {"claude": 0.50, "codex": 0.25, "gemini": 0.15, "aider": 0.10}
SYLLABLES = [a + b for a in "bcdfghklmnprstvz" for b in ("a", "e", "i", "o", "u", "ai", "ou")]


class Words:
    """A made-up vocabulary of 50,000 words drawn by a Zipf law (s = 1.1)."""

    def __init__(self, rng: random.Random, size: int = 50_000) -> None:
        found: dict[str, None] = {}
        while len(found) < size:
            found["".join(rng.choices(SYLLABLES, k=rng.randint(2, 4)))] = None
        self.words = list(found)
        self.cum = list(accumulate(1 / (r + 1) ** 1.1 for r in range(size)))
        self.rng = rng

    def text(self, n: int) -> str:
        return " ".join(self.rng.choices(self.words, cum_weights=self.cum, k=n))


def iso(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


def dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def claude_lines(w: Words, sid: str, cwd: str, at: datetime) -> list[str]:
    """One turn as Claude Code 2.1.332 writes it: the prompt, text, a tool call, its result,
    the answer."""
    rng = w.rng
    meta = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "sessionId": sid,
        "version": "2.1.332",
        "gitBranch": "main",
    }
    usage = {
        "input_tokens": rng.randint(1, 99),
        "cache_creation_input_tokens": 120,
        "cache_read_input_tokens": 24000,
        "cache_creation": {"ephemeral_5m_input_tokens": 120, "ephemeral_1h_input_tokens": 0},
        "output_tokens": rng.randint(5, 900),
        "service_tier": "standard",
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
    }

    def assistant(content: list[dict[str, object]], t: datetime) -> str:
        message = {
            "id": f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": content,
            "stop_reason": None,
            "usage": usage,
        }
        return dumps(
            {
                **meta,
                "type": "assistant",
                "message": message,
                "requestId": f"req_{uuid.uuid4().hex[:20]}",
                "uuid": str(uuid.uuid4()),
                "timestamp": iso(t),
            }
        )

    path = f"{cwd}/src/{w.text(1)}/{w.text(1)}.py"
    tool, read = f"toolu_{uuid.uuid4().hex[:20]}", f"toolu_{uuid.uuid4().hex[:20]}"
    lines = code(w, rng.randint(20, 400))
    numbered = "\n".join(f"{n:>6}\u2192{line}" for n, line in enumerate(lines, 1))
    result = {
        "type": "text",
        "file": {
            "filePath": path,
            "content": "\n".join(lines),
            "numLines": len(lines),
            "startLine": 1,
            "totalLines": len(lines),
        },
    }
    return [
        assistant(
            [{"type": "tool_use", "id": read, "name": "Read", "input": {"file_path": path}}], at
        ),
        dumps(
            {
                **meta,
                "type": "user",
                "uuid": str(uuid.uuid4()),
                "timestamp": iso(at),
                "message": {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": read, "content": numbered}],
                },
                "toolUseResult": result,
            }
        ),
        dumps(
            {
                **meta,
                "type": "user",
                "message": {"role": "user", "content": w.text(rng.randint(15, 80))},
                "uuid": str(uuid.uuid4()),
                "timestamp": iso(at),
            }
        ),
        assistant([{"type": "text", "text": w.text(rng.randint(10, 60))}], at),
        assistant(
            [
                {
                    "type": "tool_use",
                    "id": tool,
                    "name": "Edit",
                    "input": {
                        "file_path": path,
                        "old_string": w.text(12),
                        "new_string": w.text(14),
                    },
                }
            ],
            at,
        ),
        dumps(
            {
                **meta,
                "type": "user",
                "uuid": str(uuid.uuid4()),
                "timestamp": iso(at),
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": tool,
                            "content": "The file has been updated.",
                        }
                    ],
                },
                "toolUseResult": {
                    "filePath": path,
                    "oldString": "x",
                    "newString": "y",
                    "structuredPatch": [{"lines": code(w, 12)}],
                },
            }
        ),
        assistant([{"type": "text", "text": w.text(rng.randint(30, 200))}], at),
    ]


def code(w: Words, n: int) -> list[str]:
    """`n` lines of a source file: indented, a few words and symbols each."""
    rng = w.rng
    return [
        " " * (4 * rng.randint(0, 3)) + w.text(rng.randint(1, 6)).replace(" ", rng.choice("_.( ="))
        for _ in range(n)
    ]


def secrets(rng: random.Random, n: int) -> str:
    """`n` characters of base64, as codex's encrypted reasoning."""
    import base64

    return base64.b64encode(rng.randbytes(n * 3 // 4)).decode()


def codex_lines(w: Words, sid: str, cwd: str, at: datetime) -> list[str]:
    rng = w.rng
    t = iso(at)
    prompt = w.text(rng.randint(15, 80))
    answer = w.text(rng.randint(30, 200))
    args = dumps({"command": ["bash", "-lc", f"sed -n 1,200p src/{w.text(1)}.rs"], "workdir": cwd})
    tokens = {
        "input_tokens": 24000,
        "cached_input_tokens": 20000,
        "output_tokens": 300,
        "reasoning_output_tokens": 0,
        "total_tokens": 24300,
    }
    return [
        dumps(
            {
                "timestamp": t,
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": prompt}],
                },
            }
        ),
        dumps(
            {
                "timestamp": t,
                "type": "event_msg",
                "payload": {
                    "type": "item_completed",
                    "item": {"type": "UserMessage", "content": [{"type": "text", "text": prompt}]},
                },
            }
        ),
        dumps(
            {
                "timestamp": t,
                "type": "response_item",
                "payload": {
                    "type": "function_call",
                    "name": "shell",
                    "arguments": args,
                    "call_id": f"call_{uuid.uuid4().hex[:20]}",
                },
            }
        ),
        dumps(
            {
                "timestamp": t,
                "type": "turn_context",
                "payload": {
                    "cwd": cwd,
                    "approval_policy": "on-request",
                    "model": "gpt-5-codex",
                    "effort": "medium",
                    "sandbox_policy": {"type": "workspace-write", "network_access": False},
                    "summary": "auto",
                },
            }
        ),
        dumps(
            {
                "timestamp": t,
                "type": "response_item",
                "payload": {
                    "type": "reasoning",
                    "summary": [],
                    "encrypted_content": secrets(rng, rng.randint(800, 3000)),
                },
            }
        ),
        dumps(
            {
                "timestamp": t,
                "type": "response_item",
                "payload": {
                    "type": "function_call_output",
                    "call_id": "c",
                    "output": dumps(
                        {
                            "output": "\n".join(code(w, rng.randint(20, 400))),
                            "metadata": {"exit_code": 0, "duration_seconds": 0.1},
                        }
                    ),
                },
            }
        ),
        dumps(
            {
                "timestamp": t,
                "type": "event_msg",
                "payload": {
                    "type": "token_count",
                    "info": {
                        "total_token_usage": tokens,
                        "last_token_usage": tokens,
                        "model_context_window": 258400,
                    },
                    "rate_limits": None,
                },
            }
        ),
        dumps(
            {
                "timestamp": t,
                "type": "event_msg",
                "payload": {
                    "type": "item_completed",
                    "item": {"type": "AgentMessage", "content": [{"type": "Text", "text": answer}]},
                },
            }
        ),
        dumps(
            {
                "timestamp": t,
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": answer}],
                },
            }
        ),
    ]


def gemini_lines(w: Words, sid: str, cwd: str, at: datetime) -> list[str]:
    rng = w.rng
    t = iso(at)
    uid, gid = uuid.uuid4().hex[:12], uuid.uuid4().hex[:12]
    answer = {
        "id": gid,
        "timestamp": t,
        "type": "gemini",
        "content": w.text(rng.randint(30, 200)),
        "thoughts": [
            {"subject": w.text(4), "description": w.text(rng.randint(20, 60)), "timestamp": t}
        ],
        "model": "gemini-2.5-pro",
        "tokens": {
            "input": 24000,
            "output": 300,
            "cached": 0,
            "thoughts": 0,
            "tool": 0,
            "total": 24300,
        },
    }
    call = {
        "id": "c",
        "name": "read_file",
        "args": {"absolute_path": f"{cwd}/{w.text(1)}.ts"},
        "status": "success",
        "timestamp": t,
        "result": [
            {
                "functionResponse": {
                    "id": "c",
                    "name": "read_file",
                    "response": {"output": "\n".join(code(w, rng.randint(20, 300)))},
                }
            }
        ],
    }
    return [
        dumps(
            {
                "id": uid,
                "timestamp": t,
                "type": "user",
                "content": [{"text": w.text(rng.randint(15, 80))}],
            }
        ),
        dumps(answer),
        dumps({**answer, "toolCalls": [call]}),  # written again as it changes
        dumps({"$set": {"lastUpdated": t}}),
    ]


def aider_lines(w: Words, sid: str, cwd: str, at: datetime) -> list[str]:
    rng = w.rng
    prompt = [f"#### {w.text(rng.randint(8, 20))}  " for _ in range(rng.randint(1, 3))]
    answer = [w.text(rng.randint(5, 20)) for _ in range(rng.randint(5, 25))]
    return [
        *prompt,
        "",
        *answer,
        "",
        f"> Applied edit to src/{w.text(1)}.py",
        "> Tokens: 24k sent, 300 received.",
        "",
    ]


MAKERS: dict[str, Callable[[Words, str, str, datetime], list[str]]] = {
    "claude": claude_lines,
    "codex": codex_lines,
    "gemini": gemini_lines,
    "aider": aider_lines,
}


def generate(root: Path, total_mb: int, w: Words) -> tuple[list[Agent], list[Path]]:
    """Records of every CLI, ~FILE_MB each, where each provider finds them; the agents."""
    home, roost_home = root / "user", root / "roost"
    agents: list[Agent] = []
    files: list[Path] = []
    cwd = str(root / "work")
    projects: dict[str, dict[str, str]] = {"projects": {cwd: "work"}}
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "projects.json").write_text(json.dumps(projects))
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for provider, share in SHARES.items():
        count = max(1, round(total_mb * share / FILE_MB))
        for i in range(count):
            sid = str(uuid.uuid4())
            agent = Agent(
                id=str(uuid.uuid4()),
                name=f"{provider}-{i:04d}",
                provider=provider,
                cwd=cwd,
                home="h",
                provider_session_id=None if provider == "aider" else sid,
            )
            at = start + timedelta(days=i)
            if provider == "claude":
                proj = (
                    home / ".claude" / "projects" / "".join(c if c.isalnum() else "-" for c in cwd)
                )
                path = proj / f"{sid}.jsonl"
            elif provider == "codex":
                path = (
                    home
                    / ".codex"
                    / "sessions"
                    / "2026"
                    / "01"
                    / "01"
                    / f"rollout-2026-01-01T00-00-00-{sid}.jsonl"
                )
            elif provider == "gemini":
                path = (
                    home
                    / ".gemini"
                    / "tmp"
                    / "work"
                    / "chats"
                    / f"session-2026-01-01T00-00-{sid[:8]}.jsonl"
                )
            else:
                path = history_file(roost_home, agent)
            path.parent.mkdir(parents=True, exist_ok=True)
            written = 0
            with path.open("w", encoding="utf-8") as fh:
                head = {
                    "claude": None,
                    "aider": f"\n# aider chat started at {at:%Y-%m-%d %H:%M:%S}\n",
                    "codex": dumps(
                        {
                            "timestamp": iso(at),
                            "type": "session_meta",
                            "payload": {"id": sid, "cwd": cwd, "cli_version": "0.169.0"},
                        }
                    )
                    + "\n",
                    "gemini": dumps(
                        {"sessionId": sid, "projectHash": "x", "startTime": iso(at), "kind": "main"}
                    )
                    + "\n",
                }[provider]
                if head:
                    written += fh.write(head)
                while written < FILE_MB << 20:
                    at += timedelta(seconds=37)
                    written += fh.write("\n".join(MAKERS[provider](w, sid, cwd, at)) + "\n")
            agents.append(agent)
            files.append(path)
    return agents, files


def sample(app: App, agent: Agent) -> list[str]:
    """Prompts and answers of an agent's first turns, as the index holds them."""
    found = recall.turns(app, agent.name, 1, context=5)
    return [m.text for t in found for m in t.messages if m.role in ("user", "agent")]


def grep_argv(word: str, roots: list[Path]) -> list[str]:
    rg = shutil.which("rg")
    if rg:
        return [rg, "-F", "--no-messages", "-c", word, *map(str, roots)]
    return ["grep", "-rF", "-c", word, *map(str, roots)]


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--mb", type=int, default=1000, help="megabytes of records")
    p.add_argument("--queries", type=int, default=60)
    p.add_argument("--grep-runs", type=int, default=5)
    p.add_argument(
        "--keep",
        type=Path,
        help="build the records and the index here (emptied first) and keep them",
    )
    opts = p.parse_args()
    rng = random.Random(39)
    words = Words(rng)
    if opts.keep is not None:
        shutil.rmtree(opts.keep, ignore_errors=True)
    root = opts.keep or Path(tempfile.mkdtemp(prefix="rb-recall-", dir="/tmp"))
    env = {
        **os.environ,
        "HOME": str(root / "user"),
        "ROOST_HOME": str(root / "roost"),
        "CODEX_HOME": str(root / "user" / ".codex"),
        "ROOST_SERVICE_AUTOSTART": "0",
        "ROOST_TMUX_SOCKET": f"rb-{uuid.uuid4().hex[:8]}",
    }
    try:
        t0 = time.perf_counter()
        agents, files = generate(root, opts.mb, words)
        generated = time.perf_counter() - t0
        size = sum(f.stat().st_size for f in files)
        with environ(env):
            app = open_app()
            for a in agents:
                app.store.insert(a)
                if a.provider_session_id:
                    app.store.set_provider_session_id(a.id, a.provider_session_id, "spawn")
            cpu0, wall0 = time.process_time(), time.perf_counter()
            done = recall.catch_up(app)
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
            index = recall.index_path(app)
            conn = sqlite3.connect(index)
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.close()
            index_bytes = index.stat().st_size
            said = [h for a in agents[:: max(1, len(agents) // 20)] for h in sample(app, a)]
            queries = pick_queries(words, rng, opts.queries, said)
            for q in queries[:3]:
                recall.search(app, q)  # warm: page cache
            times, hits = [], []
            for q in queries:
                s = time.perf_counter()
                hits.append(len(recall.search(app, q, limit=20)))
                times.append(time.perf_counter() - s)
        roots = [root / "user", root / "roost" / "agents"]
        grep_words = [q for q in queries if q.isalpha()][: opts.grep_runs]
        subprocess.run(grep_argv(grep_words[0], roots), capture_output=True)  # warm
        greps = []
        for word in grep_words:
            s = time.perf_counter()
            subprocess.run(grep_argv(word, roots), capture_output=True)
            greps.append(time.perf_counter() - s)
    finally:
        if opts.keep is None:
            shutil.rmtree(root, ignore_errors=True)

    speed = size / 1e6 / cpu
    ratio = index_bytes / size
    p95 = statistics.quantiles(times, n=20, method="inclusive")[18]
    grep_median = statistics.median(greps)
    ok = (
        speed >= SPEED_TARGET
        and ratio <= SIZE_TARGET
        and p95 <= P95_TARGET
        and p95 <= GREP_RATIO * grep_median
    )
    tool = "rg" if shutil.which("rg") else "grep -rF"
    human = "\n".join(
        [
            f"recall over {mb(size)} MiB of records ({len(files)} files: "
            + ", ".join(f"{p} {sum(a.provider == p for a in agents)}" for p in SHARES)
            + f"), {done.messages} messages; generated in {generated:.0f} s\n",
            table(
                [
                    ("measure", "value", "target"),
                    ("indexing, MB per CPU second", f"{speed:.1f}", f">= {SPEED_TARGET:g}"),
                    ("indexing, wall seconds", f"{wall:.1f}", ""),
                    ("index / records", f"{ratio:.1%}", f"<= {SIZE_TARGET:.0%}"),
                    ("query median (ms)", ms(statistics.median(times)), ""),
                    ("query p95 (ms)", ms(p95), f"<= {ms(P95_TARGET)}"),
                    (f"{tool} median (ms)", ms(grep_median), ""),
                    (f"query p95 / {tool}", f"{p95 / grep_median:.4f}", f"<= {GREP_RATIO:g}"),
                ]
            ),
            f"\nqueries: {len(queries)} ({', '.join(queries[:6])}, ...), hits per query median "
            f"{statistics.median(hits):g}",
        ]
    )
    results = {
        "mb": size / 1e6,
        "files": len(files),
        "messages": done.messages,
        "index_mb_per_cpu_s": speed,
        "index_wall_s": wall,
        "index_bytes": index_bytes,
        "size_ratio": ratio,
        "query_p95_s": p95,
        "query_median_s": statistics.median(times),
        "query_samples": times,
        "grep_tool": tool,
        "grep_median_s": grep_median,
        "grep_samples": greps,
        "queries": queries,
    }
    return finish("recall", results, human, ok, opts.json)


def pick_queries(words: Words, rng: random.Random, n: int, said: list[str]) -> list[str]:
    """What a person types: a word of middling rank (500-20,000: selective, as their words
    are), two such words (AND), a phrase the conversations hold (two adjacent words of rank
    100 or more from a message said), a prefix (a middling word's first five letters)."""
    middling = words.words[500:20_000]
    rank = {w: r for r, w in enumerate(words.words)}
    found: list[str] = []
    for i in range(n):
        kind = i % 4
        if kind == 0:
            found.append(rng.choice(middling))
        elif kind == 1:
            found.append(f"{rng.choice(words.words[100:5000])} {rng.choice(words.words[100:5000])}")
        elif kind == 2:
            found.append(phrase(rng, said, rank))
        else:
            found.append(rng.choice([w for w in middling if len(w) > 6])[:5] + "*")
    return found


def phrase(rng: random.Random, said: list[str], rank: dict[str, int]) -> str:
    """Two adjacent words of a message, each of rank 100 or more (a phrase someone recalls)."""
    while True:
        text = rng.choice(said).split()
        pairs = [
            (a, b) for a, b in pairwise(text) if rank.get(a, 0) >= 100 and rank.get(b, 0) >= 100
        ]
        if pairs:
            a, b = rng.choice(pairs)
            return f'"{a} {b}"'


if __name__ == "__main__":
    raise SystemExit(main())
