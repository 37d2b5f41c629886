"""What roost web's handlers do, in a worker thread with that thread's App: the same ops/
calls as the CLI, names checked as the CLI checks them, only ids reaching tmux."""

from __future__ import annotations

from roost.core import present, questions
from roost.core import web as rules
from roost.core.errors import RoostError
from roost.core.names import check_name
from roost.core.questions import Question
from roost.core.status import Status
from roost.ops import answer as answering
from roost.ops import lifecycle
from roost.ops import send as sending
from roost.ops import workspace as wsops
from roost.ops.context import App
from roost.recall.operations import Hit
from roost.review.rules import Diff, Seen

SEND_TIMEOUT = 120.0  # seconds a send from the page may take (wake, ready, confirm)


def rows(app: App) -> list[dict[str, object]]:
    """Every agent's `ls --json` row, its usage priced as `ls --json` prices it (config.toml's
    [prices] over roost's table)."""
    from roost.ops import observe
    from roost.usage import operations as usage

    table = usage.price_table(app)
    return [present.agent_json(o, table) for o in observe.current(app)]


def tab_names(app: App) -> list[str]:
    return [t.name for t in wsops.tab_list(app)]


def agent(app: App, name: str) -> tuple[dict[str, object], str]:
    """An agent's `ls --json` row and its coloured screen ("" without a pane). Its usage is
    the fleet's figure (usage/operations.py figures): the record read for one agent holds none."""
    from roost.usage import operations as usage

    check_name(name)
    found = lifecycle.find_view(app, name)
    screen = app.tmux.capture_colours(found.pane.pane_id) if found.pane is not None else ""
    row = present.agent_json(found)
    row["usage"] = usage.figures(app, [found.agent.id])[found.agent.id]
    return row, rules.trim_screen(screen)


def changes(app: App, name: str, file: str | None) -> tuple[Diff, list[Seen]]:
    """An agent's change for its Changes page (the review room's diff, each file within the
    page's budget; one file with a larger one) and its review comments as they stand now."""
    from roost.review import operations as review
    from roost.review import rules as diffs

    check_name(name)
    budget = (
        diffs.Budget(file_lines=diffs.ONE_FILE_LINES, total_lines=None) if file else diffs.Budget()
    )
    return review.diff(app, name, file=file, budget=budget), review.comments(app, name)


def search(app: App, query: str) -> list[Hit]:
    """Recall's best hits for `query` over every agent's conversation (the person's own view),
    what the service has not indexed yet read first."""
    from roost.recall import operations as recall

    return recall.fresh_search(app, query, None, SEARCH_HITS)


SEARCH_HITS = 50


def question(row: dict[str, object], screen: str) -> Question | None:
    """A waiting agent's question, its choices read off its screen (core/questions.py): Claude
    Code's unnumbered "❯ No, exit / Yes, I trust this folder" as well as numbered dialogs and
    aider's (Y)es/(N)o. None for any other status."""
    if row.get("status") != Status.WAITING:
        return None
    return questions.read(rules.strip_escapes(screen))


def act(app: App, name: str, action: str, body: dict[str, object]) -> dict[str, object]:
    check_name(name)
    if action == "send":
        text = body.get("text")
        if not isinstance(text, str) or not text.strip():
            raise RoostError("nothing to send")
        sent = sending.send(app, name, text, timeout=SEND_TIMEOUT)
        receipt = present.delivered(name, sent.how) if sent.delivered else None
        return {
            "delivered": sent.delivered,
            "receipt": receipt or present.not_delivered(name, sent.how),
            "note": sent.note,
        }
    if action == "answer":
        choice, expect = body.get("choice"), body.get("question")
        if not isinstance(choice, str) or not isinstance(expect, str):
            raise RoostError("an answer names a choice and the question it answers")
        done = answering.answer(app, name, choice, expect=expect)
        said = present.answered(name, done.choice.label, done.status, done.reason, done.held)
        return {"answered": done.choice.label, "status": done.status, "receipt": said}
    if action == "wake":
        woke = lifecycle.wake(app, name)
        return {"receipt": present.woke(name, woke.started, woke.pid, woke.agent.home)}
    if action == "stop":
        return {"receipt": present.stopped(name, len(lifecycle.kill(app, name)))}
    if action == "park":
        return {"receipt": present.parked(wsops.park(app, name, False))}
    if action == "place":
        tab = body.get("tab")
        if not isinstance(tab, str):
            raise RoostError("place needs a tab")
        placed = wsops.place(app, name, tab)
        was = placed.was if placed.moved else None
        return {"receipt": present.placed(name, tab, placed.result.pid, was)}
    if action == "comment":
        return _comment(app, name, body)
    if action == "review":
        from roost.review import operations as review

        went = review.send(app, name, timeout=SEND_TIMEOUT)
        told = present.delivered(name, went.how) if went.delivered else None
        return {
            "delivered": went.delivered,
            "sent": len(went.ids) if went.delivered else 0,
            "left": went.left,
            "receipt": told or present.not_delivered(name, went.how),
        }
    if action == "merge":
        return _merge(app, name, body)
    if action == "merge-hunks":
        return _merge_hunks(app, name, body)
    raise RoostError(f"no such action: {action[:40]!r}")


def _merge(app: App, name: str, body: dict[str, object]) -> dict[str, object]:
    """The Changes page's Merge: `roost merge NAME [--squash]` as the person asked, with every
    refusal of it (mid-turn, the main checkout dirty, a predicted conflict)."""
    from roost.merge import operations as merging

    mode = body.get("mode", "merge")
    if mode not in ("merge", "squash", "rebase"):
        raise RoostError("a merge is a merge, a squash or a rebase")
    done = merging.merge(app, name, str(mode))
    return {"merged": True, "receipt": "; ".join(done.said()), "note": done.plan.note}


MAX_PICKS = 500  # hunks one request names


def _merge_hunks(app: App, name: str, body: dict[str, object]) -> dict[str, object]:
    """The Changes page's "Merge selected hunks": `roost merge NAME --hunks`, each hunk with
    the fingerprint the page drew it with (one that changed since is refused: reload)."""
    from roost.merge import operations as merging
    from roost.merge import rules as merge_rules

    given = body.get("hunks")
    if not isinstance(given, list) or not given or len(given) > MAX_PICKS:
        raise RoostError("pick at least one hunk")
    picks: list[merge_rules.Pick] = []
    for item in given:
        path = item.get("path") if isinstance(item, dict) else None
        number = item.get("number") if isinstance(item, dict) else None
        fingerprint = item.get("fingerprint") if isinstance(item, dict) else None
        if (
            not isinstance(path, str)
            or not path
            or not isinstance(number, int)
            or isinstance(number, bool)
            or number < 1
            or not isinstance(fingerprint, str)
            or not fingerprint
        ):
            raise RoostError("a hunk is picked by its file, its number and its fingerprint")
        picks.append(merge_rules.Pick(path, number, fingerprint))
    done = merging.merge(app, name, "hunks", hunks=picks)
    return {"merged": True, "receipt": "; ".join(done.said())}


def _comment(app: App, name: str, body: dict[str, object]) -> dict[str, object]:
    from roost.review import operations as review

    path, start, end, text = body.get("path"), body.get("start"), body.get("end"), body.get("text")
    if not isinstance(path, str) or not isinstance(text, str) or not isinstance(start, int):
        raise RoostError("a comment names a file, a line and its text")
    if isinstance(start, bool) or not (end is None or (isinstance(end, int) and end >= start)):
        raise RoostError("a comment's lines are whole numbers, the first one first")
    made = review.comment(app, name, path, start, end if isinstance(end, int) else start, text)
    return {"comment": made.id, "receipt": f"comment #{made.id} kept on {path}:{start}"}
