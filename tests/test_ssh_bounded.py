"""Issue 35 part 4: a host's answer is bounded on the ssh path as on the forwarded socket: a
call that floods is cut at MAX_OUTPUT (never read whole into memory), one that trickles at its
time limit, whatever it wrote (system/ssh.run, a local program standing in for ssh)."""

from __future__ import annotations

import sys
import time

from roost.system import ssh


def test_a_plain_answer_is_read_whole() -> None:
    found = ssh.run(
        [sys.executable, "-c", "print('hi'); import sys; print('e', file=sys.stderr)"], 30
    )
    assert (found.code, found.out, found.err, found.too_large) == (0, "hi\n", "e\n", False)


def test_a_flood_is_cut_at_the_cap() -> None:
    flood = "import sys\nwhile True: sys.stdout.write('x' * 65536)"
    began = time.monotonic()
    found = ssh.run([sys.executable, "-c", flood], 60)
    assert found.too_large and found.code is None and found.out == ""
    assert time.monotonic() - began < 60  # cut by size, not by the limit


def test_a_trickle_is_cut_at_the_time_limit() -> None:
    trickle = (
        "import sys, time\nwhile True:\n"
        "    sys.stdout.write('x'); sys.stdout.flush(); time.sleep(0.2)"
    )
    found = ssh.run([sys.executable, "-c", trickle], 1.5)
    assert found.code is None and not found.too_large
    assert found.out.startswith("x")
