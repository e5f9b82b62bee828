"""Restore a block of statements to another revision's text, touching only the statements that differ.

Two blocks (lists of statements) are aligned by their AST, so formatting-only differences are no
difference. Statements that differ are replaced by the other revision's lines, except that a compound
statement whose own header is unchanged (a ``def`` with the same signature, an ``if`` with the same test)
is recursed into, so only the changed statements inside it are restored. A leading docstring is never
reverted: it does not change behaviour.
"""

from __future__ import annotations

import ast

from libs.python_source.definitions import docstring_statement, first_line
from libs.python_source.source_text import Replacement, SourceText
from libs.sequence_alignment import aligned_opcodes

BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")
_DOCSTRING = "<docstring>"


class CannotRevert(ValueError):
    """The statements cannot be restored by whole lines (shared lines, different indentation)."""


def revert_block(
    base: SourceText, base_block: list[ast.stmt], candidate: SourceText, candidate_block: list[ast.stmt]
) -> list[Replacement]:
    """Replacements on the candidate's text that make ``candidate_block`` behave like ``base_block``."""
    base_keys = [_key(node, base_block) for node in base_block]
    candidate_keys = [_key(node, candidate_block) for node in candidate_block]
    replacements: list[Replacement] = []
    opcodes = aligned_opcodes(base_keys, candidate_keys)
    if opcodes is None:
        raise CannotRevert("the two blocks repeat statements too often to be aligned within the work budget")
    for operation, b1, b2, c1, c2 in opcodes:
        if operation == "equal":
            continue
        if operation == "replace" and b2 - b1 == c2 - c1:
            for base_node, candidate_node in zip(base_block[b1:b2], candidate_block[c1:c2], strict=True):
                replacements.extend(revert_statement(base, base_node, candidate, candidate_node))
            continue
        replacements.append(_replace_range(base, base_block[b1:b2], candidate, candidate_block, c1, c2))
    return replacements


def revert_statement(
    base: SourceText, base_node: ast.stmt, candidate: SourceText, candidate_node: ast.stmt
) -> list[Replacement]:
    """Replacements that restore one statement, recursing into blocks when its header is unchanged."""
    if ast.dump(base_node) == ast.dump(candidate_node):
        return []
    if type(base_node) is type(candidate_node) and _header(base_node) == _header(candidate_node):
        replacements: list[Replacement] = []
        for field in BLOCK_FIELDS:
            base_items = getattr(base_node, field, None) or []
            candidate_items = getattr(candidate_node, field, None) or []
            if field in ("handlers", "cases"):
                if len(base_items) != len(candidate_items):
                    return [_replace_range(base, [base_node], candidate, [candidate_node], 0, 1)]
                for base_item, candidate_item in zip(base_items, candidate_items, strict=True):
                    if _header(base_item) != _header(candidate_item):
                        return [_replace_range(base, [base_node], candidate, [candidate_node], 0, 1)]
                    replacements.extend(revert_block(base, base_item.body, candidate, candidate_item.body))
            elif base_items or candidate_items:
                if not base_items or not candidate_items:
                    return [_replace_range(base, [base_node], candidate, [candidate_node], 0, 1)]
                replacements.extend(revert_block(base, base_items, candidate, candidate_items))
        return replacements
    return [_replace_range(base, [base_node], candidate, [candidate_node], 0, 1)]


def _replace_range(
    base: SourceText,
    base_nodes: list[ast.stmt],
    candidate: SourceText,
    candidate_block: list[ast.stmt],
    c1: int,
    c2: int,
) -> Replacement:
    new_text = _lines_of(base, base_nodes) if base_nodes else ""
    if c2 > c1:
        nodes = candidate_block[c1:c2]
        _check_owns_lines(candidate, nodes)
        if base_nodes and base_nodes[0].col_offset != nodes[0].col_offset:
            raise CannotRevert("the statements are indented differently in the two revisions")
        start, end = candidate.line_start(first_line(nodes[0])), candidate.line_end(nodes[-1].end_lineno or 0)
        return Replacement(start, end, new_text)
    anchor = candidate_block[c1 - 1] if c1 > 0 else candidate_block[0]
    _check_owns_lines(candidate, [anchor])
    if base_nodes and base_nodes[0].col_offset != anchor.col_offset:
        raise CannotRevert("the statements are indented differently in the two revisions")
    point = candidate.line_end(anchor.end_lineno or 0) if c1 > 0 else candidate.line_start(first_line(anchor))
    return Replacement(point, point, new_text)


def _lines_of(text: SourceText, nodes: list[ast.stmt]) -> str:
    _check_owns_lines(text, nodes)
    return text.source[text.line_start(first_line(nodes[0])) : text.line_end(nodes[-1].end_lineno or 0)]


def _check_owns_lines(text: SourceText, nodes: list[ast.stmt]) -> None:
    first, last = nodes[0], nodes[-1]
    start = text.offset(first.lineno, first.col_offset) if first_line(first) == first.lineno else None
    start = text.line_start(first_line(first)) + len(text.indent(first_line(first))) if start is None else start
    end = text.offset(last.end_lineno or 0, last.end_col_offset or 0)
    if not text.owns_lines(first_line(first), last.end_lineno or 0, start, end):
        raise CannotRevert(f"the statement at line {first.lineno} shares its lines with another statement")


def _key(node: ast.stmt, block: list[ast.stmt]) -> str:
    return _DOCSTRING if node is docstring_statement(block) else ast.dump(node)


def _header(node: ast.AST) -> str:
    """The node's dump with its blocks emptied: what a compound statement says besides its body."""
    fields = {name: ([] if name in BLOCK_FIELDS else value) for name, value in ast.iter_fields(node)}
    return ast.dump(type(node)(**fields))
