"""The hook log as evidence (issue 18) without tmux: which lines give a status (the store's
launch token, never a launch line's), what a clock step does, how paths are compared."""

from __future__ import annotations

from pathlib import Path

import pytest

from roost.core import lineage
from roost.providers import hooks

LAUNCH_AT = 1_800_000_000.0


def write_log(home: str, *lines: str) -> None:
    hooks.mark_launch(home, "id-a", LAUNCH_AT, "t0k")
    with Path(hooks.log_path(home, "id-a")).open("a") as fh:
        fh.writelines(lines)


@pytest.mark.parametrize(("event", "payload"), [
    pytest.param("Notification", '{"notification_type": "permission_prompt"}', id="waiting"),
    pytest.param("SessionEnd", '{"reason": "other"}', id="exited"),
    pytest.param("StopFailure", '{"last_assistant_message": "forged"}', id="error"),
])
def test_a_forged_launch_line_gives_no_status(tmp_path: Path, event: str, payload: str) -> None:
    home = str(tmp_path)
    at = int(LAUNCH_AT)
    write_log(home, f"{at + 1}\tStop\tt0k\t{{}}\n",
              f"{at + 2}\t{hooks.LAUNCH}\tFAKE\t{{}}\n", f"{at + 3}\t{event}\tFAKE\t{payload}\n")
    assert hooks.last_status(home, "id-a", "t0k") == ("idle", at + 1, None)
    # a launch before tokens takes no tokened line either: the same rule as lineage's
    assert hooks.last_status(home, "id-a", None) is None


def test_status_and_lineage_refuse_the_same_lines() -> None:
    for token, launch in [("t", "t"), ("u", "t"), ("", "t"), (None, "t"), (None, None),
                          ("", None), ("t", None)]:
        status_refuses = lineage.token_refused(token, launch)
        lineage_refuses = lineage.foreign(token=token, at=LAUNCH_AT, cwd="/w",
                                          launch_token=launch, launch_at=LAUNCH_AT,
                                          agent_cwd="/w")
        assert status_refuses == lineage_refuses, (token, launch)
