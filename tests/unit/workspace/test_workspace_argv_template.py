from __future__ import annotations

import pytest

from libs.workspace.argv_template import InvalidCommandTemplate, render_argv


def test_fills_placeholders_inside_arguments() -> None:
    argv = render_argv(["python", "run.py", "--data", "{data}", "--out={output}"], {"data": "/d.csv", "output": "/o"})
    assert argv == ["python", "run.py", "--data", "/d.csv", "--out=/o"]


def test_leaves_arguments_without_placeholders_alone() -> None:
    assert render_argv(["python", "-p", "no:cacheprovider"], {}) == ["python", "-p", "no:cacheprovider"]


def test_does_not_re_expand_substituted_values() -> None:
    assert render_argv(["{data}"], {"data": "{output}", "output": "x"}) == ["{output}"]


@pytest.mark.parametrize(
    "template",
    [["python", "{unknown}"], ["python", "{data!r}"], ["python", "{data:>10}"], ["python", "{data.attr}"]],
)
def test_refuses_unknown_or_formatted_placeholders(template: list[str]) -> None:
    with pytest.raises(InvalidCommandTemplate):
        render_argv(template, {"data": "/d.csv"})


@pytest.mark.parametrize("template", ["python evaluate.py", [], ["python", 3]])
def test_refuses_templates_that_are_not_lists_of_strings(template: object) -> None:
    with pytest.raises(InvalidCommandTemplate):
        render_argv(template, {})  # type: ignore[arg-type]
