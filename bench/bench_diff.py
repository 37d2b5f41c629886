"""`roost diff --stat` of a worktree agent in a 10,000-file repository with 200 changed files,
against `git diff --stat` run alone on the same worktree and base.

The repository: 10,000 files of 20 lines in 100 folders, one commit; an agent spawned in a
worktree of it (`--provider command`), in which 200 files changed: 170 edited (unstaged), 20
edited and staged, 10 new and untracked (so the untracked files' path, a private index with
them added --intent-to-add, is timed too). Timed in the same run, interleaved round by round:

- `git diff --stat BASE` in the worktree (the baseline: one git process, tracked files only),
  and with `git ls-files --others` after it (the same answer from git: untracked files too);
- the operations call in this process (`review.operations.target` + `summary`: what the TUI,
  the web and MCP call; ratio against the baseline, target <= 1.5 x);
- `python -m roost diff NAME --stat` (the CLI: Python's start and roost's imports on top; its
  ratio against `python -c pass` + the baseline is reported, not held to the target).

    .venv/bin/python bench/bench_diff.py [--rounds 20] [--files 10000] [--changed 200] [--json]
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from _common import PYTHON, finish, ms, parser, run, summary, table, timed, world

TARGET = 1.5  # x `git diff --stat` alone (issue 38)


def make_repo(top: Path, files: int) -> None:
    run(["git", "init", "-q", "-b", "main", str(top)], os.environ.copy())
    for i in range(files):
        folder = top / f"pkg{i % 100:02d}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{i:05d}.py").write_text(
            "".join(f"value_{i}_{n} = {n}  # line {n}\n" for n in range(20))
        )
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
    }
    env["GIT_COMMITTER_EMAIL"] = "b@b"
    run(["git", "-C", str(top), "add", "-A"], env)
    run(["git", "-C", str(top), "commit", "-qm", "files"], env)


def change(wt: Path, files: int, changed: int) -> None:
    step = max(1, files // changed)
    picked = [wt / f"pkg{i % 100:02d}" / f"mod{i:05d}.py" for i in range(0, files, step)][:changed]
    untracked = changed // 20
    staged = changed // 10
    for n, path in enumerate(picked[: changed - untracked]):
        text = path.read_text().replace(" = 3  #", " = 33  #").replace(" = 15  #", " = 51  #")
        path.write_text(text + "added = True\n")
        if n < staged:
            run(["git", "-C", str(wt), "add", str(path)], os.environ.copy())
    for n in range(untracked):
        (wt / f"pkg{n:02d}" / f"new{n}.py").write_text("new = 1\n" * 10)


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--files", type=int, default=10_000)
    p.add_argument("--changed", type=int, default=200)
    opts = p.parse_args()

    with world("diff") as w:
        w.env["ROOST_SERVICE_AUTOSTART"] = "0"  # the diff needs no service: keep the machine quiet
        repo = w.tmp / "work" / "repo"
        make_repo(repo, opts.files)
        run(
            [
                *w.roost_argv("spawn", "ag", "--worktree"),
                "--provider",
                "command",
                "--",
                "sleep",
                "1000",
            ],
            w.env,
            repo,
        )
        wt = Path(
            run(["git", "-C", str(repo), "worktree", "list", "--porcelain"], w.env)
            .split("worktree ")[2]
            .splitlines()[0]
        )
        change(wt, opts.files, opts.changed)
        base = run(["git", "-C", str(repo), "rev-parse", "main"], w.env).strip()

        os.environ.update(w.env)  # the operations call runs here, in this world
        from roost.ops.root import open_app
        from roost.review import operations as review

        app = open_app(reading=True)

        def in_process() -> float:
            start = time.perf_counter()
            d = review.summary(app, review.target(app, "ag"))
            elapsed = time.perf_counter() - start
            assert len(d.files) == opts.changed, f"{len(d.files)} files, not {opts.changed}"
            return elapsed

        cli = w.roost_argv("diff", "ag", "--stat")
        stat = run(cli, w.env, w.tmp)
        assert f" {opts.changed} files changed" in stat, stat[-300:]
        git_stat = ["git", "-C", str(wt), "diff", "--stat", base]
        git_others = ["git", "-C", str(wt), "ls-files", "--others", "--exclude-standard", "-z"]
        commands = {
            "git diff --stat BASE": lambda: timed(git_stat, w.env, w.tmp),
            "git diff --stat BASE; git ls-files --others": lambda: (
                timed(git_stat, w.env, w.tmp) + timed(git_others, w.env, w.tmp)
            ),
            "operations: target + summary (in-process)": in_process,
            "python -c pass": lambda: timed([PYTHON, "-c", "pass"], w.env, w.tmp),
            "python -m roost diff ag --stat": lambda: timed(cli, w.env, w.tmp),
        }
        names = list(commands)
        for name in names * 2:  # warm up: page cache, bytecode
            commands[name]()
        samples: dict[str, list[float]] = {n: [] for n in names}
        for r in range(opts.rounds):  # interleaved; the order rotates each round
            for name in names[r % len(names) :] + names[: r % len(names)]:
                samples[name].append(commands[name]())
        app.close()
        subprocess.run(w.tmux_argv("kill-server"), env=w.env, capture_output=True, timeout=30)

    stats = {n: summary(s) for n, s in samples.items()}
    git_s = stats["git diff --stat BASE"]["median"]
    ops_s = stats["operations: target + summary (in-process)"]["median"]
    cli_s = stats["python -m roost diff ag --stat"]["median"]
    same_s = stats["git diff --stat BASE; git ls-files --others"]["median"]
    floor = stats["python -c pass"]["median"] + git_s
    ratio = ops_s / git_s
    ok = ratio <= TARGET
    human = "\n".join(
        [
            f"roost diff --stat: {opts.files} files, {opts.changed} changed, "
            f"{opts.rounds} interleaved rounds (ms)\n",
            table(
                [("command", "median", "p90", "x git diff --stat")]
                + [
                    (n, ms(s["median"]), ms(s["p90"]), f"{s['median'] / git_s:.2f}")
                    for n, s in stats.items()
                ]
            ),
            f"\noperations call / git diff --stat = {ratio:.2f} (target <= {TARGET:g})",
            f"operations call / (git diff --stat; git ls-files --others: the same answer from "
            f"git, untracked files included) = {ops_s / same_s:.2f}",
            f"CLI / (python -c pass + git diff --stat) = {cli_s / floor:.2f} (reported)",
        ]
    )
    results = {
        "files": opts.files,
        "changed": opts.changed,
        "rounds": opts.rounds,
        "target_ratio": TARGET,
        "ratio": ratio,
        "ratio_to_git_with_untracked": ops_s / same_s,
        "cli_ratio_to_floor": cli_s / floor,
        "stats": stats,
    }
    return finish("bench_diff", results, human, ok, opts.json)


if __name__ == "__main__":
    raise SystemExit(main())
