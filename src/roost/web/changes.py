"""roost web's "Changes" page: an agent's change (the review room's diff: files, hunks) with its
review comments under their lines, syntax-highlighted, readable on a phone. Every value is
escaped; a file's contents reach the page as text with its control characters shown
(core/present.shown), coloured by Pygments' lexer for the file's name."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING
from urllib.parse import quote

from roost.core.present import shown
from roost.review import rules
from roost.web.pages import page

if TYPE_CHECKING:
    from pygments.lexer import Lexer

_KIND = {"+": "add", "-": "del", " ": "ctx", "\\": "note"}


def page_of(d: rules.Diff, comments: Sequence[rules.Seen], csrf: str, one_file: bool) -> str:
    """The page: what the change is against, its files (a line each, linked), then each file's
    hunks with the comments on its lines, a comment form per line and the review's buttons."""
    name = d.agent
    q = escape(name, quote=True)
    on_file = _by_file(comments)
    added = sum(f.added or 0 for f in d.files)
    removed = sum(f.removed or 0 for f in d.files)
    against = {
        "base": "the commit its branch started from",
        "given": "the commit given",
        "HEAD": "its checkout's HEAD (no roost worktree: uncommitted changes only)",
    }.get(d.against, d.against)
    unsent = sum(1 for s in comments if s.comment.state in (rules.OPEN, rules.SENDING))
    head = (
        f'<div class="agent-head"><h1>{escape(name)}</h1><a href="/a/{q}">agent</a>'
        f'<a href="/a/{q}/changes">all files</a></div>'
        f'<p class="against">{len(d.files)} files, <span class="add">+{added}</span> '
        f'<span class="del">−{removed}</span> against {escape(against)} '
        f"<code>{escape(d.base[:12])}</code>"
        + (f" on <code>{escape(d.branch)}</code>" if d.branch else "")
        + "</p>"
        f'<div class="actions"><button id="review-send" data-count="{unsent}"'
        f"{'' if unsent else ' disabled'}>Send {unsent} comments</button>"
        + (
            '<select id="merge-mode" aria-label="how to merge"><option value="merge">merge commit'
            '</option><option value="squash">squash</option><option value="rebase">rebase'
            '</option></select><button id="merge">Merge</button>'
            '<button id="merge-hunks" disabled>Merge selected hunks</button>'
            if d.against == "base"
            else ""
        )
        + "</div>"
        '<p id="receipt" class="receipt" role="status"></p>'
    )
    if not d.files:
        return page(f"{name} changes", csrf, head + '<p class="empty">No changes.</p>', _data(d))
    listing = "".join(
        f'<li><a href="#f{i}">{escape(shown(f.path))}</a> {_counts(f)}</li>'
        for i, f in enumerate(d.files)
    )
    picking = d.against == "base"  # hunks are merged from a roost worktree's change only
    files = "".join(
        _file(d, i, f, on_file.get(f.path, []), one_file, picking) for i, f in enumerate(d.files)
    )
    body = f'{head}<ul class="files">{listing}</ul>{files}'
    return page(f"{name} changes", csrf, body, _data(d))


def _data(d: rules.Diff) -> dict[str, object]:
    return {"page": "changes", "name": d.agent}


def _by_file(comments: Sequence[rules.Seen]) -> dict[str, list[rules.Seen]]:
    found: dict[str, list[rules.Seen]] = {}
    for s in comments:
        found.setdefault(s.comment.path, []).append(s)
    return found


def _counts(f: rules.FileChange) -> str:
    if f.binary:
        return f'<span class="dim">binary, {f.size if f.size is not None else "?"} bytes</span>'
    return f'<span class="add">+{f.added or 0}</span> <span class="del">−{f.removed or 0}</span>'


def _file(
    d: rules.Diff,
    i: int,
    f: rules.FileChange,
    comments: list[rules.Seen],
    one_file: bool,
    picking: bool = False,
) -> str:
    path = escape(f.path, quote=True)
    title = escape(shown(f.path))
    if f.old_path is not None:
        title = f"{escape(shown(f.old_path))} → {title}"
    out = [
        f'<section class="file" id="f{i}" data-path="{path}">'
        f"<h3>{escape(rules.status_word(f))}: {title} {_counts(f)}</h3>"
    ]
    link = f"/a/{quote(d.agent)}/changes?file={quote(f.path)}"
    one = f'<a href="{escape(link, quote=True)}">'
    if not f.binary and not f.read:
        out.append(
            f'<p class="dim">Not shown (the page\'s budget ran out): {one}show this file</a></p>'
        )
    elif f.hunks:
        out.append('<div class="hunks"><table class="diff">')
        lexer = _lexer(f.path)
        for n, h in enumerate(f.hunks, 1):
            out.extend(_hunk(h, lexer, comments, n if picking and not f.binary else None))
        out.append("</table></div>")
        if f.more and not one_file:
            out.append(f'<p class="dim">{f.more} more lines: {one}show this file</a></p>')
        elif f.more:
            out.append(f'<p class="dim">{f.more} more lines not shown (`roost diff --file`)</p>')
    placed = {id(s) for h in f.hunks for s in _in_hunk(h, comments)}
    elsewhere = [s for s in comments if id(s) not in placed]
    if elsewhere:  # outdated ones, and ones on lines no hunk shows: never lost
        out.append('<div class="comments">')
        out.extend(_comment(s) for s in elsewhere)
        out.append("</div>")
    out.append("</section>")
    return "".join(out)


def _in_hunk(h: rules.Hunk, comments: list[rules.Seen]) -> list[rules.Seen]:
    return [s for s in comments if s.end is not None and h.new_start <= s.end <= h.new_end]


def _hunk(
    h: rules.Hunk, lexer: Lexer | None, comments: list[rules.Seen], number: int | None = None
) -> Iterator[str]:
    """A hunk's rows; `number` (its place in its file, from 1): a checkbox that picks it for
    "Merge selected hunks", carrying the fingerprint it was drawn with."""
    section = f" {escape(shown(h.section))}" if h.section else ""
    pick = (
        f'<label class="pick"><input type="checkbox" class="hunk-pick" data-hunk="{number}" '
        f'data-fingerprint="{escape(h.fingerprint, quote=True)}" '
        f'aria-label="pick hunk {number}"> hunk {number}</label> '
        if number is not None
        else ""
    )
    yield (
        f'<tr class="hh"><td colspan="3">{pick}@@ -{h.old_start},{h.old_count} '
        f"+{h.new_start},{h.new_count} @@{section}</td></tr>"
    )
    after = _comments_after(comments)
    coloured = _highlight([shown(line[1:]) for line in h.lines], lexer)
    old, new = h.old_start, h.new_start
    for line, code in zip(h.lines, coloured, strict=True):
        kind = _KIND.get(line[:1], "ctx")
        o = n = ""
        if kind in ("ctx", "del"):
            o, old = str(old), old + 1
        if kind in ("ctx", "add"):
            n, new = str(new), new + 1
        mark = escape(line[:1]) if kind != "note" else ""
        target = f' data-line="{n}"' if n else ""
        yield (
            f'<tr class="{kind}"{target}><td class="ln">{o}</td>'
            f'<td class="ln new">{n}</td><td class="code">{mark}{code}</td></tr>'
        )
        for s in after.get(int(n), []) if n else []:
            yield f'<tr class="comment-row"><td colspan="3">{_comment(s)}</td></tr>'
    if h.more:
        yield f'<tr class="note"><td colspan="3">… {h.more} more lines of this hunk</td></tr>'


def _comments_after(comments: list[rules.Seen]) -> Mapping[int, list[rules.Seen]]:
    found: dict[int, list[rules.Seen]] = {}
    for s in comments:
        if s.end is not None:
            found.setdefault(s.end, []).append(s)
    return found


def _comment(s: rules.Seen) -> str:
    c = s.comment
    where = rules.lines_word(c.anchor.start, c.anchor.end)
    return (
        f'<div class="comment c-{escape(s.state, quote=True)}" data-comment="{c.id}">'
        f'<span class="badge">{escape(s.state)}</span> #{c.id} {escape(shown(c.path))}, '
        f"{escape(where)}: {escape(c.body)}</div>"
    )


def _lexer(path: str) -> Lexer | None:
    """Pygments' lexer for the file's name; None (plain text) for a name it does not know."""
    from pygments.lexers import get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        return get_lexer_for_filename(path, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def _highlight(lines: list[str], lexer: Lexer | None) -> list[str]:
    """Each line as HTML: highlighted by `lexer` as one block (a string over two lines stays a
    string), escaped plain text without one; always one entry per line."""
    plain = [escape(line) for line in lines]
    if lexer is None or not lines:
        return plain
    from pygments import highlight
    from pygments.formatters import HtmlFormatter

    html = highlight("\n".join(lines) + "\n", lexer, HtmlFormatter(nowrap=True, classprefix="t-"))
    found = html.split("\n")
    if found and found[-1] == "":
        found.pop()
    return found if len(found) == len(lines) else plain  # a lexer that joined lines: plain
