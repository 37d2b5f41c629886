"""roost web's HTML: server-rendered pages, every value escaped; static/app.js makes them live."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from html import escape
from urllib.parse import quote

from roost.core.fleet import LOCAL, HostView
from roost.core.questions import Question
from roost.core.status import Status
from roost.core.web import fleet_groups, usage_text
from roost.recall.operations import MARKS, Hit


def page(title: str, csrf: str, body: str, script_data: Mapping[str, object]) -> str:
    data = escape(json.dumps(script_data), quote=True)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="roost-csrf" content="{escape(csrf, quote=True)}">
<title>{escape(title)} · roost</title>
<link rel="stylesheet" href="/static/style.css">
<link rel="manifest" href="/manifest.webmanifest">
<meta name="theme-color" content="#2b5f8a">
<link rel="apple-touch-icon" href="/icon-192.png">
</head><body data-roost="{data}">
<header><a href="/" class="brand">roost</a><span class="title">{escape(title)}</span>
<form class="find" action="/search" role="search"><input name="q" type="search"
 placeholder="search conversations" aria-label="search conversations"></form>
<button id="notify" type="button" hidden>Notify me</button>
<button id="push" type="button" hidden>Push to this phone</button></header>
<p id="pushed" class="receipt" hidden></p>
<main>{body}</main>
<script src="/static/app.js"></script>
</body></html>
"""


def badge(status: object) -> str:
    s = escape(str(status or Status.UNKNOWN))
    return f'<span class="badge s-{s}" data-badge>{s}</span>'


def fleet_section(rows: Sequence[Mapping[str, object]], hosts: Sequence[HostView] = ()) -> str:
    """The fleet's groups (core/web.py's), each agent a row linking to its page. With remote
    hosts (docs/HOSTS.md): this machine's groups under "local", then each host's under its
    name (its agents named, not linked: their pages are on that host), a host that did not
    answer one line with why. Without hosts, the one-machine page as it was."""
    if not hosts:
        return _groups(rows, "h2", _fleet_row) if rows else _EMPTY
    out = [f'<section class="host"><h2 class="host">{LOCAL}</h2>']
    out.append(_groups(rows, "h3", _fleet_row) if rows else _EMPTY)
    for view in hosts:
        name = escape(view.host)
        out.append(f'</section><section class="host" data-host="{escape(view.host, quote=True)}">')
        if view.unreachable is not None:
            out.append(
                f'<h2 class="host">{name} <span class="unreachable">unreachable: '
                f"{escape(view.unreachable)}</span></h2>"
            )
            continue
        out.append(f'<h2 class="host">{name}</h2>')
        out.append(_groups(view.agents, "h3", _remote_row) if view.agents else "")
    return "".join(out) + "</section>"


_EMPTY = '<p class="empty">No agents yet: <code>roost spawn NAME</code>.</p>'


def _groups(
    rows: Sequence[Mapping[str, object]], heading: str, row: Callable[[Mapping[str, object]], str]
) -> str:
    out: list[str] = []
    for title, agents in fleet_groups(rows):
        items = "".join(row(a) for a in agents)
        out.append(
            f"<section><{heading}>{escape(title)}</{heading}>"
            f'<ul class="fleet">{items}</ul></section>'
        )
    return "".join(out)


def _remote_row(a: Mapping[str, object]) -> str:
    """A host's agent: its name, provider and status (its page and terminal are the host's)."""
    return (
        f'<li class="remote"><span class="name">{escape(str(a.get("name")))}</span> '
        f'<span class="provider">{escape(str(a.get("provider")))}</span> '
        f"{badge(a.get('status'))}</li>"
    )


def _fleet_row(a: Mapping[str, object]) -> str:
    name = str(a["name"])
    limit = a.get("limit_kind")
    extra = f'<span class="usage">{escape(str(limit))} limit</span>' if limit else ""
    used = usage_text(a.get("usage"))
    extra += f'<span class="usage">{escape(used)}</span>' if used else ""
    hit = a.get("collides_with")  # issue 38: its changes overlap another agent's
    if isinstance(hit, list) and hit:
        names = ", ".join(str(n) for n in hit[:2]) + (" …" if len(hit) > 2 else "")
        extra += f'<span class="usage collides">collides: {escape(names)}</span>'
    return (
        f'<li data-agent="{escape(str(a["id"]), quote=True)}">'
        f'<a href="/a/{escape(name, quote=True)}">{escape(name)}</a> '
        f'<span class="provider">{escape(str(a.get("provider")))}</span> '
        f"{badge(a.get('status'))}{extra}</li>"
    )


def fleet(rows: Sequence[Mapping[str, object]], csrf: str, hosts: Sequence[HostView] = ()) -> str:
    body = f'<div id="fleet">{fleet_section(rows, hosts)}</div>'
    return page("Fleet", csrf, body, {"page": "fleet"})


def question_html(q: Question | None) -> str:
    """A waiting agent's question and a button per choice; each button answers only this
    question (its id), whatever the screen shows by the time it is pressed."""
    if q is None:
        return ""
    qid = escape(q.fingerprint, quote=True)
    buttons = "".join(
        f'<button type="button" class="choice" data-key="{escape(c.key, quote=True)}" '
        f'data-question="{qid}">{escape(c.key)}. {escape(c.label)}</button>'
        for c in q.choices
    )
    return f'<p class="question">{escape(q.text)}</p>{buttons}'


def agent(
    a: Mapping[str, object],
    screen: str,
    asked: Question | None,
    tabs: Sequence[str],
    csrf: str,
) -> str:
    """One agent: its screen (already HTML: core/web.screen_html), details, send box, dialog
    choices and actions."""
    name = str(a["name"])
    worktree = a.get("worktree")
    branch = worktree.get("branch") if isinstance(worktree, dict) else a.get("branch")
    details = "".join(
        f"<dt>{escape(k)}</dt><dd>{escape(str(v))}</dd>"
        for k, v in (
            ("provider", a.get("provider")),
            ("state", a.get("state")),
            ("cwd", a.get("cwd")),
            ("branch", branch or "-"),
            ("session", a.get("provider_session_id") or "-"),
            ("last error", a.get("last_error") or "-"),
            ("usage", usage_text(a.get("usage")) or "-"),
            # texts roost holds until it is at its input (a first prompt behind a question)
            ("held", f"{a.get('held_inputs')} (sent once it is at its input)")
            if a.get("held_inputs")
            else ("held", "-"),
        )
    )
    q = escape(name, quote=True)
    options = "".join(f'<option value="{escape(t, quote=True)}">' for t in tabs)
    body = f"""
<div class="agent-head"><h1>{escape(name)}</h1>{badge(a.get("status"))}
<a class="term-link" href="/a/{q}/term">terminal</a>
<a class="term-link" href="/a/{q}/changes">changes</a></div>
<pre id="screen" class="screen">{screen}</pre>
<div id="choices" class="choices">{question_html(asked)}</div>
<form id="send" class="send"><textarea name="text" rows="2" placeholder="Message to {q}"
></textarea><button type="submit">Send</button></form>
<p id="receipt" class="receipt" role="status"></p>
<div class="actions"><button data-action="wake">Wake</button>
<button data-action="stop">Stop</button><button data-action="park">Park</button></div>
<form id="place" class="send"><input name="tab" list="tabs" placeholder="tab" required>
<datalist id="tabs">{options}</datalist><button type="submit">Place</button></form>
<dl class="details">{details}</dl>
"""
    return page(name, csrf, body, {"page": "agent", "name": name, "id": a["id"]})


def terminal(name: str, csrf: str, typing: bool, xterm: bool) -> str:
    q = escape(name, quote=True)
    if not xterm:
        body = (
            f'<p class="empty">The live terminal needs xterm.js (install.sh installs it). '
            f'<a href="/a/{q}">{escape(name)}\'s page</a> shows its screen and a send box.</p>'
        )
        return page(f"{name} terminal", csrf, body, {"page": "none"})
    mode = "typing" if typing else "watching (read-only)"
    body = f"""<link rel="stylesheet" href="/xterm/xterm.css">
<p class="mode">{escape(mode)} · <a href="/a/{q}">back</a></p><div id="term"></div>
<script src="/xterm/xterm.js"></script>"""
    return page(f"{name} terminal", csrf, body, {"page": "term", "name": name, "typing": typing})


def message(title: str, text: str) -> str:
    return page(title, "", f'<p class="empty">{escape(text)}</p>', {"page": "none"})


def search(query: str, hits: Sequence[Hit], csrf: str, error: str | None = None) -> str:
    """Recall's results (issue 39): each hit's agent and turn (linked to the agent's page), when,
    who spoke and the words around the match, the match marked; or why the query was refused."""
    box = (
        f'<form class="send" action="/search"><input name="q" value="{escape(query, quote=True)}" '
        'placeholder="words, &quot;a phrase&quot;, prefix*, a OR b"><button>Search</button></form>'
    )
    if error is not None:
        body = f'{box}<p class="receipt bad">{escape(error)}</p>'
    elif not query.strip():
        body = box
    elif not hits:
        body = f'{box}<p class="empty">Nothing said matches.</p>'
    else:
        rows = "".join(_hit(h) for h in hits)
        body = f'{box}<ul class="hits">{rows}</ul>'
    return page(f"search: {query}" if query else "search", csrf, body, {"page": "search"})


def _hit(h: Hit) -> str:
    words = escape(h.snippet).replace(MARKS[0], "<mark>").replace(MARKS[1], "</mark>")
    files = f' <span class="dim">{escape(", ".join(h.files[:3]))}</span>' if h.files else ""
    return (
        f'<li><div><a href="/a/{escape(quote(h.agent), quote=True)}">{escape(h.ref)}</a> '
        f'<span class="provider">{escape(h.role)} · {escape(h.provider)} · '
        f"{escape(h.when)}</span>{files}</div><p>{words}</p></li>"
    )
