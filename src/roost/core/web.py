"""roost web's decisions, pure: where it may listen, which requests come from its own pages, a
pane's coloured screen as HTML, a waiting dialog's choices, and the fleet's groups. The server
(roost/web/) does the I/O around them.
"""

from __future__ import annotations

import html
import ipaddress
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from roost.core.errors import RoostError
from roost.core.status import Status

DEFAULT_PORT = 7377


def parse_bind(text: str) -> tuple[str, int]:
    """`--bind HOST:PORT` (or `[v6]:PORT`, or a bare port) as (host, port).

    >>> parse_bind("127.0.0.1:8000"), parse_bind("9000"), parse_bind("[::1]:0")
    (('127.0.0.1', 8000), ('127.0.0.1', 9000), ('::1', 0))
    """
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", text
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not host or not port.isdigit() or int(port) > 65535:
        raise RoostError(f"--bind wants HOST:PORT (e.g. 127.0.0.1:{DEFAULT_PORT}), not {text!r}")
    return host, int(port)


def is_loopback(host: str) -> bool:
    """Only this machine reaches it (other users of the machine too: hence the token always).

    >>> [is_loopback(h) for h in ("127.0.0.1", "::1", "localhost", "0.0.0.0", "10.0.0.2")]
    [True, True, True, False, False]
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name: it may resolve to anything


def check_bind(host: str, allow_remote: bool) -> None:
    """Anything but loopback is reachable from other machines: only when asked for."""
    if not is_loopback(host) and not allow_remote:
        raise RoostError(
            f"{host} is reachable from other machines: add --allow-remote to listen there "
            "(docs/WEB.md: ssh port forwarding or a tailnet is the safer way)"
        )


def url_host(host: str, port: int) -> str:
    """host:port as it appears in a URL (a v6 address in brackets).

    >>> url_host("::1", 80), url_host("127.0.0.1", 80)
    ('[::1]:80', '127.0.0.1:80')
    """
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def host_allowed(host_header: str | None, port: int, bound: str, allow_remote: bool) -> bool:
    """A Host header this server answers to. On loopback only loopback names with its port: a
    page of another site whose name was rebound to 127.0.0.1 (DNS rebinding) says its own name.

    >>> host_allowed("localhost:8000", 8000, "127.0.0.1", False)
    True
    >>> host_allowed("evil.example:8000", 8000, "127.0.0.1", False)
    False
    """
    if not host_header:
        return False
    if allow_remote:
        return True  # any name of a machine the person chose to expose; the cookie still rules
    name, _, port_text = host_header.rpartition(":")
    if not name or port_text != str(port):
        return False
    name = name[1:-1] if name.startswith("[") else name
    return name == bound or is_loopback(name)


def same_origin(origin: str | None, host_header: str | None) -> bool:
    """A browser's request from a page this server served: its Origin names the same host.
    A request without Origin is refused too (every browser sends one on POST and WebSocket).

    >>> same_origin("http://127.0.0.1:8000", "127.0.0.1:8000")
    True
    >>> same_origin("http://evil.example", "127.0.0.1:8000"), same_origin(None, "x:1")
    (False, False)
    """
    if not origin or not host_header:
        return False
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and parts.netloc == host_header


# ---- a pane's screen as HTML ----------------------------------------------------------------
_SGR = re.compile(r"\x1b\[([0-9;:]*)m")
_OTHER_ESCAPES = re.compile(r"\x1b(\[[0-9;?]*[A-Za-z]|\][^\x07\x1b]*(\x07|\x1b\\)|.)")
_BASIC = (
    "#000000", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5",
    "#666666", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff",
)  # fmt: skip


def colour_256(n: int) -> str:
    """xterm's 256-colour palette entry as #rrggbb.

    >>> colour_256(1), colour_256(196), colour_256(244)
    ('#cd3131', '#ff0000', '#808080')
    """
    if n < 16:
        return _BASIC[n]
    if n < 232:
        r, g, b = (n - 16) // 36, (n - 16) // 6 % 6, (n - 16) % 6
        return "#" + "".join(f"{0 if c == 0 else 55 + 40 * c:02x}" for c in (r, g, b))
    level = 8 + 10 * (n - 232)
    return f"#{level:02x}{level:02x}{level:02x}"


@dataclass
class _Pen:
    fg: str | None = None
    bg: str | None = None
    bold: bool = False
    dim: bool = False
    italic: bool = False
    underline: bool = False
    reverse: bool = False

    def style(self) -> str:
        fg, bg = (self.bg, self.fg) if self.reverse else (self.fg, self.bg)
        if self.reverse:
            fg, bg = fg or "var(--bg)", bg or "var(--fg)"
        parts = [f"color:{fg}" if fg else "", f"background:{bg}" if bg else ""]
        parts += ["font-weight:bold" if self.bold else "", "opacity:.6" if self.dim else ""]
        parts += ["font-style:italic" if self.italic else ""]
        parts += ["text-decoration:underline" if self.underline else ""]
        return ";".join(p for p in parts if p)


def _extended(codes: list[int], i: int) -> tuple[str | None, int]:
    """38/48's colour after codes[i] (5;n or 2;r;g;b) and how many codes it took."""
    if codes[i + 1 : i + 2] == [5] and i + 2 < len(codes):
        return colour_256(codes[i + 2] % 256), 3
    if codes[i + 1 : i + 2] == [2] and i + 4 < len(codes):
        r, g, b = (min(c, 255) for c in codes[i + 2 : i + 5])
        return f"#{r:02x}{g:02x}{b:02x}", 5
    return None, len(codes) - i  # malformed: drop the rest of this sequence


def _apply(pen: _Pen, params: str) -> _Pen:
    codes = [int(c) if c.isdigit() else 0 for c in re.split("[;:]", params)] if params else [0]
    i = 0
    while i < len(codes):
        c, step = codes[i], 1
        if c == 0:
            pen = _Pen()
        elif c in (1, 2, 3, 4, 7):
            setattr(pen, {1: "bold", 2: "dim", 3: "italic", 4: "underline", 7: "reverse"}[c], True)
        elif c == 22:
            pen.bold = pen.dim = False
        elif c in (23, 24, 27):
            setattr(pen, {23: "italic", 24: "underline", 27: "reverse"}[c], False)
        elif 30 <= c <= 37 or 90 <= c <= 97:
            pen.fg = _BASIC[c - 30 if c < 90 else c - 82]
        elif 40 <= c <= 47 or 100 <= c <= 107:
            pen.bg = _BASIC[c - 40 if c < 100 else c - 92]
        elif c in (38, 48):
            colour, step = _extended(codes, i)
            setattr(pen, "fg" if c == 38 else "bg", colour)
        elif c == 39:
            pen.fg = None
        elif c == 49:
            pen.bg = None
        i += step
    return pen


def screen_html(text: str) -> str:
    """A screen captured with its escapes (`capture-pane -e`) as HTML: its text escaped, each run
    of one style in a span. Only SGR escapes mean anything; every other escape is dropped, so
    nothing the agent printed becomes markup.

    >>> screen_html("\\x1b[31mred\\x1b[0m <b>&")
    '<span style="color:#cd3131">red</span> &lt;b&gt;&amp;'
    """
    out: list[str] = []
    pen = _Pen()
    pos = 0
    for m in _SGR.finditer(text):
        out.append(_run(text[pos : m.start()], pen))
        pen = _apply(pen, m.group(1))
        pos = m.end()
    out.append(_run(text[pos:], pen))
    return "".join(out)


def strip_escapes(text: str) -> str:
    """A captured screen's text without its escapes (what `capture-pane` without -e gives).

    >>> strip_escapes("\x1b[1;31m1. Yes\x1b[0m")
    '1. Yes'
    """
    return _OTHER_ESCAPES.sub("", text)


def trim_screen(text: str) -> str:
    """A captured screen without its trailing blank lines (a pane is mostly empty below its
    prompt; blank means no text once the escapes are gone).

    >>> trim_screen("a\\n\\x1b[0m  \\n\\n")
    'a'
    """
    lines = text.rstrip("\n").split("\n")
    while lines and not strip_escapes(lines[-1]).strip():
        lines.pop()
    return "\n".join(lines)


def _run(chunk: str, pen: _Pen) -> str:
    chunk = html.escape(_OTHER_ESCAPES.sub("", chunk).replace("\x1b", ""), quote=True)
    style = pen.style()
    return f'<span style="{style}">{chunk}</span>' if style and chunk else chunk


# ---- the fleet page ---------------------------------------------------------------------------
NEEDS_YOU = (Status.WAITING, Status.ERROR, Status.LIMITED, Status.FAILED, "crashed")


def fleet_groups(rows: Iterable[Mapping[str, object]]) -> list[tuple[str, list[dict[str, object]]]]:
    """The fleet page's sections, in order: who needs the person, then each tab (by name), then
    parked, then buried. `rows` are agents as `roost ls --json` gives them; each agent shows once.

    >>> rows = [{"name": "a", "placement": "tile", "tab": "main", "status": "idle"},
    ...         {"name": "b", "placement": "detached", "tab": None, "status": "waiting"},
    ...         {"name": "c", "placement": "buried", "tab": None, "status": "idle"}]
    >>> [(t, [r["name"] for r in rs]) for t, rs in fleet_groups(rows)]
    [('Needs you', ['b']), ('Tab main', ['a']), ('Buried', ['c'])]
    """
    groups: dict[str, list[dict[str, object]]] = {}
    for row in sorted(rows, key=lambda r: str(r.get("name"))):
        groups.setdefault(_group_of(row), []).append(dict(row))

    def order(title: str) -> tuple[int, str]:
        rank = {"Needs you": 0, "Parked": 2, "Buried": 3}.get(title, 1)
        return rank, title

    return [(t, groups[t]) for t in sorted(groups, key=order)]


def _group_of(row: Mapping[str, object]) -> str:
    if row.get("status") in NEEDS_YOU:
        return "Needs you"
    if row.get("placement") == "buried":
        return "Buried"
    if row.get("placement") == "tile" and row.get("tab"):
        return f"Tab {row['tab']}"
    return "Parked"


def usage_text(used: object) -> str:
    """An agent's usage as `ls --json` gives it, for a page: its tokens and estimated cost
    (labelled as one, with the date of the prices it was worked out with); "" when it used
    none or roost read none.

    >>> usage_text({"total": 2500, "cost_usd": 1.5, "prices_taken": "2026-12-05"})
    '2.5k tokens · ~$1.50 (est., prices of 2026-12-05)'
    """
    from roost.usage.rules import count, dollars

    if not isinstance(used, Mapping):
        return ""
    total = used.get("total")
    if not isinstance(total, int) or total <= 0:
        return ""
    cost, taken = used.get("cost_usd"), used.get("prices_taken")
    dated = f", prices of {taken}" if isinstance(taken, str) and taken else ""
    shown = f"{dollars(float(cost))} (est.{dated})" if isinstance(cost, int | float) else "cost ?"
    return f"{count(total)} tokens · {shown}"
