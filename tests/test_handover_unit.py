"""The launch hand-over file: private, and swept once abandoned."""

from __future__ import annotations

from pathlib import Path


def test_handover_sweep_keeps_live_writers_files_and_removes_abandoned_ones(tmp_path: Path) -> None:
    import os

    from roost.system import handover

    spec = {"env": {"API_KEY": "secret"}}
    mine = handover.write(tmp_path, "a", spec)
    assert handover.writer_of(mine.name) == os.getpid() and oct(mine.stat().st_mode)[-3:] == "600"
    dead = tmp_path / "b-999999999-00.json"  # a pid no process has
    dead.write_text("{}")
    ancient = tmp_path / f"c-{os.getpid()}-00.json"
    ancient.write_text("{}")
    now = mine.stat().st_mtime
    os.utime(ancient, (now - 120, now - 120))
    assert handover.sweep(tmp_path, now=now + 1) == [ancient]  # only what is past any start
    assert sorted(handover.sweep(tmp_path, now=now + 20)) == [dead]  # its writer is gone
    assert mine.exists()  # its writer (this process) may still be starting the agent
    assert handover.sweep(tmp_path, now=now + 61) == [mine]
