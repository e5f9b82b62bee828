"""The MCL intake's limits, read from the central policy's ``mcl_intake`` section (no defaults in code)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from libs.policy.central import CentralPolicyError, central_policy_path, read_central_policy_document
from libs.policy.errors import first_problem

SECTION = "mcl_intake"


class MclIntakeLimits(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    max_aspect_bytes: int = Field(gt=0, description="an aspect value (or previous value) larger than this is refused")
    dead_letter_prefix_bytes: int = Field(ge=0, description="leading bytes an oversize MCL's dead letter keeps")


def central_mcl_limits(path: Path | None = None) -> MclIntakeLimits:
    """The ``mcl_intake`` section of ModelGuard's central policy file; CentralPolicyError, in one line, when it is
    missing or a limit is not one."""
    try:
        return MclIntakeLimits.model_validate(read_central_policy_document(path).get(SECTION) or {})
    except ValidationError as error:
        raise CentralPolicyError(f"{central_policy_path(path)}: {first_problem(error, (SECTION,))}") from None
