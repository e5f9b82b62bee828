"""ModelGuard's policy for a model: the gate, the workspace commands, diagnosis thresholds, repair limits.

The policy is ModelGuard's, not the model repository's: a repair may never edit it, and every incident
records the digest of the policy that governed it.
"""

from __future__ import annotations

from fnmatch import fnmatch
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError


class PolicyError(ValueError):
    pass


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GatePolicy(_Strict):
    metric: str
    direction: Literal["higher_is_better", "lower_is_better"]
    tolerance: float = Field(ge=0)


class WorkspacePolicy(_Strict):
    timeout_s: float = Field(default=300, gt=0)
    evaluate: list[str]
    features: list[str]
    tests: list[str]


class DiagnosisPolicy(_Strict):
    abstain_below: float = Field(ge=0, le=1)
    min_margin: float = Field(ge=0, le=1)


class RepairPolicy(_Strict):
    strategies: list[str]
    allowed_paths: list[str]
    max_files: int = Field(ge=1)
    max_changed_lines: int = Field(ge=1)
    protected_paths: list[str]


class ModelPolicy(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    name: str = "default"
    applies_to: list[str] = Field(default_factory=lambda: ["*"])
    gate: GatePolicy
    workspace: WorkspacePolicy
    diagnosis: DiagnosisPolicy
    repair: RepairPolicy

    def applies(self, model_urn: str) -> bool:
        return any(fnmatch(model_urn, pattern) for pattern in self.applies_to)


def parse_policy(data: bytes, origin: str) -> ModelPolicy:
    try:
        document = yaml.safe_load(data)
    except yaml.YAMLError as exc:
        raise PolicyError(f"{origin}: not YAML: {exc}") from exc
    if not isinstance(document, dict):
        raise PolicyError(f"{origin}: a policy is a mapping")
    try:
        return ModelPolicy.model_validate(document)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise PolicyError(f"{origin}: {where}: {first['msg']}") from exc
