"""The "rename at frame entry" plan of a pandas module: which functions receive a frame that reads an old
column, which of them are the outermost entry points that get the rename line, the line itself, and what
those renames already take care of.

Only the outermost functions get the line: one whose frame parameter is fed, at every call in the module,
from another such function's frame gets none (a frame parameter passed on to such a function makes the caller
one too). The line goes at the start of the body (after the docstring):
``raw = raw.rename(columns={"new": "old"})``, in the quotes of the file's own literal naming the column.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from libs.python_source.column_reads import expression_root, own_nodes
from libs.python_source.literals import literal_like
from libs.python_source.source_text import Replacement, SourceText
from services.repairer.strategies.body_start import body_start
from services.repairer.strategies.column_access import ColumnAccess
from services.repairer.strategies.frame_column_reads import FrameReads, frame_reads
from services.repairer.strategies.frame_detection import FrameParameters, Pair
from services.repairer.strategies.module_index import ModuleIndex


@dataclass
class Covered:
    """What the entry-point renames already take care of: every node of a function that receives a renamed
    frame (its keys stay in the old schema, outputs such as ``out["old"] = ...`` included), and module
    constants by name."""

    nodes: set[int] = field(default_factory=set)
    names: dict[str, set[str]] = field(default_factory=dict)
    """Old column -> module-level constant names read on a renamed frame."""
    holders: set[int] = field(default_factory=set)
    """The string constants (by id, of any module) naming an old column on a renamed frame: they keep it."""


class FrameEntryRenames:
    """Which functions of a pandas module receive a frame that reads an old column, and which of them are
    the entry points that get the rename line."""

    def __init__(
        self,
        module: ModuleIndex,
        renames: dict[str, str],
        accesses: Mapping[str, Sequence[ColumnAccess]] | None = None,
    ) -> None:
        """``accesses``: per old column, the module's reads of it that ``column_access`` finds."""
        self.module = module
        self.parameters = FrameParameters(module)
        frames = self.parameters.frames
        edges = self.parameters.edges
        self.reads: dict[tuple[Pair, str], FrameReads] = {}
        self.reaches: dict[Pair, set[str]] = {pair: set() for pair in frames}
        """Per frame parameter, the old columns read on it, directly or by the functions it is passed to."""
        for pair in sorted(frames):
            for old in renames:
                function, derived = module.functions[pair[0]], self.parameters.derived[pair]
                reads = frame_reads(module, function, derived, old, (accesses or {}).get(old, ()))
                self.reads[(pair, old)] = reads
                if reads.read:
                    self.reaches[pair].add(old)
        grown = True
        while grown:
            grown = False
            for source, target in sorted(edges):
                if source in frames and target in frames and not self.reaches[target] <= self.reaches[source]:
                    self.reaches[source] |= self.reaches[target]
                    grown = True
        self.entries = sorted(pair for pair in frames if self.reaches[pair] and not self._fed(pair))
        self.covered = self._covered()

    def _fed(self, pair: Pair) -> bool:
        """Whether every call of the function in the module passes the parameter a frame that another
        frame-reading function derived from its own frame parameter."""
        calls = self.parameters.calls.get(pair, [])
        return bool(calls) and all(self._from_reader(caller, argument, pair[0]) for caller, argument in calls)

    def _from_reader(self, caller: int | None, argument: ast.expr, callee: int) -> bool:
        if caller is None or caller == callee:
            return False
        root = expression_root(argument)
        return any(
            root in self.parameters.derived[(caller, name)] and self.reaches.get((caller, name))
            for name in self.module.functions[caller].parameters
        )

    def _covered(self) -> Covered:
        covered = Covered()
        pending = list(self.entries)
        seen: set[Pair] = set()
        mapping = {pair: set(self.reaches[pair]) for pair in self.entries}
        while pending:
            pair = pending.pop()
            if pair in seen:
                continue
            seen.add(pair)
            covered.nodes.update(id(node) for node in own_nodes(self.module.functions[pair[0]].node))
            for old in mapping.get(pair, self.reaches[pair]):
                covered.names.setdefault(old, set()).update(self.reads[(pair, old)].names)
                covered.holders.update(id(constant) for constant in self.reads[(pair, old)].constants)
            pending.extend(
                target
                for source, target in self.parameters.edges
                if source == pair and target in self.parameters.frames
            )
        return covered

    def insertions(
        self, text: SourceText, renames: dict[str, str]
    ) -> Iterator[tuple[str, Replacement, set[str]] | str]:
        """(function, the inserted line, the columns it renames) per entry function; a reason when the line
        cannot go at the start of an entry function's body."""
        example = self._quote_example(text)
        by_function: dict[int, list[str]] = {}
        for number, name in self.entries:
            by_function.setdefault(number, []).append(name)
        for number, names in sorted(by_function.items()):
            function = self.module.functions[number]
            placement = body_start(text, function.node)
            if isinstance(placement, str):
                yield f"{function.qualname}: {placement}"
                continue
            line, indent = placement
            point = text.line_start(line)
            olds: set[str] = set()
            lines = []
            for name in sorted(names, key=function.parameters.index):
                columns = [old for old in renames if old in self.reaches[(number, name)]]
                olds.update(columns)
                pairs = ", ".join(
                    f"{literal_like(renames[old], example)}: {literal_like(old, example)}" for old in columns
                )
                lines.append(f"{indent}{name} = {name}.rename(columns={{{pairs}}}){text.newline}")
            yield function.qualname, Replacement(point, point, "".join(lines)), olds

    def _quote_example(self, text: SourceText) -> str:
        """A string literal of the file naming an old column, to write the new line in its quotes."""
        nodes = [
            node for (_, _), reads in self.reads.items() for node in reads.constants if node in self.module.parents
        ]
        for old, names in sorted(self.covered.names.items()):
            for name in sorted(names):
                value = self.module.sequences.get(name)
                items = (value.keys if isinstance(value, ast.Dict) else value.elts) if value is not None else []  # type: ignore[attr-defined]
                nodes.extend(item for item in items if isinstance(item, ast.Constant) and item.value == old)
                if name in self.module.strings:
                    nodes.append(self.module.strings[name])
        nodes.sort(key=lambda node: (node.lineno, node.col_offset))
        return text.segment(nodes[0]) if nodes else '""'
