"""source_text, column_reads, column_keys, imports, literals: the AST-span tools the repair strategies edit by."""

from __future__ import annotations

import ast

import pytest

from libs.python_source.column_keys import column_key_constants
from libs.python_source.column_reads import column_reads
from libs.python_source.imports import module_alias
from libs.python_source.literals import literal_like
from libs.python_source.source_text import OverlappingEdits, Replacement, SourceText, apply_replacements


def test_spans_count_characters_not_the_asts_utf8_bytes() -> None:
    source = 'note = "d\u00e9j\u00e0"; value = row["spend"]\r\nnext = 1\r\n'
    tree = ast.parse(source)
    read = tree.body[1].value  # type: ignore[attr-defined]
    text = SourceText(source)
    assert text.segment(read) == 'row["spend"]'
    assert text.newline == "\r\n" and text.line(2) == "next = 1\r\n"
    start, end = text.span(read)
    assert apply_replacements(source, [Replacement(start, end, "x")]).startswith(
        'note = "d\u00e9j\u00e0"; value = x\r\n'
    )


def test_a_byte_order_mark_belongs_to_no_line() -> None:
    """Python reads a file's leading byte order mark as no text: the AST's columns on line 1 count after it, and an
    edit of line 1 keeps it."""
    source = '\ufeffvalue = row["spend"] / months\nnext = 1\n'
    tree = ast.parse(source.encode("utf-8"))
    division = tree.body[0].value  # type: ignore[attr-defined]
    text = SourceText(source)
    assert text.segment(division) == 'row["spend"] / months'
    assert text.line(1) == 'value = row["spend"] / months\n' and text.indent(1) == ""
    replaced = Replacement(text.line_start(1), text.line_end(1), "value = 0\n")
    assert apply_replacements(source, [replaced]) == "\ufeffvalue = 0\nnext = 1\n"
    assert text.owns_lines(1, 1, *text.span(tree.body[0]))


def test_overlapping_replacements_are_refused() -> None:
    with pytest.raises(OverlappingEdits):
        apply_replacements("abcdef", [Replacement(0, 3, "x"), Replacement(2, 4, "y")])


def test_column_reads_include_loops_over_column_lists_and_skip_writes() -> None:
    tree = ast.parse(
        'COLS = ("spend", "age")\n'
        "def f(frame, records):\n"
        '    frame["spend"] = 1\n'
        '    a = frame["spend"]\n'
        "    for name in COLS:\n"
        "        b = [r[name] for r in records]\n"
        '    for name in ("x", "y"):\n'
        "        c = frame[name]\n"
    )
    reads = column_reads(tree, "spend")
    assert [(read.node.lineno, read.by_constant, read.columns) for read in reads] == [
        (4, True, ("spend",)),
        (6, False, ("spend", "age")),
    ]
    assert all(read.function is not None and read.function.name == "f" for read in reads)


def test_column_keys_are_keys_not_any_matching_string() -> None:
    source = (
        '"""spend docstring"""\n'
        'COLUMNS = ["id", "spend"]\n'
        'LABEL = "spend"\n'
        "def f(df):\n"
        '    print("spend", f"spend {df}")\n'
        '    if "spend" in df.columns:\n'
        '        return df.rename(columns={"spend": "s"}).get("spend"), df.loc[:, "spend"]\n'
    )
    keys = column_key_constants(ast.parse(source), "spend")
    assert [(node.lineno, node.col_offset) for node in keys] == [(2, 17), (6, 7), (7, 34), (7, 53), (7, 73)]


def test_module_aliases() -> None:
    tree = ast.parse("import csv\nimport numpy as np\nimport pandas\n")
    assert (module_alias(tree, "numpy"), module_alias(tree, "pandas"), module_alias(tree, "re")) == (
        "np",
        "pandas",
        None,
    )


def test_literals_follow_the_files_quotes() -> None:
    assert literal_like("basic", "'plan'") == "'basic'"
    assert literal_like("it's", "'plan'") == '"it\'s"'
    assert literal_like(0, '"x"') == "0"
    assert literal_like(float("nan"), "") == 'float("nan")'
