"""unseen_category: map a categorical column's values unseen in training to the workspace's declared default.

When the module encodes the column against a catalogue (``encoder_catalogues``: ``OneHotEncoder(categories=
[PLANS])`` in a ColumnTransformer), values outside it are mapped where the frame takes its final values:

- after the function's last write of the column (the code's own cleaning, ``out["c"] = out["c"].str.strip()``):
  ``out["c"] = out["c"].where(out["c"].isin(PLANS), "<default>")``;
- otherwise at the start of a function that selects the column from a frame parameter (``frame[CAT + NUM]``)
  or hands the parameter whole to a model routing it: ``frame = frame.replace({"c": {value: "<default>" for
  value in set(frame["c"]) - set(PLANS)}})`` (a copy: the caller's frame is not changed).

Elsewhere, where the column is read (``column_access``: a key, a constant, a class attribute, a default...)
and used with a known set of categories, the site changes so a value outside that set behaves like the
default category:

- ``R.map(M)`` with ``M`` a module-level dict   -> ``R.map(lambda value: M.get(value, M["<default>"]))``
- ``M[R]``, or ``M[v]`` in a comprehension ``for v in R``  -> ``M.get(R, M["<default>"])``
- ``R == v`` with ``v`` a loop or comprehension variable over a catalogue (one-hot loops), and ``f(R, CATS)`` /
  ``pd.Categorical(R, categories=CATS)`` with ``CATS`` a list of strings (a constant, a class attribute, a
  literal): ``R`` becomes ``np.where(np.isin(R, CATS), R, "<default>")`` in a numpy module,
  ``R.where(R.isin(CATS), "<default>")`` in a pandas one, ``(R if R in CATS else "<default>")`` for a record's
  field.
- ``R.map(self.learnt_)`` (``learnt_lookups``: a mapping the object learnt in ``fit``, its categories known only
  when the code runs) -> ``R.where(R.isin(self.learnt_.keys()), "<default>").map(self.learnt_)``: a value it
  never saw is looked up as the default. The column may reach ``R`` through a loop over a column list every
  construction of the class passes (``for c in self.columns`` with ``FrequencyEncoder(["payment_method"])``).

Refused without a declared default for the column, or when the default is not one of the known categories.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from typing import Any

from contracts.catalogue import RepairStrategy, answers
from libs.python_source.definitions import FunctionNode, dict_literals, string_values
from libs.python_source.imports import module_alias
from libs.python_source.literals import literal_like
from libs.python_source.source_text import Replacement, SourceText, apply_replacements
from services.repairer.repair_context import RepairContext
from services.repairer.strategies.body_start import body_start
from services.repairer.strategies.column_access import (
    ColumnAccess,
    column_accesses,
    enclosing_function,
    frame_parameter,
    is_record,
)
from services.repairer.strategies.column_names import ColumnNames
from services.repairer.strategies.column_transformers import ColumnTransformers
from services.repairer.strategies.encoder_catalogues import Catalogue, encoder_catalogue
from services.repairer.strategies.learnt_lookups import learnt_lookups
from services.repairer.strategies.outcome import FileEdit, MultiFileEdit, StrategyRefusal, multi_file_edit
from services.repairer.strategies.package_modules import PackageModules, ParsedModule
from services.repairer.strategies.quote_example import quote_example

STRATEGY = RepairStrategy.UNSEEN_CATEGORY
ANSWERS = answers(STRATEGY)
NEEDS = ("unseen_categories", "categorical_default")

Comprehension = ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp


class _UnknownDefault(ValueError):
    pass


class _ModuleSites:
    """The replacements of one module for one column."""

    def __init__(self, module: ParsedModule, names: ColumnNames, column: str, default: Any) -> None:
        self.module = module
        self.names = names
        self.column = column
        self.default = default
        self.text = SourceText(module.source)
        self.dicts = dict_literals(module.tree)
        self.numpy = module_alias(module.tree, "numpy")
        self.pandas = module_alias(module.tree, "pandas")
        self.quote = quote_example(module.tree, self.text, column)
        self.written = literal_like(default, self.quote)
        self.accesses = column_accesses(module, names, column)
        self._learnt_spans: set[tuple[int, int]] = set()

    def replacements(self) -> list[Replacement]:
        handled: set[int] = set()
        found: list[Replacement] = []
        if self.pandas is not None:
            transformers = ColumnTransformers(self.module, self.names)
            catalogue = encoder_catalogue(transformers, self.names, self.column)
            if catalogue is not None:
                found.extend(self._encoded(transformers, catalogue, handled))
        for access in self.accesses:
            if access.single and (access.function is None or id(access.function) not in handled):
                found.extend(self._at_read(access))
        return found

    # the frame fed to a catalogue encoder

    def _encoded(self, transformers: ColumnTransformers, catalogue: Catalogue, handled: set[int]) -> list[Replacement]:
        name = self.text.segment(catalogue.node)
        found = list(self._after_cleaning(name, handled))  # marks the functions that clean the column handled
        found += self._at_entries(transformers, name, handled)
        if found:
            self._check(catalogue.values, name)
        return found

    def _after_cleaning(self, catalogue: str, handled: set[int]) -> Iterator[Replacement]:
        """The mapping after each function's last write of the column."""
        text = self.text
        for statement, target in self._last_writes():
            point = text.line_end(statement.end_lineno or statement.lineno)
            segment = text.segment(target)
            line = f"{segment} = {segment}.where({segment}.isin({catalogue}), {self.written})"
            yield Replacement(point, point, f"{text.indent(statement.lineno)}{line}{text.newline}")
            handled.add(id(enclosing_function(statement, self.module.parents)))

    def _at_entries(self, transformers: ColumnTransformers, catalogue: str, handled: set[int]) -> Iterator[Replacement]:
        """The mapping at the start of the other functions that select the column from a frame parameter or
        hand the parameter whole to a model routing it."""
        text, key = self.text, literal_like(self.column, self.quote)
        for function, frames in self._entry_frames(transformers, handled).values():
            placement = body_start(text, function)
            if isinstance(placement, str):
                continue
            line, indent = placement
            point = text.line_start(line)
            for frame in frames:
                unseen = f"{{value: {self.written} for value in set({frame}[{key}]) - set({catalogue})}}"
                yield Replacement(point, point, f"{indent}{frame} = {frame}.replace({{{key}: {unseen}}}){text.newline}")
            handled.add(id(function))

    def _entry_frames(
        self, transformers: ColumnTransformers, handled: set[int]
    ) -> dict[int, tuple[FunctionNode, list[str]]]:
        entries: dict[int, tuple[FunctionNode, list[str]]] = {}

        def enter(function: FunctionNode, frame: str) -> None:
            frames = entries.setdefault(id(function), (function, []))[1]
            if id(function) not in handled and frame not in frames:
                frames.append(frame)

        for access in self.accesses:
            frame = frame_parameter(access, self.module.parents, self.pandas) if access.kind == "columns" else None
            if frame is not None and access.function is not None:
                enter(access.function, frame)
        for whole in transformers.whole_frames(self.column):
            enter(whole.function, whole.parameter)
        return {number: entry for number, entry in entries.items() if entry[1]}

    def _last_writes(self) -> Iterator[tuple[ast.stmt, ast.Subscript]]:
        """Per function, its last statement writing the column on a frame (``out["c"] = ...``), when it starts
        its own line."""
        last: dict[int, tuple[ast.stmt, ast.Subscript]] = {}
        for node in ast.walk(self.module.tree):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
                continue
            target = node.targets[0]
            if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)):
                continue
            holder = self.names.holder(target.slice)
            function = enclosing_function(node, self.module.parents)
            if holder is None or holder.column != self.column or function is None:
                continue
            write = ColumnAccess(target, self.column, target.value, function, "key", holder)
            if is_record(write, self.module.parents) or len(self.text.indent(node.lineno)) != node.col_offset:
                continue
            if id(function) not in last or last[id(function)][0].lineno < node.lineno:
                last[id(function)] = (node, target)
        yield from last.values()

    # a read used with known categories

    def _at_read(self, access: ColumnAccess) -> Iterator[Replacement]:
        text, parents, node = self.text, self.module.parents, access.node
        parent = parents.get(node)
        segment = text.segment(node)
        if isinstance(parent, ast.Attribute) and parent.attr == "map":
            call = parents.get(parent)
            mapping = self._dict_argument(call)
            if mapping is not None and isinstance(call, ast.Call):
                self._check(string_values(self.dicts[mapping]), mapping)
                start, end = text.span(call.args[0])
                yield Replacement(start, end, f"lambda value: {mapping}.get(value, {mapping}[{self.written}])")
                return
        if isinstance(parent, ast.Subscript) and parent.slice is node and self._is_dict(parent.value):
            yield self._get_with_default(parent, segment)
            return
        if isinstance(parent, ast.comprehension) and parent.iter is node and isinstance(parent.target, ast.Name):
            yield from self._comprehension_lookups(parents[parent], parent.target.id)
            return
        catalogue = self._compared_catalogue(node, parent) or self._categories_argument(node, parent)
        if catalogue is None:
            yield from self._learnt(access)
            return
        values, name = catalogue
        wrapped = self._as_known(segment, name, is_record(access, parents))
        if wrapped is not None:
            self._check(values, name)
            start, end = text.span(node)
            yield Replacement(start, end, wrapped)

    def _learnt(self, access: ColumnAccess) -> Iterator[Replacement]:
        """``R.map(self.learnt_)``: values outside what the object learnt become the default before the lookup."""
        if self.pandas is None or is_record(access, self.module.parents):
            return
        for lookup in learnt_lookups(access.node, access.function, self.module.parents):
            start, end = self.text.span(lookup.receiver)
            if (start, end) in self._learnt_spans:
                continue
            self._learnt_spans.add((start, end))
            values, mapping = self.text.segment(lookup.receiver), self.text.segment(lookup.mapping)
            yield Replacement(start, end, f"{values}.where({values}.isin({mapping}.keys()), {self.written})")

    def _as_known(self, segment: str, catalogue: str, scalar: bool) -> str | None:
        if scalar:
            return f"({segment} if {segment} in {catalogue} else {self.written})"
        if self.numpy is not None:
            return f"{self.numpy}.where({self.numpy}.isin({segment}, {catalogue}), {segment}, {self.written})"
        if self.pandas is not None:
            return f"{segment}.where({segment}.isin({catalogue}), {self.written})"
        return None

    def _compared_catalogue(self, node: ast.expr, parent: ast.AST | None) -> tuple[tuple[str, ...], str] | None:
        """``R == v`` / ``R != v`` with ``v`` a loop or comprehension variable running over a catalogue."""
        if not (
            isinstance(parent, ast.Compare) and len(parent.ops) == 1 and isinstance(parent.ops[0], ast.Eq | ast.NotEq)
        ):
            return None
        other = parent.comparators[0] if parent.left is node else parent.left
        if not isinstance(other, ast.Name):
            return None
        iterable = _loop_iterable(parent, other.id, self.module.parents)
        values = self.names.column_list(iterable) if iterable is not None else None
        return (values, self.text.segment(iterable)) if values is not None and iterable is not None else None

    def _categories_argument(self, node: ast.expr, parent: ast.AST | None) -> tuple[tuple[str, ...], str] | None:
        """``f(R, CATS)`` / ``pd.Categorical(R, categories=CATS)``: exactly one other argument a list of strings."""
        if not (isinstance(parent, ast.Call) and node in parent.args):
            return None
        others = [arg for arg in parent.args if arg is not node] + [keyword.value for keyword in parent.keywords]
        found = [(values, other) for other in others if (values := self.names.column_list(other)) is not None]
        if len(found) != 1:
            return None
        values, other = found[0]
        return values, self.text.segment(other)

    def _comprehension_lookups(self, comprehension: ast.AST, variable: str) -> Iterator[Replacement]:
        assert isinstance(comprehension, Comprehension)
        elements = [comprehension.key, comprehension.value] if isinstance(comprehension, ast.DictComp) else []
        elements = elements or [comprehension.elt]  # type: ignore[union-attr]
        for element in elements:
            for node in ast.walk(element):
                if (
                    isinstance(node, ast.Subscript)
                    and isinstance(node.slice, ast.Name)
                    and node.slice.id == variable
                    and self._is_dict(node.value)
                ):
                    yield self._get_with_default(node, variable)

    def _get_with_default(self, lookup: ast.Subscript, key: str) -> Replacement:
        mapping = lookup.value.id  # type: ignore[attr-defined]
        self._check(string_values(self.dicts[mapping]), mapping)
        start, end = self.text.span(lookup)
        return Replacement(start, end, f"{mapping}.get({key}, {mapping}[{self.written}])")

    def _dict_argument(self, call: ast.AST | None) -> str | None:
        if isinstance(call, ast.Call) and len(call.args) == 1 and not call.keywords and self._is_dict(call.args[0]):
            return call.args[0].id  # type: ignore[attr-defined]
        return None

    def _is_dict(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id in self.dicts

    def _check(self, known: tuple[str, ...], name: str) -> None:
        if self.default not in known:
            raise _UnknownDefault(f"the declared default {self.default!r} is not one of the categories of {name}")


def propose(context: RepairContext) -> MultiFileEdit | StrategyRefusal:
    defaults = {
        column: context.categorical_defaults[column]
        for column in context.hints.unseen_categories
        if column in context.categorical_defaults
    }
    package = PackageModules(context)
    edits: list[FileEdit] = []
    for module in package.permitted_modules():
        names = ColumnNames(module, package)
        try:
            replacements = [
                replacement
                for column, default in defaults.items()
                for replacement in _ModuleSites(module, names, column, default).replacements()
            ]
        except _UnknownDefault as error:
            return _refuse(str(error))
        if replacements:
            new_text = apply_replacements(module.source, replacements)
            edits.append(FileEdit(path=module.path, old_text=module.source, new_text=new_text))
    if not edits:
        return _refuse(f"no permitted file maps {', '.join(sorted(defaults))} through a known set of categories")
    summary = ", ".join(f"{column} -> {default!r}" for column, default in sorted(defaults.items()))
    return multi_file_edit(STRATEGY, edits, rationale=f"values unseen in training now map to the default ({summary})")


def _loop_iterable(node: ast.AST, variable: str, parents: Mapping[ast.AST, ast.AST]) -> ast.expr | None:
    """What the innermost loop or comprehension binding ``variable`` around ``node`` runs over."""
    child, parent = node, parents.get(node)
    while parent is not None and not isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        if isinstance(parent, ast.For | ast.AsyncFor) and child in parent.body and _binds(parent.target, variable):
            return parent.iter
        if isinstance(parent, Comprehension) and child is not None:
            for generator in parent.generators:
                if _binds(generator.target, variable):
                    return generator.iter
        child, parent = parent, parents.get(parent)
    return None


def _binds(target: ast.expr, name: str) -> bool:
    return isinstance(target, ast.Name) and target.id == name


def _refuse(reason: str) -> StrategyRefusal:
    return StrategyRefusal(strategy=STRATEGY, reason=reason)
