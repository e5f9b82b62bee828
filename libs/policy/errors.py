"""The error every policy loader raises: one readable line naming the file, the key and what is wrong."""

from __future__ import annotations

from pydantic import ValidationError
from pydantic_core import ErrorDetails


class PolicyError(ValueError):
    """A policy that cannot be used: not YAML, not a mapping, an unknown key, a value of the wrong type."""


def first_problem(error: ValidationError, prefix: tuple[str, ...] = ()) -> str:
    """``where: what`` for the first error pydantic found, the key path dotted (``repair.max_filez: unknown key``).

    An unknown key is named before any other problem (a misspelt key also leaves its right spelling missing).
    Union members pydantic tags (a repair section's two shapes) are not keys and are left out of the path.
    """
    errors = error.errors()
    first = next((item for item in errors if item["type"] == "extra_forbidden"), errors[0])
    where = ".".join((*prefix, *(str(part) for part in first["loc"] if str(part) not in _TAGS)))
    message = "unknown key" if first["type"] == "extra_forbidden" else _message(first)
    return f"{where}: {message}" if where else message


_TAGS = frozenset({"central", "narrowing"})
"""The tags of ``libs.policy.repair.RepairSection``'s shapes."""


def problem_message(error: ValidationError) -> str:
    """The first problem pydantic found, in its words (a validator's own words as it raised them), without where."""
    return _message(error.errors()[0])


def _message(problem: ErrorDetails) -> str:
    """pydantic's message, without the ``Value error, `` it puts in front of a validator's own words."""
    raised = problem.get("ctx", {}).get("error")
    return str(raised) if problem["type"] == "value_error" and isinstance(raised, ValueError) else problem["msg"]
