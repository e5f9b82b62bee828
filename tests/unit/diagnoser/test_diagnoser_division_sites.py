"""division_sites: every division of a function, and whether a zero guard covers its divisor."""

from __future__ import annotations

import ast
import textwrap

import pytest

from libs.python_source.untrusted_parsing import parse_module
from services.diagnoser.division_sites import division_sites, unguarded_division_sites


def function_of(source: str) -> tuple[ast.FunctionDef, str]:
    source = textwrap.dedent(source)
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node, source


def test_unguarded_division_by_a_parameter_is_reported() -> None:
    function, source = function_of(
        """
        def monthly(total: float, months: int) -> float:
            return total / months
        """
    )
    [site] = division_sites(function, source)
    assert (site.operator, site.divisor, site.guarded) == ("/", "months", False)
    assert site.divisor_parameters == ("months",)
    assert site.line == 3


@pytest.mark.parametrize(
    "body",
    [
        "if months <= 0:\n    return 0.0\nreturn total / months",
        "if not months:\n    raise ValueError('no months')\nreturn total / months",
        "assert months > 0\nreturn total / months",
        "if months > 0:\n    return total / months\nreturn 0.0",
        "if months == 0:\n    return 0.0\nelse:\n    return total / months",
        "return total / months if months else 0.0",
        "try:\n    return total / months\nexcept ZeroDivisionError:\n    return 0.0",
        "return total / max(months, 1)",
        "return total / 12",
    ],
)
def test_guarded_divisions_are_not_reported(body: str) -> None:
    source = "def monthly(total, months):\n" + textwrap.indent(body, "    ") + "\n"
    function, source = function_of(source)
    assert division_sites(function, source)
    assert unguarded_division_sites(function, source) == []


def test_a_guard_on_another_name_does_not_count() -> None:
    function, source = function_of(
        """
        def monthly(total, months):
            if total <= 0:
                return 0.0
            return total / months
        """
    )
    assert [site.divisor for site in unguarded_division_sites(function, source)] == ["months"]


def test_floor_division_modulo_and_augmented_assignment_are_divisions() -> None:
    function, source = function_of(
        """
        def spread(total, parts, step):
            share = total // parts
            rest = total % step
            share /= parts
            return share, rest
        """
    )
    assert [(site.operator, site.divisor) for site in division_sites(function, source)] == [
        ("//", "parts"),
        ("%", "step"),
        ("/", "parts"),
    ]


def test_divisions_inside_nested_functions_belong_to_them() -> None:
    function, source = function_of(
        """
        def outer(total, months):
            def inner(value, count):
                return value / count
            return inner(total, months)
        """
    )
    assert division_sites(function, source) == []


def test_divisor_expression_names_its_parameters() -> None:
    function, source = function_of(
        """
        def ratio(total, months, offset):
            return total / (months - offset)
        """
    )
    [site] = division_sites(function, source)
    assert site.divisor == "months - offset"
    assert site.divisor_parameters == ("months", "offset")


def test_a_divisor_on_the_first_line_of_a_file_with_a_byte_order_mark_is_its_own_text() -> None:
    """The AST counts line 1's columns after a leading byte order mark; the divisor's text is cut from the same
    place (it was cut three bytes early: `` / mon``)."""
    source = "\ufeffdef ratio(total, months): return total / months\n"
    function = parse_module(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    [site] = division_sites(function, source)
    assert site.divisor == "months" and site.column == source.index("total / months") - 1
