"""config.toml checks: pure, table-driven."""

from __future__ import annotations

from typing import Any

import pytest

from roost.core.settings import Problem, line_of, problems

GOOD = {
    "tmux": {"bin": "/opt/tmux"},
    "providers": {"codex": {"bin": "codex-dev"}},
    "status": {"patterns": {"codex": {"waiting": ["Allow command?"], "idle": ["›"]}}},
    "restore": {"concurrency": 2, "stagger": 0.5},
}


def test_a_good_config_has_no_problem() -> None:
    assert problems(GOOD) == []
    assert problems({}) == []
    assert problems({"restore": {"stagger": 0}}) == []


@pytest.mark.parametrize(
    ("data", "key", "says"),
    [
        ({"restor": {}}, "restor", "not a setting roost knows"),
        ({"restore": 3}, "restore", "must be a table"),
        (
            {"restore": {"concurrency": "3"}},
            "restore.concurrency",
            'whole number of at least 1, not "3"',
        ),
        ({"restore": {"concurrency": 0}}, "restore.concurrency", "at least 1"),
        ({"restore": {"concurrency": True}}, "restore.concurrency", "not true"),
        ({"restore": {"stagger": -1}}, "restore.stagger", "0 or more"),
        ({"restore": {"stagger": "fast"}}, "restore.stagger", "number of seconds"),
        ({"restore": {"parallel": 2}}, "restore.parallel", "not a setting"),
        ({"providers": 3}, "providers", "must be a table"),
        ({"providers": {"cursor": {"bin": "x"}}}, "providers.cursor", "not a provider"),
        ({"providers": {"codex": "codex"}}, "providers.codex", "must be a table"),
        ({"providers": {"codex": {"bin": 5}}}, "providers.codex.bin", "non-empty string, not 5"),
        ({"providers": {"codex": {"bin": ""}}}, "providers.codex.bin", "non-empty string"),
        ({"tmux": {"bin": ["tmux"]}}, "tmux.bin", "non-empty string, not a list"),
        ({"tmux": {"socket": "x"}}, "tmux.socket", "not a setting"),
        ({"status": {"pattern": {}}}, "status.pattern", "not a setting"),
        (
            {"status": {"patterns": {"codex": {"waiting": "Allow"}}}},
            "status.patterns.codex.waiting",
            'list of non-empty strings, not "Allow"',
        ),
        (
            {"status": {"patterns": {"codex": {"busy": ["x"]}}}},
            "status.patterns.codex.busy",
            "not a status kind",
        ),
        (
            {"status": {"patterns": {"codex": {"idle": ["", "x"]}}}},
            "status.patterns.codex.idle",
            "non-empty strings",
        ),
    ],
)
def test_each_problem_names_its_key(data: dict[str, Any], key: str, says: str) -> None:
    found = problems(data)
    assert len(found) == 1 and found[0].key == key and says in found[0].message, found


def test_problems_come_in_file_order() -> None:
    found = problems({"restore": {"concurrency": "x"}, "tmux": {"bin": 1}})
    assert [p.key for p in found] == ["restore.concurrency", "tmux.bin"]
    assert found[0] == Problem("restore.concurrency", found[0].message)


TEXT = """\
# roost settings
[tmux]
bin = "tmux"

[restore]
stagger = 0.5
concurrency = "x"

[status.patterns.codex]
waiting = "Allow"

[providers."codex"]
bin = 5
"""


@pytest.mark.parametrize(
    ("key", "line"),
    [
        ("restore.concurrency", 7),
        ("restore.stagger", 6),
        ("tmux.bin", 3),
        ("restore", 5),
        ("status.patterns.codex.waiting", 10),
        ("providers.codex.bin", 13),
        ("restore.parallel", 5),  # not in the file: its table's header
        ("nowhere.at.all", None),
    ],
)
def test_line_of_finds_the_key(key: str, line: int | None) -> None:
    assert line_of(TEXT, key) == line


def test_line_of_dotted_keys_at_top_level() -> None:
    assert line_of('restore.concurrency = "x"\n', "restore.concurrency") == 1


@pytest.mark.parametrize(
    ("uid", "mode", "link", "says"),
    [
        (1000, 0o40700, False, None),
        (1000, 0o40755, False, None),  # others may read, not write
        (1000, 0o40775, False, "can be written by others (mode 775)"),
        (1000, 0o40702, False, "can be written by others"),
        (0, 0o40700, False, "belongs to uid 0, not to you (uid 1000)"),
        (1000, 0o120777, True, "is a symlink"),
    ],
)
def test_trust_problem(uid: int, mode: int, link: bool, says: str | None) -> None:
    from pathlib import Path

    from roost.system.config import trust_problem

    found = trust_problem(Path("/r"), uid, mode, link, 1000)
    assert found == says if says is None else says in str(found)


@pytest.mark.parametrize(
    ("data", "key", "words"),
    [
        ({"ssh": {"timeout": float("nan")}}, "ssh.timeout", "above 0, not nan"),
        ({"restore": {"stagger": float("inf")}}, "restore.stagger", "0 or more, not inf"),
        ({"notify": {"timeout": float("nan")}}, "notify.timeout", "at most 60, not nan"),
        ({"web": {"bind": "localhost:http"}}, "web.bind", 'HOST:PORT, not "localhost:http"'),
        ({"web": {"bind": "127.0.0.1:99999"}}, "web.bind", "HOST:PORT"),
    ],
)
def test_values_no_server_or_clock_can_use_are_refused(
    data: dict[str, Any], key: str, words: str
) -> None:
    """TOML's nan and inf passed the old number checks (nan < 0 is False), and any string
    was a bind until roost web failed to start on it."""
    (found,) = problems(data)
    assert found.key == key and words in found.message


def test_each_key_is_declared_once_with_its_default_and_meaning() -> None:
    from roost.core import settings

    declared = settings.meanings()
    keys = [key for key, _default, _meaning in declared]
    assert len(keys) == len(set(keys))
    assert all(meaning for _key, _default, meaning in declared)
    empty = settings.parse({})
    for key, default, _meaning in declared:
        table, name = key.split(".")
        assert getattr(getattr(empty, table), name) == default
        assert problems({table: {name: object()}}), key  # every key is checked
    typed = settings.parse({"restore": {"stagger": 1}, "notify": {"command": ["a", "b"]}})
    assert typed.restore.stagger == 1.0 and isinstance(typed.restore.stagger, float)
    assert typed.notify.command == ("a", "b")
