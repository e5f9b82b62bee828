"""guarded_division for a vectorised division (a pandas Series or frame, a numpy array, ``operand_kinds``):
one expression changes at the division; no ``if`` (a Series has no single truth value), and the result keeps
the operands' index and dtype. For the default policy (zero and negative denominators):

- the code fills a missing quotient itself (``(a / b).fillna(v)``): only the divisor changes, ``a / b.where(b > 0)``,
  and the code's own ``fillna`` gives those rows its value;
- the base revision filled its version of the division (``(a / b.replace(0, np.nan)).fillna(v)``): the same,
  ``(a / b.where(b > 0)).fillna(v)``;
- otherwise, with the policy's fallback (``repair.division.fallback``) or 0.0 (a true division's result is a
  float): ``(a / b).mask(b <= 0, v)``, which changes only the rows whose denominator is guarded;
- numpy arrays: ``np.where(b <= 0, v, a) / np.where(b <= 0, 1, b)`` (no division by zero is made, no warning;
  ``v`` is the base revision's ``np.where`` value, else the policy's, else 0.0).

Null and NaN denominators join the mask when the policy guards them (``b.isna() | (b <= 0)``); a divisor the
``where`` turns into NaN is already missing. Floor division and remainder are refused (a guard changes their
integer dtype), and so is an in-place division (``a /= b``: there is no expression to give the fallback to).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass

from libs.policy.repair import DivisionPolicy
from libs.python_source.division_guards import divisions, is_zero_guarded, parent_map
from libs.python_source.imports import module_alias
from libs.python_source.literals import literal_like
from libs.python_source.source_text import OverlappingEdits, Replacement, SourceText, apply_replacements
from services.repairer.strategies.base_file import BaseFile
from services.repairer.strategies.expression_text import normalised
from services.repairer.strategies.module_index import ModuleIndex
from services.repairer.strategies.operand_kinds import OperandKind, OperandKinds
from services.repairer.strategies.quotient_fallback import base_quotient_fallback, filled_value
from services.repairer.strategies.vector_division_guards import guarded_divisor, guarded_quotient

ATOMS = (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.Constant)
EXCLUDED = {frozenset({"zero", "negative"}): "<= 0", frozenset({"zero"}): "== 0", frozenset({"negative"}): "< 0"}
KEPT = {frozenset({"zero", "negative"}): "> 0", frozenset({"zero"}): "!= 0", frozenset({"negative"}): ">= 0"}
TYPED_FALLBACK = "0.0"


@dataclass(frozen=True)
class VectorDivision:
    node: ast.BinOp | ast.AugAssign
    operator: str
    divisor: ast.expr
    kind: OperandKind


@dataclass(frozen=True)
class VectorGuard:
    new_source: str
    described: tuple[str, ...]
    """Per division: its divisor, the value it now gives and where that value comes from."""


def vectorised_divisions(tree: ast.Module, function_name: str, divisor: str | None) -> list[VectorDivision]:
    """The function's divisions by a Series, frame or array with no guard (only by ``divisor`` if given)."""
    kinds = OperandKinds(ModuleIndex(tree))
    function = kinds.function(function_name)
    if function is None:
        return []
    wanted = normalised(divisor) if divisor else None
    numpy_alias = module_alias(tree, "numpy")
    parents = parent_map(function.node)
    found = []
    for division in divisions(function.node):
        if wanted is not None and ast.unparse(division.divisor) != wanted:
            continue
        kind = kinds.kind(division.divisor, function)
        if kind == "other" or guarded_divisor(division.divisor, numpy_alias):
            continue
        if isinstance(division.node, ast.BinOp) and guarded_quotient(division.node, parents, numpy_alias):
            continue
        names = {node.id for node in ast.walk(division.divisor) if isinstance(node, ast.Name)}
        if is_zero_guarded(division.node, names, function.node, parents=parents):
            continue
        found.append(VectorDivision(division.node, division.operator, division.divisor, kind))
    return found


def guard_vectorised(
    source: str,
    tree: ast.Module,
    function_name: str,
    targets: list[VectorDivision],
    policy: DivisionPolicy,
    base: BaseFile | None,
) -> VectorGuard | str:
    """The source with each target guarded in place, or the reason it cannot be."""
    if any(target.operator != "/" for target in targets):
        return "a floor division or remainder of a Series or array changes the result's dtype once guarded"
    if any(isinstance(target.node, ast.AugAssign) for target in targets):
        return f"{function_name} divides in place (/=): there is no expression to give the fallback to"
    bounds = frozenset(policy.denominators & {"zero", "negative"})
    if not bounds:
        return "the policy guards neither zero nor negative denominators"
    text = SourceText(source)
    numpy_alias = module_alias(tree, "numpy")
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    writer = _Writer(text, policy, bounds, numpy_alias, base, function_name)
    replacements: list[Replacement] = []
    described: list[str] = []
    for target in targets:
        assert isinstance(target.node, ast.BinOp)
        written = writer.pandas(target.node, parents) if target.kind == "pandas" else writer.numpy(target.node)
        if isinstance(written, str):
            return written
        replacement, description = written
        replacements.append(replacement)
        described.append(description)
    try:
        new_source = apply_replacements(source, replacements)
    except OverlappingEdits:
        return f"{function_name} nests one vectorised division in another; one guard each cannot be written"
    return VectorGuard(new_source, tuple(described))


class _Writer:
    def __init__(
        self,
        text: SourceText,
        policy: DivisionPolicy,
        bounds: frozenset[str],
        numpy_alias: str | None,
        base: BaseFile | None,
        function_name: str,
    ) -> None:
        self.text = text
        self.policy = policy
        self.bounds = bounds
        self.numpy_alias = numpy_alias
        self.base = base
        self.function_name = function_name

    def pandas(self, division: ast.BinOp, parents: Mapping[ast.AST, ast.AST]) -> tuple[Replacement, str] | str:
        divisor = self._atom(division.right)
        kept = f"{divisor}.where({divisor} {KEPT[self.bounds]})"
        own = filled_value(division, parents, self.text, self.numpy_alias)
        if own is not None:
            start, end = self.text.span(division.right)
            return Replacement(start, end, kept), self._described(division, own, "code's own fillna")
        base = self._base_fallback(division)
        start, end = self.text.span(division)
        if base is not None:
            filled = f"({self._with_divisor(division, kept)}).fillna({base})"
            return Replacement(start, end, filled), self._described(division, base, "base revision")
        fallback, origin = self._fallback()
        excluded = self._excluded(divisor, f"{divisor}.isna()")
        quotient = self.text.segment(division)
        return Replacement(start, end, f"({quotient}).mask({excluded}, {fallback})"), self._described(
            division, fallback, origin
        )

    def numpy(self, division: ast.BinOp) -> tuple[Replacement, str] | str:
        np = self.numpy_alias
        if np is None:
            return "the module divides arrays but does not import numpy as a module to guard them with"
        base = self._base_fallback(division)
        fallback, origin = (base, "base revision") if base is not None else self._fallback()
        divisor = self._atom(division.right)
        excluded = self._excluded(divisor, f"{np}.isnan({divisor})")
        numerator, denominator = self.text.segment(division.left), self.text.segment(division.right)
        written = f"{np}.where({excluded}, {fallback}, {numerator}) / {np}.where({excluded}, 1, {denominator})"
        start, end = self.text.span(division)
        return Replacement(start, end, written), self._described(division, fallback, origin)

    def _base_fallback(self, division: ast.BinOp) -> str | None:
        if self.base is None:
            return None
        return base_quotient_fallback(self.base, self.function_name, self.text.segment(division.right))

    def _fallback(self) -> tuple[str, str]:
        if self.policy.fallback is not None:
            return literal_like(self.policy.fallback, ""), "policy"
        return TYPED_FALLBACK, "division's float result"

    def _excluded(self, divisor: str, missing: str) -> str:
        comparison = f"{divisor} {EXCLUDED[self.bounds]}"
        if not self.policy.denominators & {"null", "nan"}:
            return comparison
        return f"{missing} | ({comparison})"

    def _atom(self, node: ast.expr) -> str:
        segment = self.text.segment(node)
        return segment if isinstance(node, ATOMS) else f"({segment})"

    def _with_divisor(self, division: ast.BinOp, divisor: str) -> str:
        """The division's text with its divisor's text replaced."""
        start, end = self.text.span(division)
        divisor_start, divisor_end = self.text.span(division.right)
        source = self.text.source
        return source[start:divisor_start] + divisor + source[divisor_end:end]

    def _described(self, division: ast.BinOp, fallback: str, origin: str) -> str:
        return f"{self.text.segment(division.right)}: {fallback} (from the {origin})"
