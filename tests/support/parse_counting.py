"""Counting the parses of workspace Python: each text `ast.parse` is called on by the untrusted parser."""

from __future__ import annotations

import ast
from typing import Any

import pytest

import libs.python_source.untrusted_parsing as untrusted_parsing


def counted_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A list that receives each text the untrusted parser hands to `ast.parse`, from now to the test's end."""
    parsed: list[str] = []
    real = ast.parse

    def counting(source: Any, *args: Any, **kwargs: Any) -> Any:
        parsed.append(source)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(untrusted_parsing.ast, "parse", counting)
    return parsed
