"""`roost open`'s view of a tab: the tile tree as tmux panes on the view server.

`layout` turns the tree into the order tmux must work in (one first pane, then splits, each of a
pane already made); `build` carries it out through a TmuxClient. Each pane runs a command the
caller gives per tile (a client attached to that agent's home).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from roost.core import workspace as ws
from roost.core.errors import RoostError
from roost.tmux.protocol import TmuxClient, TmuxError, TmuxTimeout


@dataclass(frozen=True, slots=True)
class Split:
    target: str  # the tile whose pane is split (it keeps the first part)
    tile: str  # the tile the new pane shows
    side_by_side: bool  # a vertical divider (the tree's "v"), else one over the other
    percent: int  # the new pane's share, kept within 10..90 so no pane vanishes


def layout(tree: ws.Node) -> tuple[str, list[Split]]:
    """The tile of the first pane, and the splits that make the tree from it, in order.

    >>> tree = ws.split("v", ws.leaf("a"), ws.split("h", ws.leaf("b"), ws.leaf("c")), 0.6)
    >>> layout(tree)  # doctest: +NORMALIZE_WHITESPACE
    ('a', [Split(target='a', tile='b', side_by_side=True, percent=40),
           Split(target='b', tile='c', side_by_side=False, percent=50)])
    """
    splits: list[Split] = []

    def walk(node: ws.Node) -> None:
        if "leaf" in node:
            return
        splits.append(
            Split(
                target=ws.leaves(node["a"])[0],
                tile=ws.leaves(node["b"])[0],
                side_by_side=node["split"] == "v",
                percent=max(10, min(90, round((1 - node["ratio"]) * 100))),
            )
        )
        walk(node["a"])
        walk(node["b"])

    walk(tree)
    return ws.leaves(tree)[0], splits


def build(
    view: TmuxClient,
    name: str,
    title: str,
    tree: ws.Node,
    pane_argv: Callable[[str], Sequence[str]],
    width: int,
    height: int,
) -> list[str]:
    """(Re)build session `name` on the view server as the tree; returns the argv attaching to it.
    A view that cannot be built is removed whole: its panes are clients attached to agents'
    homes, and a half-built view's narrow clients would hold those homes at their size."""
    first, splits = layout(tree)
    panes = {first: view.open_view(name, title, width, height, pane_argv(first))}
    try:
        for split in splits:
            panes[split.tile] = view.split_pane(
                panes[split.target], split.side_by_side, split.percent, pane_argv(split.tile)
            )
    except TmuxError as exc:
        try:
            view.kill_session(f"={name}")
        except TmuxTimeout:
            raise
        except TmuxError:
            pass  # gone already
        if isinstance(exc, TmuxTimeout):
            raise
        raise RoostError(
            f"{len(splits) + 1} tiles do not fit in {width}x{height} "
            f"({exc.stderr or exc}); the view was removed"
        ) from None
    return view.attach_argv(f"={name}")
