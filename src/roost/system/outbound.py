"""The machine's side of alerts to the person (alerts/operations.py): run a command channel's
argv, POST to an ntfy topic or a webhook. Each returns None when delivered or one line saying
what went wrong; none raises, and none takes much longer than its `timeout` (the caller runs them in
threads and waits no longer than that either).
"""

from __future__ import annotations

import base64
import json
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence

MAX_SAID = 200  # characters of a failure kept for the log


def run_argv(argv: Sequence[str], timeout: float) -> str | None:
    """Run argv without a shell (every text stays one argument, whatever it holds), no input,
    its output discarded; it must end within `timeout` seconds with exit code 0."""
    try:
        done = subprocess.run(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"{argv[0]} did not end within {timeout:g} s (killed)"
    except OSError as exc:
        return f"cannot run {argv[0]}: {exc.strerror or exc}"
    if done.returncode != 0:
        said = " ".join(done.stderr.decode(errors="replace").split())[:MAX_SAID]
        return f"{argv[0]} exited {done.returncode}" + (f": {said}" if said else "")
    return None


def post(url: str, body: bytes, headers: Mapping[str, str], timeout: float) -> str | None:
    """POST `body` to `url`; any 2xx answer is delivered."""
    request = urllib.request.Request(url, data=body, headers=dict(headers), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            answer.read(MAX_SAID)
            return None
    except urllib.error.HTTPError as exc:
        return f"{url} answered {exc.code} {exc.reason}"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        why = getattr(exc, "reason", None) or exc
        return f"cannot reach {url}: {why}"[:MAX_SAID]


def header_text(text: str) -> str:
    """A header value HTTP can carry: ASCII as it is, else RFC 2047 (ntfy decodes it).

    >>> header_text("api is waiting"), header_text("api … ✓")
    ('api is waiting', '=?UTF-8?B?YXBpIOKApiDinJM=?=')
    """
    if text.isascii():
        return text
    return "=?UTF-8?B?" + base64.b64encode(text.encode()).decode() + "?="


def ntfy(
    url: str,
    title: str,
    body: str,
    urgent: bool,
    timeout: float,
    actions: Sequence[Mapping[str, object]] = (),
) -> str | None:
    """An ntfy-style topic: the body as text, the title in the Title header; `actions`: its
    action buttons, in ntfy's JSON form (the Actions header)."""
    headers = {
        "Title": header_text(title),
        "Priority": "high" if urgent else "default",
        "Content-Type": "text/plain; charset=utf-8",
    }
    if actions:
        headers["Actions"] = json.dumps(list(actions), ensure_ascii=True)
    return post(url, body.encode(), headers, timeout)


def webhook(url: str, payload: Mapping[str, object], timeout: float) -> str | None:
    """A JSON POST."""
    return post(url, json.dumps(payload).encode(), {"Content-Type": "application/json"}, timeout)


def as_they_answer(jobs: Sequence[Callable[[], str]], limit: float) -> Iterator[tuple[int, str]]:
    """Run every job at once in a daemon thread (a hung one never holds the process at exit);
    yield (index, what it said) as each answers, until `limit` seconds have passed. A job that
    raises says the exception's name and text (one channel's bug must not stop the others)."""
    from queue import Empty, SimpleQueue

    answers: SimpleQueue[tuple[int, str]] = SimpleQueue()

    def one(index: int, job: Callable[[], str]) -> None:
        try:
            said = job()
        except Exception as exc:  # noqa: BLE001
            said = f"{type(exc).__name__}: {exc}"
        answers.put((index, said))

    for index, job in enumerate(jobs):
        threading.Thread(target=one, args=(index, job), daemon=True).start()
    deadline = time.monotonic() + limit
    for _ in jobs:
        try:
            yield answers.get(timeout=max(0.0, deadline - time.monotonic()))
        except Empty:
            return
