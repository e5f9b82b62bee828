"""The statement a node belongs to, read from the tree's kept walk and parents, is the one a walk of each statement
finds: the nodes of the statement (or clause) that are not inside one of its body statements or clauses."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from libs.patch_guard.changed_statements import ChangedStatements, own_lines
from libs.python_source.untrusted_parsing import parse_module

ROOT = Path(__file__).resolve().parents[3]
SOURCES = sorted((ROOT / "fixtures" / "repos").rglob("*.py"))[:40] + sorted(
    (ROOT / "libs" / "patch_guard").glob("*.py")
)
BLOCKS = ast.stmt | ast.ExceptHandler | ast.match_case


def spans_by_walking_each_statement(tree: ast.AST) -> dict[ast.AST, tuple[int, int]]:
    """The spans as a walk of each statement's own nodes gives them (what ChangedStatements did before)."""
    spans: dict[ast.AST, tuple[int, int]] = {}
    for block in ast.walk(tree):
        if isinstance(block, BLOCKS):
            pending = [child for child in ast.iter_child_nodes(block) if not isinstance(child, BLOCKS)]
            while pending:
                node = pending.pop()
                spans[node] = own_lines(block)
                pending.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, BLOCKS))
    return spans


HANDLER = "try:\n    f()\nexcept (ValueError,\n        KeyError) as error:\n    g(error)\n"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_node_belongs_to_the_statement_a_walk_of_each_statement_finds(path: Path) -> None:
    tree = parse_module(path.read_text(encoding="utf-8"))
    expected = {node: span for node, span in spans_by_walking_each_statement(tree).items() if node._fields}
    assert ChangedStatements(tree, set()).span_of == expected


def test_an_except_clause_owns_its_types_and_name() -> None:
    tree = parse_module(HANDLER)
    expected = {node: span for node, span in spans_by_walking_each_statement(tree).items() if node._fields}
    assert ChangedStatements(tree, set()).span_of == expected and expected


MATCHING = (
    "def kind(value):\n"
    "    match value:\n"
    "        case {'x': x} if x > 0:\n"
    "            return x\n"
    "        case [first, *rest]:\n"
    "            return first\n"
    "        case _:\n"
    "            return None\n"
)


def test_a_match_statement_and_its_cases_have_their_own_lines() -> None:
    """A ``case`` clause has no line of its own in the tree (its pattern has): the ``match`` line is the match
    statement's, each ``case`` line (its pattern and guard) the clause's."""
    tree = parse_module(MATCHING)
    statements = ChangedStatements(tree, {3})
    match = next(node for node in ast.walk(tree) if isinstance(node, ast.Match))
    first, second, _ = match.cases
    assert own_lines(match) == (2, 2)
    assert [own_lines(case) for case in match.cases] == [(3, 3), (5, 5), (7, 7)]
    assert statements.changed(first.guard) and statements.changed(first.pattern)
    assert not statements.changed(second.pattern) and not statements.changed(match.subject)
    expected = {node: span for node, span in spans_by_walking_each_statement(tree).items() if node._fields}
    assert statements.span_of == expected
