"""Value objects shared by several event contracts."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from contracts.context_snapshot import Owner
from contracts.meta import SHA256_HEX


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ArtifactRef(Frozen):
    """A blob in the content-addressed artifact store."""

    sha256: str = Field(pattern=SHA256_HEX)
    media_type: str
    size: int = Field(ge=0)


class AssetOwners(Frozen):
    """One asset and the owners DataHub records for it, as the context collected them (urn, ownership type,
    the asset owned, where it was read). An empty ``owners`` says DataHub records no owner for the asset."""

    asset: str = Field(description="the urn of the dataset or model")
    owners: list[Owner] = Field(default_factory=list)

    @model_validator(mode="after")
    def _owners_own_the_asset(self) -> AssetOwners:
        strays = sorted({o.entity_urn for o in self.owners if o.entity_urn != self.asset})
        if strays:
            raise ValueError(f"owners of {strays} listed under {self.asset}")
        return self


def owner_urns(entries: Iterable[AssetOwners]) -> list[str]:
    """Every owner's urn once, in the order the entries name them."""
    return list(dict.fromkeys(owner.owner_urn for entry in entries for owner in entry.owners))


class WorkspaceRefs(Frozen):
    """Where the model's code and data for one evaluation live."""

    model_urn: str
    repository: str
    pull_request: int | None = Field(default=None, ge=1)
    base_commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    candidate_commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    base_snapshot: ArtifactRef
    candidate_snapshot: ArtifactRef
    data: ArtifactRef


class GateResult(Frozen):
    """The deterministic quality gate's verdict: numbers only, no reasoning can overrule it."""

    metric: str
    direction: Literal["higher_is_better", "lower_is_better"]
    tolerance: float = Field(ge=0)
    baseline: float
    candidate: float
    delta: float
    regressed: bool
    metric_source: Literal["referee", "self_reported"] = "self_reported"
    """Who computed ``baseline`` and ``candidate``: ModelGuard from the workspace's predictions and the labels it
    kept back (``referee``), or the workspace's own evaluation (``self_reported``)."""
    claimed_baseline: float | None = None
    claimed_candidate: float | None = None
    """With the referee: the figures the model's CI reported, kept for comparison; the gate never reads them."""


class PolicyRef(Frozen):
    """The policy that governed an incident, by digest (stored in the artifact store)."""

    name: str
    artifact: ArtifactRef


class IncidentState(Frozen):
    """What every phase after detection carries forward: the run, the code and data, the policy, the gate."""

    run_id: str
    workspace: WorkspaceRefs
    policy: PolicyRef
    gate: GateResult

    def carried(self) -> dict[str, object]:
        """The fields the next phase's event repeats, as constructor arguments."""
        return {"run_id": self.run_id, "workspace": self.workspace, "policy": self.policy, "gate": self.gate}
