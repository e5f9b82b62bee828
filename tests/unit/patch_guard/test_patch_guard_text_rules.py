"""Characters a reviewer cannot see, and coding declarations other than UTF-8."""

from __future__ import annotations

import pytest

from libs.patch_guard.text_rules import foreign_coding, hidden_characters


@pytest.mark.parametrize(
    "line",
    ["a\u202eb", "is_admin\u200b = True", "x = 1\rimport os", "tag\U000e0041", "x\u2028y", "nul\x00", "bell\x07"],
)
def test_hidden(line: str) -> None:
    assert hidden_characters(line)


@pytest.mark.parametrize("line", ["\tx = 'café 中文'", "x = 1\r", "plain"])
def test_visible(line: str) -> None:
    assert hidden_characters(line) == []


def test_a_byte_order_mark_only_at_the_start_of_a_file() -> None:
    assert hidden_characters("\ufeffx = 1", first_line_of_file=True) == []
    assert hidden_characters("\ufeffx = 1")


@pytest.mark.parametrize(
    ("line", "coding"),
    [
        ("# -*- coding: utf-7 -*-", "utf-7"),
        ("# vim: set fileencoding=latin-1 :", "latin-1"),
        ("# coding: rot13", "rot13"),
        ("# coding: nonsense-codec", "nonsense-codec"),
        ("# -*- coding: utf-8 -*-", None),
        ("# coding=UTF8", None),
        ("x = 'coding: utf-7'", None),
    ],
)
def test_coding_declarations(line: str, coding: str | None) -> None:
    assert foreign_coding(line) == coding


def test_a_carriage_return_is_a_line_ending_only_in_a_file_whose_lines_end_in_one() -> None:
    assert hidden_characters("x = 1\ry = 2\r", carriage_returns_end_lines=True) == []
    assert hidden_characters("x = 1\ry = 2\r")
    assert hidden_characters("x = 1\ry\u200b = 2\r", carriage_returns_end_lines=True) == [
        "U+200B ZERO WIDTH SPACE at column 8"
    ]
