"""division_guards: the divisions of a function and whether a zero guard protects a divisor."""

from __future__ import annotations

import ast
import builtins
import textwrap

import pytest

from libs.python_source.division_guards import (
    ZERO_DIVISION_CATCHERS,
    Division,
    FunctionNode,
    catches_zero_division,
    division_of,
    divisions,
    is_zero_guarded,
    parent_map,
)


def function_of(source: str) -> FunctionNode:
    node = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    return node


def monthly(body: str, parameters: str = "total, months") -> FunctionNode:
    return function_of(f"def monthly({parameters}):\n" + textwrap.indent(textwrap.dedent(body), "    "))


def only_division(function: FunctionNode) -> Division:
    [division] = divisions(function)
    return division


def guarded(function: FunctionNode, *names: str) -> bool:
    return is_zero_guarded(only_division(function).node, names, function)


# -- divisions ----------------------------------------------------------------------------------------------


def test_true_floor_and_modulo_divisions_and_their_augmented_forms() -> None:
    function = function_of(
        """
        def spread(total, parts, step):
            share = total // parts
            rest = total % step
            share /= parts
            scaled = total * parts - step
            return share / 2, rest
        """
    )
    found = divisions(function)
    assert [(division.operator, ast.unparse(division.divisor), division.line) for division in found] == [
        ("//", "parts", 3),
        ("%", "step", 4),
        ("/", "parts", 5),
        ("/", "2", 7),
    ]
    assert isinstance(found[2].node, ast.AugAssign)


def test_divisions_are_in_source_order_by_line_then_column() -> None:
    function = function_of(
        """
        def f(a, b, n, m):
            return g(h(a / n), b / m)
        """
    )
    assert [ast.unparse(division.divisor) for division in divisions(function)] == ["n", "m"]
    assert [division.column for division in divisions(function)] == [15, 23]


def test_nested_functions_lambdas_and_classes_are_their_own_scopes() -> None:
    function = function_of(
        """
        def outer(total, months):
            def inner(value, count):
                return value / count
            async def later(value, count):
                return value / count
            class Box:
                share = 1 / 3
            ratio = lambda value: value / months
            return [total / month for month in range(1, months)]
        """
    )
    assert [ast.unparse(division.node) for division in divisions(function)] == ["total / month"]


def test_decorators_defaults_and_annotations_are_not_the_body() -> None:
    function = function_of(
        """
        @cache(1 / n)
        def f(total, n, scale=1 / n) -> 1 / n:
            return total
        """
    )
    assert divisions(function) == []


def test_async_functions_have_divisions_too() -> None:
    function = function_of(
        """
        async def rate(total, seconds):
            return total / seconds
        """
    )
    assert only_division(function).operator == "/"


def test_division_of_other_nodes_is_none() -> None:
    assert division_of(ast.parse("a * b", mode="eval").body) is None
    assert division_of(ast.parse("a -= b").body[0]) is None
    division = division_of(ast.parse("a // b", mode="eval").body)
    assert division is not None and division.operator == "//"


# -- is_zero_guarded ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "if months <= 0:\n    return 0.0\nreturn total / months",
        "if not months:\n    raise ValueError('no months')\nreturn total / months",
        "for m in range(3):\n    if not months:\n        continue\n    total += total / months",
        "while True:\n    if months == 0:\n        break\n    total = total / months",
        "assert months > 0\nreturn total / months",
        "if months > 0:\n    return total / months\nreturn 0.0",
        "if months == 0:\n    return 0.0\nelse:\n    return total / months",
        "while months:\n    total = total / months",
        "return total / months if months else 0.0",
        "return 0.0 if not months else total / months",
        "if months:\n    for m in range(3):\n        total = total / months",
    ],
)
def test_a_test_of_the_divisor_guards_it(body: str) -> None:
    assert guarded(monthly(body), "months")


@pytest.mark.parametrize(
    "body",
    [
        "return total / months",
        "if total <= 0:\n    return 0.0\nreturn total / months",
        "if months <= 0:\n    months = 1\nreturn total / months",
        "return total / months\nassert months",
        "if total / months:\n    return 1.0",
    ],
)
def test_no_guard_on_the_divisor(body: str) -> None:
    function = monthly(body)
    assert not guarded(function, "months")


def test_a_guard_on_any_of_the_given_names_counts() -> None:
    function = monthly("if offset:\n    return total / (months - offset)", "total, months, offset")
    assert guarded(function, "months", "offset")
    assert not guarded(function, "months")


def test_a_guard_in_an_enclosing_block_covers_nested_blocks() -> None:
    function = monthly(
        "if months <= 0:\n    return 0.0\nfor m in range(3):\n    with open('x'):\n        total /= months"
    )
    assert guarded(function, "months")


def test_a_leaving_if_after_the_division_does_not_count() -> None:
    function = monthly("share = total / months\nif months <= 0:\n    return 0.0\nreturn share")
    assert not guarded(function, "months")


@pytest.mark.parametrize(
    "handler",
    [
        "except ZeroDivisionError:",
        "except ArithmeticError:",
        "except Exception:",
        "except BaseException:",
        "except:",
        "except (ValueError, ZeroDivisionError) as error:",
        "except* ZeroDivisionError:",
        "except* (OSError, ArithmeticError) as group:",
    ],
)
def test_a_try_that_catches_zero_division_guards_its_body(handler: str) -> None:
    """``except*`` (3.11 on) catches a ZeroDivisionError of its body too, inside the group it raises."""
    function = monthly(f"try:\n    return total / months\n{handler}\n    return 0.0")
    assert guarded(function, "months")
    assert guarded(function)  # whatever the names


@pytest.mark.parametrize(
    "handler", ["except ValueError:", "except (TypeError, KeyError):", "finally:", "except* ValueError:"]
)
def test_a_try_that_does_not_catch_zero_division_does_not_guard(handler: str) -> None:
    function = monthly(f"try:\n    return total / months\n{handler}\n    return 0.0")
    assert not guarded(function, "months")


def test_only_the_try_body_is_guarded_by_its_handlers() -> None:
    function = monthly("try:\n    pass\nexcept ZeroDivisionError:\n    return total / months")
    assert not guarded(function, "months")


def test_zero_division_catchers() -> None:
    assert frozenset({"ZeroDivisionError", "ArithmeticError", "Exception", "BaseException"}) == ZERO_DIVISION_CATCHERS
    for name in ZERO_DIVISION_CATCHERS:
        assert issubclass(ZeroDivisionError, getattr(builtins, name))


def test_catches_zero_division() -> None:
    [statement] = ast.parse("try:\n    pass\nexcept (OSError, ArithmeticError):\n    pass").body
    assert isinstance(statement, ast.Try) and catches_zero_division(statement)
    [statement] = ast.parse("try:\n    pass\nexcept OSError:\n    pass").body
    assert isinstance(statement, ast.Try) and not catches_zero_division(statement)


def test_a_shared_parent_map_gives_the_same_answers() -> None:
    function = monthly("if months <= 0:\n    return 0.0\nshare = total / months\nreturn share / total")
    parents = parent_map(function)
    answers = [
        is_zero_guarded(division.node, {ast.unparse(division.divisor)}, function) for division in divisions(function)
    ]
    shared = [
        is_zero_guarded(division.node, {ast.unparse(division.divisor)}, function, parents=parents)
        for division in divisions(function)
    ]
    assert answers == shared == [True, False]


def test_a_node_outside_the_function_is_an_error() -> None:
    function = monthly("return total / months")
    stranger = only_division(monthly("return 1 / months")).node
    with pytest.raises(ValueError, match="not inside monthly"):
        is_zero_guarded(stranger, {"months"}, function)
