"""Within one handling's scope a text is parsed once however many readers ask for it, as text or as the bytes that
decode to it; bytes that decode to other text (a coding declaration) get their own tree; a text that does not parse
is refused to each reader; nothing is kept outside a scope or from one scope to the next."""

from __future__ import annotations

import ast
import threading
from contextvars import copy_context

import pytest

import libs.python_source.shared_parses as shared_parses_module
from libs.python_source.shared_parses import shared_parses
from libs.python_source.untrusted_parsing import parse_expression, parse_module
from tests.support.parse_counting import counted_parses

SOURCE = 'def monthly(total, months):\n    """Per month."""\n    return total / months\n'


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    return counted_parses(monkeypatch)


def test_a_text_is_parsed_once_in_a_scope_as_text_and_as_its_bytes(parses: list[str]) -> None:
    with shared_parses():
        first = parse_module(SOURCE)
        assert parse_module(SOURCE) is first
        assert parse_module(SOURCE.encode()) is first
        assert parse_module("\ufeff" + SOURCE) is first  # the mark is no text: Python reads the file without it
        expression = parse_expression("total / months")
        assert parse_expression("total / months") is expression
    assert parses == [SOURCE, "total / months"]


def test_outside_a_scope_and_in_the_next_scope_each_reader_parses_again(parses: list[str]) -> None:
    outside = parse_module(SOURCE)
    assert parse_module(SOURCE) is not outside
    with shared_parses():
        first = parse_module(SOURCE)
    with shared_parses():
        second = parse_module(SOURCE)
    assert second is not first and ast.dump(second) == ast.dump(first)
    assert len(parses) == 4


def test_bytes_a_coding_declaration_reads_as_other_text_get_their_own_tree(parses: list[str]) -> None:
    text = '# -*- coding: latin-1 -*-\nname = "café"\n'
    with shared_parses():
        from_text = parse_module(text)
        from_latin1 = parse_module(text.encode("latin-1"))
        from_utf8 = parse_module(text.encode("utf-8"))  # read as latin-1, as Python would: other text
    values = [tree.body[0].value.value for tree in (from_text, from_latin1, from_utf8)]  # type: ignore[attr-defined]
    assert values == ["café", "café", "cafÃ©"]
    assert from_latin1 is from_text and from_utf8 is not from_text
    assert len(parses) == 2


@pytest.mark.parametrize("source", ["def f(:\n", "total = " + " + ".join("x" for _ in range(400)) + "\n"])
def test_a_text_that_does_not_parse_is_refused_to_every_reader(source: str, parses: list[str]) -> None:
    with shared_parses():
        for _ in range(2):
            with pytest.raises(SyntaxError):
                parse_module(source)
    assert len(parses) == 2


def test_threads_given_the_scope_share_it_and_nested_scopes_share_the_outer(parses: list[str]) -> None:
    trees: list[ast.Module] = []
    with shared_parses():
        trees.append(parse_module(SOURCE))
        with shared_parses():
            trees.append(parse_module(SOURCE))
        given = threading.Thread(target=copy_context().run, args=(lambda: trees.append(parse_module(SOURCE)),))
        given.start()
        given.join()
        stranger = threading.Thread(target=lambda: trees.append(parse_module(SOURCE)))  # a fresh context
        stranger.start()
        stranger.join()
    assert trees[0] is trees[1] is trees[2] and trees[3] is not trees[0]
    assert len(parses) == 2


def test_a_scope_keeps_trees_of_at_most_its_characters(parses: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shared_parses_module, "MAX_CHARS", len(SOURCE) + 10)
    other = SOURCE.replace("monthly", "weekly")
    with shared_parses():
        kept = parse_module(SOURCE)
        parse_module(other)  # over the bound: made, not kept
        assert parse_module(SOURCE) is kept
        parse_module(other)
    assert parses == [SOURCE, other, other]
