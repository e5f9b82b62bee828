"""Constructs a repair may never add, whatever the module already uses (the names are in
:mod:`libs.patch_guard.refused_names`):

- ``rebinding``: an assignment into an imported module or object, or into builtins (``json.dumps = ...``,
  ``sys.stdout = ...``, ``os.environ["X"] = ...``, ``__builtins__["len"] = ...``), ``setattr``/``delattr``
  on anything but ``self``, a module-level rebinding of a builtin or an imported name (``print = ...``,
  ``def f1_score(...)`` next to ``from sklearn.metrics import f1_score``), a module-level ``__getattr__`` or
  ``__dir__``, ``global`` for such a name, a function bound to an attribute
  (``Pipeline.predict = lambda self, X: ...``), and a method that changes an imported list, dict or set in
  place (``COLUMNS.append(...)`` after ``from pkg.columns import COLUMNS``);
- ``exit``, ``outside_input``, ``blocking``, ``output``: the names of the tables;
- ``unbounded_loop``: every ``while`` loop (the guard does not try to prove a bound: a repair iterates with
  ``for`` over something finite), ``iter(callable, sentinel)``, ``itertools.count``/``cycle``/``repeat``,
  and a function calling itself;
- ``outside_reference``: a string that is a URL, a home or absolute path, a ``..`` component or a
  credentials file (docstrings excepted);
- ``label_reference``: a string, name, attribute or keyword naming one of the workspace's label columns.

:func:`refused_constructs` finds them all in a tree; :func:`new_refused` keeps the ones a patch adds.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from libs.patch_guard.changed_statements import ChangedStatements
from libs.patch_guard.constructs import MODULE_ALIASES, normalised
from libs.patch_guard.module_uses import resolver_with
from libs.patch_guard.name_resolution import BUILTIN_NAMES
from libs.patch_guard.refused_names import REFUSED_ATTRIBUTES, RefusedCategory, refused_category
from libs.patch_guard.string_references import folded_string, names_label, outside_reference
from libs.python_source.tree_facts import kept_with
from libs.python_source.tree_walk import nodes_of, parents_of

MODULE_NAMES = frozenset(sys.stdlib_module_names) | frozenset(MODULE_ALIASES) | {"__builtins__", "builtins"}
"""Names that are a module even when nothing in a hunk read alone imports them."""
FUNCTION_WRAPPERS = frozenset({"functools.partial", "types.MethodType", "types.FunctionType"})
MUTATING_METHODS = frozenset(
    {"append", "extend", "insert", "remove", "pop", "popitem", "clear", "update", "setdefault", "sort", "reverse"}
)
"""Methods that change a list, dict or set in place: on an imported object, they change it for every importer."""
MODULE_HOOKS = frozenset({"__getattr__", "__dir__"})
"""Module-level functions that answer for every name the module does not have (PEP 562)."""
MAX_SHOWN = 60
SCANNED_NODES = ast.Import | ast.ImportFrom | ast.Name | ast.Attribute | ast.Subscript | ast.Call | ast.While
SCANNED_NODES |= ast.Assign | ast.Global | ast.keyword | ast.Constant | ast.JoinedStr | ast.BinOp
"""The nodes an always-refused construct can be on (``_Scan._node`` finds nothing on any other: of the other
expressions none is a string ``folded_string`` reads)."""


@dataclass(frozen=True)
class RefusedFinding:
    category: RefusedCategory
    description: str
    line: int

    @property
    def key(self) -> tuple[str, str]:
        return self.category, self.description


def refused_constructs(
    tree: ast.Module, labels: tuple[str, ...] = (), outer_imports: tuple[ast.stmt, ...] = ()
) -> list[tuple[RefusedFinding, ast.AST]]:
    """Every always-refused construct of ``tree`` with the node it is on, in source order; ``outer_imports``
    resolve its names too (for a hunk parsed alone: the imports the rest of the hunks make). Without them the
    answer for ``labels`` is kept with the tree for the next call."""
    if outer_imports:
        return _refused_constructs(tree, labels, outer_imports)
    by_labels: dict[tuple[str, ...], tuple[tuple[RefusedFinding, ast.AST], ...]] = kept_with(tree, "refused", dict)
    known = by_labels.get(labels)
    if known is None:
        known = by_labels[labels] = tuple(_refused_constructs(tree, labels, ()))
    return list(known)


def _refused_constructs(
    tree: ast.Module, labels: tuple[str, ...], outer_imports: tuple[ast.stmt, ...]
) -> list[tuple[RefusedFinding, ast.AST]]:
    found = list(_Scan(tree, labels, outer_imports).findings())
    unique = {(finding.key, finding.line, id(node)): (finding, node) for finding, node in found}
    return sorted(unique.values(), key=lambda pair: (pair[0].line, pair[0].description, pair[0].category))


def new_refused(
    before: list[RefusedFinding], after: list[tuple[RefusedFinding, ast.AST]], changed: ChangedStatements
) -> list[RefusedFinding]:
    """The findings of ``after`` in a statement the patch adds or changes, and those the module has more of
    than it had before (an unchanged line whose names the patch redirects)."""
    before_count = Counter(finding.key for finding in before)
    unchanged: dict[tuple[str, str], list[RefusedFinding]] = defaultdict(list)
    added: list[RefusedFinding] = []
    for finding, node in after:
        if changed.changed(node):
            added.append(finding)
        else:
            unchanged[finding.key].append(finding)
    for key, findings in unchanged.items():
        added.extend(findings[before_count[key] :])
    return sorted(set(added), key=lambda finding: (finding.line, finding.description, finding.category))


class _Scan:
    def __init__(self, tree: ast.Module, labels: tuple[str, ...], outer_imports: tuple[ast.stmt, ...]) -> None:
        self.tree = tree
        self.labels = labels
        self.resolver = resolver_with(tree, outer_imports)
        self.parents = parents_of(tree)
        self.imported = _import_bound_names(tree)
        self.functions = {
            node.name
            for node in nodes_of(tree, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        }

    def findings(self) -> Iterator[tuple[RefusedFinding, ast.AST]]:
        for node in nodes_of(self.tree, SCANNED_NODES):
            for category, description in self._node(node):
                line = getattr(node, "lineno", 0)
                yield RefusedFinding(category=category, description=description, line=line), node
        for statement, category, description in _module_level_rebindings(self.tree, self.imported):
            yield RefusedFinding(category=category, description=description, line=statement.lineno), statement

    def _node(self, node: ast.AST) -> Iterator[tuple[RefusedCategory, str]]:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield from _imports(node)
        elif isinstance(node, ast.Name):
            yield from self._name(node)
        elif isinstance(node, ast.Attribute):
            yield from self._attribute(node)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
            yield from self._store_into(node)
        elif isinstance(node, ast.Call):
            yield from self._call(node)
        elif isinstance(node, ast.While):
            yield "unbounded_loop", f"while {_shown(node.test)}"
        elif isinstance(node, ast.Assign):
            yield from self._function_bound_to_attribute(node)
        elif isinstance(node, ast.Global):
            for name in node.names:
                if name in BUILTIN_NAMES or name in self.imported:
                    yield "rebinding", f"global {name}: rebinds a builtin or imported name"
        elif isinstance(node, ast.keyword) and node.arg is not None:
            yield from self._label_name(node.arg)
        if isinstance(node, ast.expr) and self._is_whole_string(node):
            yield from self._string(node)

    def _name(self, node: ast.Name) -> Iterator[tuple[RefusedCategory, str]]:
        yield from self._label_name(node.id)
        if not isinstance(node.ctx, ast.Load) or self._is_base_of_attribute(node):
            return
        yield from self._refused_names(self.resolver.qualified(node))

    def _attribute(self, node: ast.Attribute) -> Iterator[tuple[RefusedCategory, str]]:
        yield from self._label_name(node.attr)
        qualified = self.resolver.qualified(node)
        named = list(self._refused_names(qualified)) if not self._is_base_of_attribute(node) else []
        yield from named
        by_name = {refused_category(normalised(name)) for name in qualified} - {None}
        if node.attr in REFUSED_ATTRIBUTES and not named and not by_name:
            yield REFUSED_ATTRIBUTES[node.attr], f"attribute .{node.attr}"
        if isinstance(node.ctx, ast.Store | ast.Del):
            yield from self._store_into(node)

    def _refused_names(self, qualified: set[str]) -> Iterator[tuple[RefusedCategory, str]]:
        for name in sorted(normalised(name) for name in qualified):
            if (category := refused_category(name)) is not None:
                yield category, name

    def _store_into(self, target: ast.Attribute | ast.Subscript) -> Iterator[tuple[RefusedCategory, str]]:
        """An assignment or deletion into an imported module or object, or into builtins."""
        owner = self._imported_owner(target.value)
        if owner is not None:
            where = f"{owner}.{target.attr}" if isinstance(target, ast.Attribute) else f"{owner}[...]"
            verb = "deletes" if isinstance(target.ctx, ast.Del) else "assigns"
            yield "rebinding", f"{verb} {where}"

    def _imported_owner(self, node: ast.expr) -> str | None:
        """The qualified name of ``node`` when its chain starts at a module, an imported object or builtins."""
        root: ast.expr = node
        while isinstance(root, ast.Attribute | ast.Subscript):
            root = root.value
        if not isinstance(root, ast.Name):
            return None
        known = root.id in self.resolver.aliases or root.id in BUILTIN_NAMES or root.id in MODULE_NAMES
        if not known or root.id in self.resolver.local:
            return None
        target = node
        while isinstance(target, ast.Subscript):
            target = target.value
        qualified = sorted(self.resolver.qualified(target)) or sorted(self.resolver.qualified(root, base=True))
        return normalised(qualified[0]) if qualified else None

    def _call(self, node: ast.Call) -> Iterator[tuple[RefusedCategory, str]]:
        function = node.func
        if isinstance(function, ast.Attribute) and function.attr in MUTATING_METHODS:
            owner = self._imported_owner(function.value)
            if owner is not None:
                yield "rebinding", f"mutates {owner} (.{function.attr})"
        called = {normalised(name) for name in self.resolver.qualified(node.func)}
        if called & {"setattr", "delattr"} and node.args:
            first = node.args[0]
            if not (isinstance(first, ast.Name) and first.id == "self"):
                yield "rebinding", f"{sorted(called & {'setattr', 'delattr'})[0]}({_shown(first)}, ...)"
        if "iter" in called and len(node.args) == 2:
            yield "unbounded_loop", "iter(callable, sentinel)"
        enclosing = self._enclosing_function(node)
        if enclosing is not None and _calls_itself(node.func, enclosing):
            yield "unbounded_loop", f"{enclosing.name}() calls itself"

    def _function_bound_to_attribute(self, node: ast.Assign) -> Iterator[tuple[RefusedCategory, str]]:
        value = node.value
        binds_function = isinstance(value, ast.Lambda) or (
            isinstance(value, ast.Name) and value.id in self.functions and value.id not in self.resolver.aliases
        )
        if isinstance(value, ast.Call):
            binds_function = bool(
                {normalised(name) for name in self.resolver.qualified(value.func)} & FUNCTION_WRAPPERS
            )
        for target in node.targets:
            root: ast.expr = target
            while isinstance(root, ast.Attribute | ast.Subscript):
                root = root.value
            if binds_function and isinstance(target, ast.Attribute) and not _is_self(root):
                yield "rebinding", f"binds a function to {_shown(target)}"

    def _string(self, node: ast.expr) -> Iterator[tuple[RefusedCategory, str]]:
        text = folded_string(node)
        if text is None:
            return
        if (reference := outside_reference(text)) is not None:
            yield "outside_reference", f"{reference}: {text[:MAX_SHOWN]!r}"
        if (label := names_label(text, self.labels)) is not None:
            yield "label_reference", f"the label column {label!r} in {text[:MAX_SHOWN]!r}"

    def _label_name(self, name: str) -> Iterator[tuple[RefusedCategory, str]]:
        if name in self.labels:
            yield "label_reference", f"the label column {name!r} as a name"

    def _is_whole_string(self, node: ast.expr) -> bool:
        """A string expression that is not part of a larger one, and not a docstring."""
        if folded_string(node) is None:
            return False
        parent = self.parents.get(node)
        if isinstance(parent, ast.JoinedStr | ast.FormattedValue):
            return False
        if isinstance(parent, ast.BinOp) and folded_string(parent) is not None:
            return False
        return not isinstance(parent, ast.Expr)

    def _is_base_of_attribute(self, node: ast.expr) -> bool:
        parent = self.parents.get(node)
        return isinstance(parent, ast.Attribute) and parent.value is node

    def _enclosing_function(self, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        current = self.parents.get(node)
        while current is not None and not isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef):
            if isinstance(current, ast.Lambda | ast.ClassDef):
                return None
            current = self.parents.get(current)
        return current


def _imports(node: ast.Import | ast.ImportFrom) -> Iterator[tuple[RefusedCategory, str]]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            if (category := refused_category(normalised(alias.name))) is not None:
                yield category, f"import {alias.name}"
    elif node.level == 0 and node.module:
        for alias in node.names:
            qualified = normalised(f"{node.module}.{alias.name}")
            category = refused_category(qualified) or refused_category(normalised(node.module))
            if category is not None:
                yield category, f"from {node.module} import {alias.name}"


def _import_bound_names(tree: ast.AST) -> frozenset[str]:
    names: set[str] = set()
    for node in nodes_of(tree, ast.Import | ast.ImportFrom):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names.update(alias.asname or alias.name.split(".", 1)[0] for alias in node.names if alias.name != "*")
    return frozenset(names)


def _module_level_rebindings(
    tree: ast.Module, imported: frozenset[str]
) -> Iterator[tuple[ast.stmt, RefusedCategory, str]]:
    """Module-level statements that bind a builtin's name or a name the module imports, other than the
    import itself."""
    for statement in _module_level_statements(tree.body):
        for name in _statement_bindings(statement):
            if name in MODULE_HOOKS:
                yield statement, "rebinding", f"defines the module hook {name}"
            elif name in BUILTIN_NAMES:
                yield statement, "rebinding", f"rebinds the builtin {name}"
            elif name in imported:
                yield statement, "rebinding", f"rebinds the imported name {name}"


def _module_level_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    for statement in body:
        yield statement
        if isinstance(statement, ast.If | ast.Try | ast.With):
            for field in ("body", "orelse", "finalbody"):
                yield from _module_level_statements(getattr(statement, field, []))
            for handler in getattr(statement, "handlers", []):
                yield from _module_level_statements(handler.body)


def _statement_bindings(statement: ast.stmt) -> list[str]:
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [statement.name]
    targets: list[ast.expr] = []
    if isinstance(statement, ast.Assign):
        targets = list(statement.targets)
    elif isinstance(statement, ast.AnnAssign | ast.AugAssign):
        targets = [statement.target]
    elif isinstance(statement, ast.For | ast.With):
        targets = (
            [statement.target]
            if isinstance(statement, ast.For)
            else [item.optional_vars for item in statement.items if item.optional_vars is not None]
        )
    names: list[str] = []
    for target in targets:
        names.extend(
            node.id for node in ast.walk(target) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
        )
    return names


def _calls_itself(func: ast.expr, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    if isinstance(func, ast.Name):
        return func.id == function.name
    return isinstance(func, ast.Attribute) and func.attr == function.name and _is_self(func.value)


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def _shown(node: ast.expr) -> str:
    text = ast.unparse(node)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 3] + "..."
