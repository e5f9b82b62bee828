"""ModelGuard's policy for a model: the gate, the workspace commands, diagnosis thresholds, repair limits.

The policy is ModelGuard's, not the model repository's: a repair may never edit it, and every incident
records the digest of the policy that governed it.
"""

from __future__ import annotations

from fnmatch import fnmatch
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator


class PolicyError(ValueError):
    pass


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GatePolicy(_Strict):
    metric: str
    direction: Literal["higher_is_better", "lower_is_better"]
    tolerance: float = Field(ge=0)


class WorkspacePolicy(_Strict):
    """The workspace's ModelGuard config: how to run the model's own commands, and what a repair may touch."""

    evaluate: tuple[str, ...] = Field(min_length=1)
    label: str = Field(min_length=1)
    feature_modules: tuple[str, ...] = ()
    features: tuple[str, ...] | None = None
    tests: tuple[str, ...] | None = None
    repair_paths: tuple[str, ...] = ()
    categorical_defaults: dict[str, Any] = Field(default_factory=dict)
    null_fills: dict[str, Any] = Field(default_factory=dict)
    timeout_s: float = Field(default=300, gt=0)

    @model_validator(mode="after")
    def _names_the_feature_code(self) -> WorkspacePolicy:
        if not self.feature_modules and not self.features:
            raise ValueError("name the feature code: feature_modules, a features command, or both")
        return self

    def command_spec(self) -> dict[str, Any]:
        """The mapping ``libs.workspace.commands`` reads: command name -> argv template, and timeout_s."""
        spec: dict[str, Any] = {"evaluate": list(self.evaluate), "timeout_s": self.timeout_s}
        if self.features is not None:
            spec["features"] = list(self.features)
        if self.tests is not None:
            spec["tests"] = list(self.tests)
        return spec


class ModelPolicy(BaseModel):
    """One model's effective policy: its gate and workspace config, inside ModelGuard's central policy.

    ``diagnosis``, ``repair`` and ``sandbox`` are the central policy's sections, each validated by the
    phase that reads it; the whole document is stored by digest with every incident.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    name: str = "default"
    applies_to: list[str] = Field(default_factory=lambda: ["*"])
    gate: GatePolicy
    workspace: WorkspacePolicy
    diagnosis: dict[str, Any] = Field(default_factory=dict)
    repair: dict[str, Any] = Field(default_factory=dict)
    sandbox: dict[str, Any] = Field(default_factory=dict)

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
