"""The one rule for turning a workspace file's bytes into Python source text: Python's own (PEP 263). Python is
the oracle: a file is readable exactly when Python compiles it, and its text is the text Python compiles."""

from __future__ import annotations

import ast

import pytest

from libs.python_source.source_encoding import UnreadableSource, decode_source
from libs.python_source.untrusted_parsing import parse_module
from tests.unit.python_source.encoding_cases import CASES, UNREADABLE, EncodingCase


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_a_file_is_readable_exactly_when_python_reads_it(case: EncodingCase) -> None:
    raw = case.raw(candidate=True)
    try:
        python_tree = ast.parse(raw)
    except SyntaxError:
        python_tree = None
    assert (python_tree is not None) == (case.readable is not None)
    if python_tree is None:
        with pytest.raises(UnreadableSource):
            decode_source(raw)
        return
    decoded = decode_source(raw)
    assert decoded.encoding == case.readable
    assert decoded.text == case.text(candidate=True)
    assert "\ufffd" not in decoded.text
    assert ast.dump(parse_module(decoded.text)) == ast.dump(python_tree)


@pytest.mark.parametrize("case", UNREADABLE, ids=lambda case: case.name)
def test_an_unreadable_file_has_one_reason_and_parse_module_of_its_bytes_gives_it(case: EncodingCase) -> None:
    raw = case.raw(candidate=True)
    with pytest.raises(UnreadableSource) as refused:
        decode_source(raw)
    reason = refused.value.reason
    assert reason and "\ufffd" not in reason
    assert isinstance(refused.value, SyntaxError)  # every reader already takes "does not parse" as a SyntaxError
    with pytest.raises(SyntaxError) as parsed:
        parse_module(raw)
    assert parsed.value.msg == reason


def test_the_reasons_say_what_is_wrong() -> None:
    by_name = {case.name: case for case in UNREADABLE}

    def reason(name: str) -> str:
        with pytest.raises(UnreadableSource) as refused:
            decode_source(by_name[name].raw(candidate=True))
        return refused.value.reason

    assert "klingon" in reason("unknown_codec")
    assert "byte order mark" in reason("bom_and_latin1_cookie")
    assert "latin-1" in reason("bom_and_latin1_cookie")
    for name in ("cookie_lies_utf8_but_latin1", "cookie_on_line_3_is_ignored", "no_cookie_latin1"):
        assert "UTF-8" in reason(name)
        assert "0xe9" in reason(name)


def test_a_codec_that_is_no_text_encoding_is_unreadable_as_python_says() -> None:
    raw = b"# -*- coding: rot13 -*-\nx = 1\n"
    with pytest.raises(SyntaxError):
        ast.parse(raw)
    with pytest.raises(UnreadableSource) as refused:
        decode_source(raw)
    assert "rot13" in refused.value.reason


def test_utf8_text_is_read_as_before_with_its_byte_order_mark_kept() -> None:
    decoded = decode_source(b"\xef\xbb\xbfx = 'caf\xc3\xa9'\r\n")
    assert decoded.text == "\ufeffx = 'café'\r\n"
    assert decoded.encoding == "utf-8"
    assert decoded.is_utf8
