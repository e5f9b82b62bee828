"""The central policy's short list of what a repair may introduce beyond what the module already uses.

Four lists (``repair.new_code`` in ``policy/central.yaml``): ``builtins`` (``len``, ``min``...),
``module_names`` (qualified: ``numpy.where``, ``pandas.to_numeric``, ``math.isfinite``), ``methods``
(attribute names on a value: ``fillna``, ``astype``...) and ``imports`` (modules a repair may import:
``math``). Entries are exact; there are no wildcards, and no entry can be a dunder name.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, field_validator

from libs.patch_guard.module_uses import Use, is_dunder

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class NewCodeAllowList(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    builtins: tuple[str, ...] = ()
    module_names: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    imports: tuple[str, ...] = ()

    @field_validator("builtins", "methods")
    @classmethod
    def _plain_names(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        for name in names:
            _check_part(name, name)
        return names

    @field_validator("module_names", "imports")
    @classmethod
    def _qualified_names(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        for name in names:
            for part in name.split("."):
                _check_part(part, name)
        return names

    def admits(self, use: Use) -> bool:
        if use.kind == "attribute":
            return use.name in self.methods
        if use.kind == "import":
            return use.name in self.imports
        return use.name in (self.module_names if "." in use.name else self.builtins)


def _check_part(part: str, entry: str) -> None:
    if not IDENTIFIER.match(part) or is_dunder(part):
        raise ValueError(f"{entry!r} is not a plain (non-dunder) Python name")
