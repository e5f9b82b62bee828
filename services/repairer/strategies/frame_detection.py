"""Which function parameters of a pandas module carry a DataFrame: the ones used as a frame, and the ones a
frame flows into or out of through the module's own calls. Also the frames a function derives from each
parameter, and every call of the module's functions with what it passes to each parameter."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from libs.python_source.column_reads import derived_names, expression_root, own_nodes, parameter_use
from services.repairer.strategies.module_index import ModuleFunction, ModuleIndex, module_level_nodes

Pair = tuple[int, str]
"""A function (by index) and one of its parameters."""


class FrameParameters:
    def __init__(self, module: ModuleIndex) -> None:
        self.module = module
        functions = module.functions
        self.derived: dict[Pair, frozenset[str]] = {
            (number, name): derived_names(function.node, name)
            for number, function in enumerate(functions)
            for name in function.parameters
        }
        """Per parameter, the names the function derives from it (the parameter itself included)."""
        use = {
            (number, name): parameter_use(function.node, name, module.pandas_alias)
            for number, function in enumerate(functions)
            for name in function.parameters
        }
        self.edges: set[tuple[Pair, Pair]] = set()
        """(caller parameter, callee parameter): the caller passes a name derived from its parameter."""
        self.calls: dict[Pair, list[tuple[int | None, ast.expr]]] = {}
        """Per callee parameter, (calling function, or None at module level; the argument) for each call."""
        for caller_number, caller, nodes in self._scopes():
            for node in nodes:
                if not isinstance(node, ast.Call):
                    continue
                callee = module.callee(node, caller)
                if callee is None:
                    continue
                callee_number = module.index[id(callee.node)]
                for parameter, argument in module.arguments(node, callee):
                    self.calls.setdefault((callee_number, parameter), []).append((caller_number, argument))
                    if caller_number is None or caller is None:
                        continue
                    root = expression_root(argument)
                    for name in caller.parameters:
                        if root in self.derived[(caller_number, name)]:
                            self.edges.add(((caller_number, name), (callee_number, parameter)))
        self.frames = {pair for pair, kind in use.items() if kind == "frame"}
        """The parameters that carry a frame."""
        grown = True
        while grown:
            grown = False
            for source, target in sorted(self.edges):
                for known, other in ((source, target), (target, source)):
                    if known in self.frames and other not in self.frames and use[other] == "unknown":
                        self.frames.add(other)
                        grown = True

    def _scopes(self) -> Iterator[tuple[int | None, ModuleFunction | None, list[ast.AST]]]:
        yield None, None, list(module_level_nodes(self.module.tree))
        for number, function in enumerate(self.module.functions):
            yield number, function, list(own_nodes(function.node))
