"""Parsing a workspace's Python, which is untrusted: whatever the parser cannot take, and whatever it takes but is
too deep for a recursive reader (`ast.unparse` fails on a sum of about 330 terms, the parser itself on about 3,000),
is refused as a SyntaxError with its reason, so every caller's "does not parse" path handles it. A tree that passes
is the tree `ast.parse` gives, walked in `ast.walk`'s order."""

from __future__ import annotations

import ast
import glob
from pathlib import Path

import pytest

from libs.python_source.tree_walk import walked
from libs.python_source.untrusted_parsing import MAX_DEPTH, parse_expression, parse_module

REPOS = Path(__file__).resolve().parents[3] / "fixtures" / "repos"


def _sum(terms: int) -> str:
    return "total = " + " + ".join("x" for _ in range(terms)) + "\n"


@pytest.mark.parametrize(
    ("source", "why"),
    [
        (_sum(12_000), "recursion"),  # the parser's own limit: RecursionError from ast.parse
        (_sum(400), "deeper than"),  # parses, but ast.unparse of it raises RecursionError
        ("value = " + "-" * 500 + "1\n", "deeper than"),
        ("x = 1\x00\n", "null bytes"),
        ('x = "\ud800"\n', "surrogate"),
        ("def f(:\n", "invalid syntax"),
        ("x = " + "(" * 300 + ")" * 300 + "\n", "parentheses"),
    ],
)
def test_what_cannot_be_read_safely_is_a_syntax_error_with_its_reason(source: str, why: str) -> None:
    with pytest.raises(SyntaxError, match=why):
        parse_module(source)


def test_the_depth_limit_leaves_room_for_a_recursive_reader() -> None:
    """The deepest tree that passes can still be unparsed and compiled, even from a deep stack."""
    deepest = None
    for terms in range(MAX_DEPTH - 5, MAX_DEPTH + 5):
        try:
            deepest = parse_module(_sum(terms))
        except SyntaxError:
            break

    def nested(depth: int) -> str:
        return nested(depth - 1) if depth else ast.unparse(deepest)

    assert deepest is not None
    assert nested(300).startswith("total = x + x")
    compile(deepest, "<deepest>", "exec")


def test_a_module_that_passes_is_the_tree_ast_parse_gives_walked_in_its_order() -> None:
    files = sorted(glob.glob(str(REPOS / "*" / "workspace" / "*" / "**" / "*.py"), recursive=True))
    if not files:
        pytest.skip(f"no bundle trees under {REPOS}")
    for name in files[:60]:
        text = Path(name).read_text(encoding="utf-8")
        tree = parse_module(text)
        assert ast.dump(tree, include_attributes=True) == ast.dump(ast.parse(text), include_attributes=True)
        assert [ast.dump(node) for node in walked(tree)] == [ast.dump(node) for node in ast.walk(tree)]


def test_bytes_are_read_as_the_parser_reads_them() -> None:
    text = "# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n"
    tree = parse_module(text.encode("latin-1"))
    assert ast.dump(tree) == ast.dump(ast.parse(text.encode("latin-1")))


def test_an_expression_is_its_body() -> None:
    assert ast.dump(parse_expression("pd.Series | None")) == ast.dump(ast.parse("pd.Series | None", mode="eval").body)
    with pytest.raises(SyntaxError, match="deeper than"):
        parse_expression(" + ".join("x" for _ in range(400)))


def test_text_that_starts_with_a_byte_order_mark_is_read_as_python_reads_the_file() -> None:
    """A file saved with a UTF-8 byte order mark (Windows editors do) runs: Python drops the mark. Its text, decoded
    as UTF-8, starts with U+FEFF, which ``ast.parse`` of a str refuses ("invalid non-printable character"), so every
    reader took such a file for one that does not parse. It reads as its bytes do, columns counted after the mark."""
    raw = "x = a / b\n".encode("utf-8-sig")
    tree = parse_module(raw.decode("utf-8"))
    assert ast.dump(tree, include_attributes=True) == ast.dump(ast.parse(raw), include_attributes=True)
    assert tree.body[0].value.col_offset == 4  # type: ignore[attr-defined]
    with pytest.raises(SyntaxError):
        parse_module("x = 1\n\ufeffy = 2\n")  # only a first character is a mark; elsewhere it is no Python
