"""The review_comments table: comments a person made on an agent's change (review/rules.py's
`Comment`), kept per agent with the revision they were made on, until removed (`roost comment
NAME --rm ID`) or the agent is. Functions taking a connection run inside the caller's
`store.write()` transaction."""

from __future__ import annotations

import json
import sqlite3

from roost.review.rules import SENDING, SENT, Anchor, Comment

_COLUMNS = (
    "id, agent_id, path, start_line, end_line, lines, before, after, body, head, file_sha, "
    "created_at, state, sent_at, sent_head, sent_sha, sent_start, sent_end, sent_lines"
)


def _comment(row: tuple[object, ...]) -> Comment:
    (
        id_,
        agent_id,
        path,
        start,
        end,
        lines,
        before,
        after,
        body,
        head,
        file_sha,
        created_at,
        state,
        sent_at,
        sent_head,
        sent_sha,
        sent_start,
        sent_end,
        sent_lines,
    ) = row
    anchor = Anchor(
        int(str(start)),
        int(str(end)),
        tuple(json.loads(str(lines))),
        tuple(json.loads(str(before))),
        tuple(json.loads(str(after))),
    )
    sent = None
    if sent_lines is not None and sent_start is not None and sent_end is not None:
        sent = Anchor(int(str(sent_start)), int(str(sent_end)), tuple(json.loads(str(sent_lines))))
    return Comment(
        int(str(id_)),
        str(agent_id),
        str(path),
        anchor,
        str(body),
        str(head) if head is not None else None,
        str(file_sha),
        str(created_at),
        str(state),
        str(sent_at) if sent_at is not None else None,
        str(sent_head) if sent_head is not None else None,
        str(sent_sha) if sent_sha is not None else None,
        sent,
    )


def insert(
    c: sqlite3.Connection,
    agent_id: str,
    path: str,
    anchor: Anchor,
    body: str,
    head: str | None,
    file_sha: str,
    at: str,
) -> int:
    found = c.execute(
        "INSERT INTO review_comments (agent_id, path, start_line, end_line, lines, before, "
        "after, body, head, file_sha, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            agent_id,
            path,
            anchor.start,
            anchor.end,
            json.dumps(list(anchor.lines)),
            json.dumps(list(anchor.before)),
            json.dumps(list(anchor.after)),
            body,
            head,
            file_sha,
            at,
        ),
    )
    return int(found.lastrowid or 0)


def of_agent(c: sqlite3.Connection, agent_id: str) -> list[Comment]:
    rows = c.execute(
        f"SELECT {_COLUMNS} FROM review_comments WHERE agent_id = ? ORDER BY id", (agent_id,)
    )
    return [_comment(tuple(r)) for r in rows]


def delete(c: sqlite3.Connection, agent_id: str, comment_id: int) -> bool:
    found = c.execute(
        "DELETE FROM review_comments WHERE agent_id = ? AND id = ?", (agent_id, comment_id)
    )
    return found.rowcount == 1


def sending(c: sqlite3.Connection, ids: list[int], at: str) -> None:
    """The intent, before the send: these comments are on their way (a send that dies leaves
    them `sending`, and the next send carries them again)."""
    c.executemany(
        "UPDATE review_comments SET state = ?, sent_at = ? WHERE id = ?",
        [(SENDING, at, i) for i in ids],
    )


def sent(
    c: sqlite3.Connection, comment_id: int, head: str | None, sha: str | None, where: Anchor
) -> None:
    """Delivered: the revision it went out on, and where its lines were then."""
    c.execute(
        "UPDATE review_comments SET state = ?, sent_head = ?, sent_sha = ?, sent_start = ?, "
        "sent_end = ?, sent_lines = ? WHERE id = ?",
        (SENT, head, sha, where.start, where.end, json.dumps(list(where.lines)), comment_id),
    )


def unsent(c: sqlite3.Connection, ids: list[int], state: str) -> None:
    """Not delivered: back as they were."""
    c.executemany(
        "UPDATE review_comments SET state = ?, sent_at = NULL WHERE id = ? AND state = ?",
        [(state, i, SENDING) for i in ids],
    )
