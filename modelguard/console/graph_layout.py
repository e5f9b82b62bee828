"""Graphviz lays the lineage graph out (``dot -Tplain``, a subprocess with a timeout); the SVG is drawn by the
template from the positions it gives back.

No metadata text goes to Graphviz: nodes are ``n0``, ``n1``, ... with an empty label and a fixed size computed
from their label's length, so a hostile DataHub name can neither break the DOT nor reach the SVG unescaped.
When ``dot`` is missing, fails or runs out of time, :class:`LayoutUnavailable` says why in one line.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from dataclasses import dataclass

from modelguard.console.lineage import LineageEdge, LineageGraph, LineageNode

TIMEOUT_S = 10.0
MAX_NODES = 400
MAX_LABEL = 36
POINTS_PER_INCH = 72.0
CHAR_WIDTH_IN = 0.085
NODE_HEIGHT_IN = 0.5


class LayoutUnavailable(RuntimeError):
    pass


@dataclass(frozen=True)
class PlacedNode:
    node: LineageNode
    x: float
    y: float
    width: float
    height: float

    @property
    def text(self) -> str:
        label = self.node.label
        return label if len(label) <= MAX_LABEL else label[: MAX_LABEL - 1] + "…"


@dataclass(frozen=True)
class PlacedEdge:
    edge: LineageEdge
    path: str
    """SVG path data of Graphviz's spline."""


@dataclass(frozen=True)
class Layout:
    width: float
    height: float
    nodes: list[PlacedNode]
    edges: list[PlacedEdge]


def layout(graph: LineageGraph, dot: str | None = None, timeout_s: float = TIMEOUT_S) -> Layout:
    executable = dot or shutil.which("dot")
    if executable is None:
        raise LayoutUnavailable("Graphviz is not installed here (no `dot` on PATH; apt-get install graphviz)")
    if len(graph.nodes) > MAX_NODES:
        raise LayoutUnavailable(f"the lineage has {len(graph.nodes)} entities, more than the {MAX_NODES} laid out")
    ids = {node.urn: f"n{i}" for i, node in enumerate(graph.nodes)}
    try:
        done = subprocess.run(
            [executable, "-Tplain"],
            input=dot_source(graph, ids),
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise LayoutUnavailable(f"Graphviz took longer than {timeout_s:g} s to lay the lineage out") from exc
    except OSError as exc:
        raise LayoutUnavailable(f"Graphviz could not be run: {exc.strerror or exc}") from exc
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or ["no message"])[0][:200]
        raise LayoutUnavailable(f"Graphviz failed (exit {done.returncode}): {first}")
    return parse_plain(done.stdout, graph, ids)


def dot_source(graph: LineageGraph, ids: dict[str, str]) -> str:
    lines = [
        "digraph lineage {",
        "  graph [rankdir=LR, nodesep=0.2, ranksep=0.5];",
        '  node [shape=box, fixedsize=true, label=""];',
    ]
    for node in graph.nodes:
        width = round(min(len(node.label), MAX_LABEL) * CHAR_WIDTH_IN + 0.4, 3)
        lines.append(f"  {ids[node.urn]} [width={width}, height={NODE_HEIGHT_IN}];")
    lines += [f"  {ids[e.source]} -> {ids[e.target]};" for e in graph.edges]
    return "\n".join([*lines, "}"]) + "\n"


def parse_plain(text: str, graph: LineageGraph, ids: dict[str, str]) -> Layout:
    by_id = {ids[n.urn]: n for n in graph.nodes}
    edges_by_ids = {(ids[e.source], ids[e.target]): e for e in graph.edges}
    width = height = 0.0
    nodes: list[PlacedNode] = []
    edges: list[PlacedEdge] = []
    try:
        for line in text.splitlines():
            fields = shlex.split(line)
            if not fields:
                continue
            if fields[0] == "graph":
                width, height = float(fields[2]) * POINTS_PER_INCH, float(fields[3]) * POINTS_PER_INCH
            elif fields[0] == "node":
                x, y, w, h = (float(v) * POINTS_PER_INCH for v in fields[2:6])
                nodes.append(PlacedNode(by_id[fields[1]], x - w / 2, height - y - h / 2, w, h))
            elif fields[0] == "edge":
                count = int(fields[3])
                points = [
                    (float(fields[4 + 2 * i]) * POINTS_PER_INCH, height - float(fields[5 + 2 * i]) * POINTS_PER_INCH)
                    for i in range(count)
                ]
                edges.append(PlacedEdge(edges_by_ids[(fields[1], fields[2])], _spline(points)))
    except (IndexError, KeyError, ValueError) as exc:
        raise LayoutUnavailable(f"Graphviz's layout could not be read: {type(exc).__name__}") from exc
    return Layout(round(width, 2), round(height, 2), nodes, edges)


def _spline(points: list[tuple[float, float]]) -> str:
    """Graphviz gives a cubic B-spline as 1 + 3n control points."""
    (x0, y0), rest = points[0], points[1:]
    segments = [f"M{x0:.1f},{y0:.1f}"]
    for i in range(0, len(rest) - 2, 3):
        (x1, y1), (x2, y2), (x3, y3) = rest[i : i + 3]
        segments.append(f"C{x1:.1f},{y1:.1f} {x2:.1f},{y2:.1f} {x3:.1f},{y3:.1f}")
    return " ".join(segments)
