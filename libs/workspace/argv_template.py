"""Fill the ``{placeholder}`` fields of a command template taken from a policy file."""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence


class InvalidCommandTemplate(ValueError):
    """The template is not a list of strings or names a placeholder that was not supplied."""


def render_argv(template: Sequence[str], values: Mapping[str, str]) -> list[str]:
    """Replace ``{name}`` in each argument; unknown names and format specs are refused."""
    if isinstance(template, str) or not template or not all(isinstance(arg, str) for arg in template):
        raise InvalidCommandTemplate(f"a command must be a non-empty list of strings, got {template!r}")
    rendered: list[str] = []
    for argument in template:
        pieces: list[str] = []
        for literal, field, spec, conversion in string.Formatter().parse(argument):
            pieces.append(literal)
            if field is None:
                continue
            if spec or conversion or field not in values:
                raise InvalidCommandTemplate(f"unsupported placeholder {{{field}}} in {argument!r}")
            pieces.append(str(values[field]))
        rendered.append("".join(pieces))
    return rendered
