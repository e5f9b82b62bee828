"""ModelGuard's policy for a model: the gate, the workspace commands, diagnosis thresholds, repair limits.

The policy is ModelGuard's, not the model repository's: a repair may never edit it, and every incident
records the digest of the policy that governed it.
"""

from __future__ import annotations

from fnmatch import fnmatch
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from libs.policy.ci import CiPolicy
from libs.policy.diagnosis import DiagnosisPolicy
from libs.policy.errors import PolicyError, first_problem
from libs.policy.repair import RepairSection
from libs.policy.sandbox import SandboxPolicy
from libs.policy.yaml_documents import safe_load_once
from libs.referee.metrics import gate_problem


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GatePolicy(_Strict):
    metric: str
    direction: Literal["higher_is_better", "lower_is_better"]
    tolerance: float = Field(ge=0)
    threshold: float = 0.5
    """With ``predict``: a prediction at or above it is the positive class (f1, precision, recall, accuracy)."""
    positive_label: str = "1"
    """With ``predict``: the label value of the positive class, compared as text."""

    @field_validator("positive_label", mode="before")
    @classmethod
    def _label_as_text(cls, value: Any) -> Any:
        return (
            str(value).lower() if isinstance(value, bool) else str(value) if isinstance(value, int | float) else value
        )


class WorkspacePolicy(_Strict):
    """The workspace's ModelGuard config: how to run the model's own commands, and what a repair may touch."""

    predict: tuple[str, ...] | None = Field(default=None, min_length=1)
    """The referee's contract: train on ``{train}``, predict ``{features}`` (no labels) into ``{predictions}``."""
    evaluate: tuple[str, ...] | None = Field(default=None, min_length=1)
    """A self-reported metric: the workspace scores labelled rows and prints its own metrics."""
    label: str = Field(min_length=1)
    reported_metrics: tuple[str, ...] = ()
    """Metric names an ``evaluate`` command may print besides the gate's; any other name fails the run."""
    feature_modules: tuple[str, ...] = ()
    features: tuple[str, ...] | None = None
    tests: tuple[str, ...] | None = None
    repair_paths: tuple[str, ...] = ()
    categorical_defaults: dict[str, Any] = Field(default_factory=dict)
    null_fills: dict[str, Any] = Field(default_factory=dict)
    timeout_s: float = Field(default=300, gt=0)
    image: str | None = Field(default=None, min_length=1, max_length=512)
    """The model's own CI image (``registry/repository@sha256:…``), the alternative to an environment ModelGuard
    builds: with the Job backend (``MODELGUARD_IMAGE_JOBS``) its commands run in it as Kubernetes Jobs; the central
    policy's ``workspace_images`` must allow it (docs/workspace-environments.md, "A per-model image")."""

    @model_serializer(mode="wrap")
    def _without_an_unset_image(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A workspace without an image dumps as it did before the field existed (policies are pinned by digest)."""
        dumped: dict[str, Any] = handler(self)
        if dumped.get("image") is None:
            dumped.pop("image", None)
        return dumped

    @model_validator(mode="after")
    def _names_the_feature_code(self) -> WorkspacePolicy:
        if not self.predict and not self.evaluate:
            raise ValueError("name how the model is evaluated: a predict command, an evaluate command, or both")
        if not self.feature_modules and not self.features:
            raise ValueError("name the feature code: feature_modules, a features command, or both")
        return self

    @property
    def referee(self) -> bool:
        """Whether ModelGuard computes the metric itself (``predict``) rather than reading the workspace's own."""
        return self.predict is not None

    def evaluation_command(self) -> tuple[str, ...]:
        """The command whose result the gate reads: ``predict`` when declared, else ``evaluate``."""
        command = self.predict or self.evaluate
        assert command is not None  # the validator above requires one
        return command

    def command_spec(self) -> dict[str, Any]:
        """The mapping ``libs.workspace.commands`` reads: command name -> argv template, and timeout_s."""
        spec: dict[str, Any] = {"timeout_s": self.timeout_s}
        if self.predict is not None:
            spec["predict"] = list(self.predict)
        if self.evaluate is not None:
            spec["evaluate"] = list(self.evaluate)
        if self.features is not None:
            spec["features"] = list(self.features)
        if self.tests is not None:
            spec["tests"] = list(self.tests)
        if self.image is not None:
            spec["image"] = self.image
        return spec


class ValidationPolicy(_Strict):
    """The central policy's ``validation`` section: what a repair must show before it counts as validated."""

    require_predict: bool = False
    """Refuse a repair whose evaluation is self-reported (``evaluate``): only the referee's metric counts."""


def check_refereed_gate(gate: GatePolicy, workspace: WorkspacePolicy) -> None:
    """With ``predict`` the referee computes the gate metric: it must be one it knows, in its direction."""
    if workspace.predict is not None:
        problem = gate_problem(gate.metric, gate.direction)
        if problem:
            raise ValueError(f"gate: {problem}")


class ModelPolicy(BaseModel):
    """One model's effective policy: its gate and workspace config, inside ModelGuard's central policy.

    ``diagnosis``, ``repair``, ``sandbox``, ``validation`` and ``ci`` are the central policy's sections, each
    validated by the phase that reads it (``ci``: the CI result of each outcome, libs.policy.ci); the whole
    document is stored by digest with every incident.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = "default"
    applies_to: list[str] = Field(default_factory=lambda: ["*"])
    gate: GatePolicy
    workspace: WorkspacePolicy
    diagnosis: DiagnosisPolicy | None = None
    repair: RepairSection | None = None
    sandbox: SandboxPolicy = SandboxPolicy()
    validation: ValidationPolicy = ValidationPolicy()
    ci: CiPolicy = CiPolicy()

    @field_validator("diagnosis", "repair", mode="before")
    @classmethod
    def _empty_is_absent(cls, section: Any) -> Any:
        """``diagnosis: {}`` (a central policy without the section) reads as no section, as it always has."""
        return None if section == {} else section

    @model_validator(mode="after")
    def _refereed_gate(self) -> ModelPolicy:
        check_refereed_gate(self.gate, self.workspace)
        return self

    def applies(self, model_urn: str) -> bool:
        return any(fnmatch(model_urn, pattern) for pattern in self.applies_to)

    def diagnosis_thresholds(self) -> DiagnosisPolicy:
        """The ``diagnosis`` section, which the diagnoser cannot do without (no threshold has a default)."""
        if self.diagnosis is None:
            raise PolicyError(f"{self.name}: diagnosis: the policy has no diagnosis section")
        return self.diagnosis

    def generated_paths(self) -> tuple[str, ...]:
        """The ``repair.generated_paths`` globs of a central-shaped repair section (none otherwise)."""
        return getattr(self.repair, "generated_paths", ())


def parse_policy(data: bytes, origin: str) -> ModelPolicy:
    try:
        document = safe_load_once(data)
    except yaml.YAMLError as exc:
        raise PolicyError(f"{origin}: not YAML: {exc}") from exc
    except RecursionError:
        raise PolicyError(f"{origin}: not YAML this reader can take: nested past the parser's limit") from None
    if not isinstance(document, dict):
        raise PolicyError(f"{origin}: a policy is a mapping")
    try:
        return ModelPolicy.model_validate(document)
    except ValidationError as exc:
        raise PolicyError(f"{origin}: {first_problem(exc)}") from exc
