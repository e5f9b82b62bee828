"""numeric_coercion: parse formatted numeric text safely where a text column is converted to a number.

The column's values are followed from where they are read (``services.repairer.strategies.column_access``:
a key, a constant, a class attribute, a default or a config value naming it; ``row.get``; a frame helper that
takes the name) to the conversion that turns them into numbers:

- at the read itself, or down a chain of text methods (``frame["c"].str.replace(",", "")``);
- through a local name bound to them;
- value by value: a comprehension or loop over them (``[parse(v) for v in frame["c"]]``), ``.apply(f)`` /
  ``.map(f)`` of a function or a lambda;
- into a function of the package they are passed to (``to_amount(frame["c"])``, ``parse_amount(v)``,
  ``parsing.parse_amount(v)``, ``self._parse(v)``), in the same module or a sibling one, and on from there.

The conversion site changes, in its own module:

- ``float(X)`` / ``int(X)``                 -> ``float(_parse_number_text(X))``; inside a ``try`` that catches
  ``ValueError`` -> ``float(_number_text(X))``, so what is not a number still takes the code's own fallback;
- ``pd.to_numeric(X, ...)``                 -> ``pd.to_numeric(X.map(_parse_number_text), ...)`` (a scalar X:
  ``pd.to_numeric(_parse_number_text(X), ...)``);
- ``X.astype(...)`` in a pandas module      -> ``X.map(_parse_number_text).astype(...)``;
- ``X.astype(...)`` in a numpy module       -> ``np.array([_parse_number_text(v) for v in X]).astype(...)``;
- ``np.asarray(X, dtype=...)`` / ``np.array`` -> ``np.asarray([_parse_number_text(v) for v in X], dtype=...)``;

plus the module-level helper it uses (``number_text_helper``), inserted once before the module's first
definition. When every conversion is one inside such a ``try`` and every value the diagnosis saw of the columns
reads plainly (``plain_number_text``: currency signs and codes, spaces, "," grouping thousands), each is read
plainly in one expression instead, ``float(str(X).replace(",", "").strip(...))``, and no helper is added: the
smallest edit, and a value it cannot read still takes the code's own fallback. No import is added. A conversion
in a module a repair may not edit is not changed: when that is the only one, the strategy refuses and names the
module.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field

from contracts.catalogue import RepairStrategy, answers
from libs.python_source.column_reads import derived_names
from libs.python_source.definitions import FunctionNode
from libs.python_source.imports import module_alias
from libs.python_source.source_text import Replacement, SourceText, apply_replacements
from services.repairer.repair_context import RepairContext
from services.repairer.strategies.column_access import (
    bound_arguments,
    column_accesses,
    enclosing_function,
    is_record,
)
from services.repairer.strategies.column_names import ColumnNames
from services.repairer.strategies.number_text_helper import (
    HELPER_NAME,
    TEXT_HELPER_NAME,
    has_helper,
    helper_insertion_line,
    helper_text,
)
from services.repairer.strategies.outcome import FileEdit, MultiFileEdit, StrategyRefusal, multi_file_edit
from services.repairer.strategies.package_modules import PackageModules, ParsedModule
from services.repairer.strategies.plain_number_text import plain_conversion, reads_plainly

STRATEGY = RepairStrategy.NUMERIC_COERCION
ANSWERS = answers(STRATEGY)
NEEDS = ("text_numeric_columns",)

SCALAR_CONVERSIONS = frozenset({"float", "int"})
ARRAY_CONSTRUCTORS = frozenset({"asarray", "array"})
ELEMENT_APPLIERS = frozenset({"apply", "map", "transform"})
TEXT_METHODS = frozenset({"replace", "strip", "lstrip", "rstrip", "fillna", "lower", "upper", "slice", "get"})
"""Methods (also behind ``.str``) whose result is still the column's text."""
MAX_DEPTH = 5


@dataclass(frozen=True)
class _Site:
    module: ParsedModule
    replacement: Replacement
    helper: str
    plain: Replacement | None = None
    """The conversion read plainly in one expression, where that is an alternative (``plain_number_text``)."""


@dataclass
class _Search:
    package: PackageModules
    sites: dict[tuple[str, int, int], _Site] = field(default_factory=dict)
    blocked: set[str] = field(default_factory=set)
    """Modules a conversion was found in that a repair may not edit."""
    seen: set[tuple[str, int, bool]] = field(default_factory=set)


def propose(context: RepairContext) -> MultiFileEdit | StrategyRefusal:
    columns = list(context.hints.text_numeric_columns)
    package = PackageModules(context)
    search = _Search(package)
    covered: set[str] = set()
    for module in package.permitted_modules():
        names = ColumnNames(module, package)
        for column in columns:
            before = len(search.sites)
            for access in column_accesses(module, names, column):
                if access.kind == "columns":
                    continue
                _follow(search, module, access.node, is_record(access, module.parents), 0)
            if len(search.sites) > before:
                covered.add(column)
    if not search.sites:
        blocked = sorted(search.blocked)
        note = f" (its conversion is in {', '.join(blocked)}, which a repair may not edit)" if blocked else ""
        return _refuse(
            f"no permitted file converts {', '.join(columns)} to a number at a site it can parse safely{note}"
        )
    edits = []
    by_path: dict[str, list[_Site]] = {}
    for site in search.sites.values():
        by_path.setdefault(site.module.path, []).append(site)
    plain = _plain_is_enough(context, covered, list(search.sites.values()))
    for _, sites in sorted(by_path.items()):
        edit = _edit(sites[0].module, sites, plain)
        if isinstance(edit, StrategyRefusal):
            return edit
        edits.append(edit)
    missing = sorted(set(columns) - covered)
    note = f"; no conversion found for {', '.join(missing)}" if missing else ""
    if plain:
        return multi_file_edit(
            STRATEGY,
            edits,
            rationale=f"{', '.join(sorted(covered))} arrive as formatted text; where they are converted they are now "
            "read plainly in one expression (currency signs and codes, spaces and ',' thousands separators "
            f"stripped), which reads every value the diagnosis saw of them{note}",
        )
    helpers = sorted({site.helper for site in search.sites.values()})
    return multi_file_edit(
        STRATEGY,
        edits,
        rationale=f"{', '.join(sorted(covered))} arrive as formatted text; they are now parsed with "
        f"{' and '.join(helpers)} where they are converted (currency signs and codes, spaces and thousands "
        f"separators stripped){note}",
    )


def _plain_is_enough(context: RepairContext, columns: set[str], sites: list[_Site]) -> bool:
    """Whether every conversion can be read plainly in one expression: each has the code's own fallback for what
    is not a number, and every value the diagnosis saw of the columns reads plainly."""
    if not sites or any(site.plain is None for site in sites):
        return False
    seen = [context.number_examples.get(column, ()) for column in sorted(columns)]
    return all(seen) and all(reads_plainly(value) for values in seen for value in values)


def _edit(module: ParsedModule, sites: list[_Site], plain: bool) -> FileEdit | StrategyRefusal:
    if plain:
        replacements = [site.plain for site in sites if site.plain is not None]
        return FileEdit(
            path=module.path, old_text=module.source, new_text=apply_replacements(module.source, replacements)
        )
    text = SourceText(module.source)
    replacements = [site.replacement for site in sorted(sites, key=lambda site: site.replacement.start)]
    needed = [name for name in (HELPER_NAME, TEXT_HELPER_NAME) if any(site.helper == name for site in sites)]
    missing = [name for name in needed if not has_helper(module.tree, name)]
    if missing:
        line = helper_insertion_line(module.tree)
        if line is None:
            return _refuse(f"{module.path} has no top-level definition to put {missing[0]} before")
        point = text.line_start(line)
        replacements.append(Replacement(point, point, "".join(helper_text(text.newline, name) for name in missing)))
    return FileEdit(path=module.path, old_text=module.source, new_text=apply_replacements(module.source, replacements))


def _follow(search: _Search, module: ParsedModule, node: ast.expr, scalar: bool, depth: int) -> None:
    """Find the conversions the values of ``node`` (the column's, or one of them when ``scalar``) reach."""
    key = (module.path, id(node), scalar)
    if depth > MAX_DEPTH or key in search.seen:
        return
    search.seen.add(key)
    parents = module.parents
    parent = parents.get(node)
    if _conversion(search, module, node, parent, scalar):
        return
    if isinstance(parent, ast.Attribute):
        call = parents.get(parent)
        text_call = parents.get(call) if call is not None else None
        if parent.attr == "str" and isinstance(text_call, ast.Call):
            if isinstance(call, ast.Attribute) and call.attr in TEXT_METHODS and text_call.func is call:
                _follow(search, module, text_call, scalar, depth + 1)
            return
        if isinstance(call, ast.Call) and call.func is parent:
            if parent.attr in TEXT_METHODS:
                _follow(search, module, call, scalar, depth + 1)
            elif parent.attr in ELEMENT_APPLIERS and len(call.args) == 1:
                _per_value(search, module, call.args[0], depth)
        return
    if isinstance(parent, ast.comprehension) and parent.iter is node:
        comprehension = parents.get(parent)
        for name in _loads(comprehension, parent.target):
            _follow(search, module, name, True, depth + 1)
        return
    if isinstance(parent, ast.For) and parent.iter is node:
        for statement in parent.body:
            for name in _loads(statement, parent.target):
                _follow(search, module, name, True, depth + 1)
        return
    if isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1:
        target = parent.targets[0]
        function = enclosing_function(node, parents)
        if isinstance(target, ast.Name) and function is not None:
            for name in _loads(function, target, after=parent.lineno):
                _follow(search, module, name, scalar, depth + 1)
        return
    if isinstance(parent, ast.Call) and (node in parent.args or any(k.value is node for k in parent.keywords)):
        _into_function(search, module, parent, node, scalar, depth)
        return
    if isinstance(parent, ast.BoolOp | ast.IfExp) and scalar:
        _follow(search, module, parent, scalar, depth + 1)


def _conversion(search: _Search, module: ParsedModule, node: ast.expr, parent: ast.AST | None, scalar: bool) -> bool:
    """Record the conversion ``node`` is the argument or receiver of; whether there is one."""
    text = SourceText(module.source)
    segment = text.segment(node)
    start, end = text.span(node)
    pandas, numpy = module_alias(module.tree, "pandas"), module_alias(module.tree, "numpy")
    if isinstance(parent, ast.Call) and parent.args and parent.args[0] is node:
        function = parent.func
        if isinstance(function, ast.Name) and function.id in SCALAR_CONVERSIONS and len(parent.args) == 1:
            if _handles_value_error(node, module.parents):  # what is not a number takes the code's own fallback
                plain = Replacement(start, end, plain_conversion(segment))
                replacement = Replacement(start, end, f"{TEXT_HELPER_NAME}({segment})")
                return _record(search, module, replacement, TEXT_HELPER_NAME, plain)
            return _record(search, module, Replacement(start, end, f"{HELPER_NAME}({segment})"), HELPER_NAME)
        if isinstance(function, ast.Attribute) and function.attr == "to_numeric":
            wrapped = f"{HELPER_NAME}({segment})" if scalar else f"{segment}.map({HELPER_NAME})"
            return _record(search, module, Replacement(start, end, wrapped), HELPER_NAME)
        if (
            isinstance(function, ast.Attribute)
            and function.attr in ARRAY_CONSTRUCTORS
            and isinstance(function.value, ast.Name)
            and function.value.id == numpy
            and not scalar
        ):
            wrapped = f"[{HELPER_NAME}(value) for value in {segment}]"
            return _record(search, module, Replacement(start, end, wrapped), HELPER_NAME)
    if (
        isinstance(parent, ast.Attribute)
        and parent.attr == "astype"
        and isinstance(module.parents.get(parent), ast.Call)
        and not scalar
    ):
        if pandas is not None:
            return _record(search, module, Replacement(start, end, f"{segment}.map({HELPER_NAME})"), HELPER_NAME)
        if numpy is not None:
            wrapped = f"{numpy}.array([{HELPER_NAME}(value) for value in {segment}])"
            return _record(search, module, Replacement(start, end, wrapped), HELPER_NAME)
    return False


def _record(
    search: _Search, module: ParsedModule, replacement: Replacement, helper: str, plain: Replacement | None = None
) -> bool:
    if not search.package.permitted(module.path):
        search.blocked.add(module.path)
        return True
    key = (module.path, replacement.start, replacement.end)
    search.sites.setdefault(key, _Site(module, replacement, helper, plain))
    return True


def _per_value(search: _Search, module: ParsedModule, function: ast.expr, depth: int) -> None:
    """Each value handed to ``function`` (a lambda, or a function of the package) by ``.apply`` / ``.map``."""
    if isinstance(function, ast.Lambda):
        arguments = function.args.args
        if len(arguments) == 1:
            for name in _loads(function.body, ast.Name(id=arguments[0].arg)):
                _follow(search, module, name, True, depth + 1)
        return
    resolved = _resolve(search.package, module, function)
    if resolved is not None:
        other, definition = resolved
        positional = [argument.arg for argument in (*definition.args.posonlyargs, *definition.args.args)]
        if positional:
            _parameter(search, other, definition, positional[0], True, depth)


def _into_function(
    search: _Search, module: ParsedModule, call: ast.Call, argument: ast.expr, scalar: bool, depth: int
) -> None:
    resolved = _resolve(search.package, module, call.func, enclosing_function(call, module.parents))
    if resolved is None:
        return
    other, definition = resolved
    method = isinstance(call.func, ast.Attribute) and _is_self_call(module, call)
    for parameter, value in bound_arguments(call, definition, method=method).items():
        if value is argument:
            _parameter(search, other, definition, parameter, scalar, depth)


def _parameter(
    search: _Search, module: ParsedModule, function: FunctionNode, parameter: str, scalar: bool, depth: int
) -> None:
    """The conversions the values given to a function's parameter reach inside it (not inside the helpers
    this strategy adds: values handed to them are parsed already)."""
    if function.name in (HELPER_NAME, TEXT_HELPER_NAME):
        return
    derived = derived_names(function, parameter)
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in derived:
            _follow(search, module, node, scalar, depth + 1)


def _resolve(
    package: PackageModules, module: ParsedModule, function: ast.expr, caller: FunctionNode | None = None
) -> tuple[ParsedModule, FunctionNode] | None:
    """The package's function a callee expression names: ``name`` (local or imported), ``module.name``
    (an imported sibling module), ``self.name`` (a method of the caller's class)."""
    if isinstance(function, ast.Name):
        local = module.function(function.id)
        if local is not None:
            return module, local
        imported = package.imported_name(module, function.id)
        if imported is not None:
            other, name = imported
            definition = other.function(name)
            if definition is not None:
                return other, definition
        return None
    if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name):
        sibling = package.imported_module(module, function.value.id)
        if sibling is not None:
            definition = sibling.function(function.attr)
            return (sibling, definition) if definition is not None else None
        if caller is not None:
            klass = module.parents.get(caller)
            positional = [*caller.args.posonlyargs, *caller.args.args]
            if isinstance(klass, ast.ClassDef) and positional and positional[0].arg == function.value.id:
                for statement in klass.body:
                    if (
                        isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef)
                        and statement.name == function.attr
                    ):
                        return module, statement
    return None


def _is_self_call(module: ParsedModule, call: ast.Call) -> bool:
    caller = enclosing_function(call, module.parents)
    if caller is None or not isinstance(call.func, ast.Attribute) or not isinstance(call.func.value, ast.Name):
        return False
    positional = [*caller.args.posonlyargs, *caller.args.args]
    return (
        isinstance(module.parents.get(caller), ast.ClassDef)
        and bool(positional)
        and (positional[0].arg == call.func.value.id)
    )


def _loads(scope: ast.AST | None, target: ast.AST, after: int = 0) -> list[ast.Name]:
    """The loads in ``scope`` of the name a loop or an assignment binds (a plain name target only)."""
    if scope is None or not isinstance(target, ast.Name):
        return []
    return [
        node
        for node in ast.walk(scope)
        if isinstance(node, ast.Name)
        and isinstance(node.ctx, ast.Load)
        and node.id == target.id
        and node.lineno >= after
        and node is not target
    ]


def _handles_value_error(node: ast.AST, parents: Mapping[ast.AST, ast.AST]) -> bool:
    """Whether ``node`` is in the body of a ``try`` whose handlers catch ``ValueError`` (or anything wider)."""
    child, parent = node, parents.get(node)
    while parent is not None and not isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        if isinstance(parent, ast.Try | ast.TryStar) and child in parent.body:
            for handler in parent.handlers:
                caught = handler.type
                names = [caught] if not isinstance(caught, ast.Tuple) else list(caught.elts)
                if caught is None or any(
                    isinstance(name, ast.Name) and name.id in ("ValueError", "Exception", "BaseException")
                    for name in names
                ):
                    return True
        child, parent = parent, parents.get(parent)
    return False


def _refuse(reason: str) -> StrategyRefusal:
    return StrategyRefusal(strategy=STRATEGY, reason=reason)
