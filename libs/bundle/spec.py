"""The schema of ``bundle.yaml`` (docs/scenarios.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from libs.policy.model_policy import GatePolicy, WorkspacePolicy, check_refereed_gate

BUNDLE_FORMAT = "modelguard-bundle/1"
NAME_PATTERN = r"^[a-z0-9][a-z0-9-]{0,99}$"


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ModelSpec(_Strict):
    urn: str = Field(pattern=r"^urn:li:mlModel:")
    repository: str = Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
    dataset_urn: str | None = Field(default=None, pattern=r"^urn:li:dataset:")


class ReportedMetrics(_Strict):
    baseline: dict[str, float]
    candidate: dict[str, float]


class CommitAuthor(_Strict):
    name: str = "ModelGuard Bundle"
    email: str = "bundle@modelguard.invalid"


class CommitMeta(_Strict):
    message: str
    author: CommitAuthor = CommitAuthor()
    date: datetime


class BundleCommits(_Strict):
    base: CommitMeta = CommitMeta(message="Base revision\n", date=datetime.fromisoformat("2025-01-01T00:00:00+00:00"))
    candidate: CommitMeta = CommitMeta(
        message="Candidate revision\n", date=datetime.fromisoformat("2025-01-02T00:00:00+00:00")
    )


class BundleSpec(_Strict):
    format: Literal["modelguard-bundle/1"]
    name: str = Field(pattern=NAME_PATTERN)
    description: str = ""
    model: ModelSpec
    gate: GatePolicy
    workspace: WorkspacePolicy
    metrics: ReportedMetrics | None = None
    commits: BundleCommits = BundleCommits()

    @model_validator(mode="after")
    def _refereed_gate(self) -> BundleSpec:
        check_refereed_gate(self.gate, self.workspace)
        return self
