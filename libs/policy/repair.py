"""The central policy's ``repair:`` section, and the older narrowing shape a model policy's ``repair:`` may take.

The central section (``permitted_paths``, ``protected_paths``, ``file_types``, limits, ``strategies``...) is the
patch guard's outer bound. A model policy of the older shape (``allowed_paths``, ``protected_paths``, limits)
narrows the central policy read from its file (``libs.patch_guard.policy``). Which shape a section has is told by
``permitted_paths``, as the repairer always has; a key neither shape reads is refused.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Discriminator, Field, Tag

from contracts.catalogue import RepairStrategy
from libs.patch_guard.constructs import CATEGORIES, Category
from libs.patch_guard.new_code_allowlist import NewCodeAllowList

FileOperation = Literal["modify", "create", "delete", "rename", "copy", "mode_change"]
Denominator = Literal["zero", "negative", "null", "nan"]


def _catalogued(names: Any) -> Any:
    """A list of strategy names naming one the catalogue does not hold is refused with that name (pydantic's own
    error would list the catalogue's members instead); any other shape is left for the type to judge."""
    if isinstance(names, list | tuple):
        known = {strategy.value for strategy in RepairStrategy}
        unknown = next((name for name in names if isinstance(name, str) and name not in known), None)
        if unknown is not None:
            raise ValueError(f"unknown repair strategy {unknown!r}")
    return names


CatalogueStrategies = Annotated[tuple[RepairStrategy, ...], BeforeValidator(_catalogued)]
"""Repair strategies a policy names: members of ``contracts.catalogue.RepairStrategy``, an unknown name refused."""


class DivisionPolicy(BaseModel):
    """The policy's ``repair.division`` section: which denominators guarded_division guards against, and
    the value it returns for them (when unset: the base revision's, else one matching the return type)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    denominators: frozenset[Denominator] = frozenset({"zero", "negative"})
    fallback: float | int | None = None


class RepairPolicy(BaseModel):
    """The ``repair:`` section of the central policy (the patch guard's outer bound, ``libs.patch_guard.policy``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    permitted_paths: tuple[str, ...] = Field(min_length=1)
    protected_paths: tuple[str, ...]
    file_types: tuple[str, ...] = Field(min_length=1)
    file_operations: tuple[FileOperation, ...] = ("modify",)
    max_files: int = Field(ge=1)
    max_changed_lines: int = Field(ge=1)
    max_patch_bytes: int = Field(ge=1)
    forbidden_constructs: tuple[Category, ...] = CATEGORIES
    new_code: NewCodeAllowList = NewCodeAllowList()
    """What a repair may introduce beyond what the patched module already uses (none when absent)."""
    generated_paths: tuple[str, ...] = ()
    """Globs of generated files, never edited (besides files whose header or .gitattributes says so)."""
    strategies: CatalogueStrategies = ()
    """The repair strategies the platform permits (the repairer tries them; the guard checks the name)."""
    division: DivisionPolicy | None = None
    """Read by the repairer's guarded_division strategy, not by the guard."""


class RepairNarrowing(BaseModel):
    """A model policy's ``repair:`` section of the older shape: it narrows the central policy's file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    allowed_paths: tuple[str, ...] | None = None
    """Globs a repaired path must match besides the central ones and the workspace's ``repair_paths``."""
    protected_paths: tuple[str, ...] = ()
    max_files: int | None = Field(default=None, ge=1)
    max_changed_lines: int | None = Field(default=None, ge=1)
    strategies: CatalogueStrategies | None = None
    """The strategies this model permits, of the central policy's (all of them when unset)."""
    division: DivisionPolicy | None = None


def _shape(section: Any) -> str:
    if isinstance(section, RepairNarrowing) or (isinstance(section, dict) and "permitted_paths" not in section):
        return "narrowing"
    return "central"


RepairSection = Annotated[
    Annotated[RepairPolicy, Tag("central")] | Annotated[RepairNarrowing, Tag("narrowing")],
    Discriminator(_shape),
]
"""A model policy's ``repair:`` section: the central shape when it names ``permitted_paths``, else a narrowing."""
