"""DataHub dataset profiles: the rise of each field's null proportion between the previous and the current
``datasetProfile`` of a change record (assets on the model's lineage, before the regression)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from contracts.context_snapshot import ContextSnapshot
from libs.policy.diagnosis import DiagnosisPolicy
from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence
from services.diagnoser.extractors.change_timing import preceded
from services.diagnoser.extractors.lineage_relevance import relevance
from services.diagnoser.inputs import MetadataChangeRecord
from services.diagnoser.schema_fields import simple_path

METHOD = "datasetProfile previous vs current: fieldProfiles[].nullProportion (or nullCount / rowCount) per field"


def dataset_profiles_evidence(
    changes: Iterable[MetadataChangeRecord],
    dataset_urn: str | None,
    context: ContextSnapshot | None,
    regression_ms: int | None,
    thresholds: DiagnosisPolicy,
) -> Evidence:
    rises: dict[str, dict[str, Any]] = {}
    weight = 0.0
    for record in changes:
        if record.aspect != "datasetProfile" or not preceded(record, regression_ms):
            continue
        asset_relevance = relevance(record.entity_urn, dataset_urn, context)
        if asset_relevance == 0:
            continue
        before, after = _null_proportions(record.previous), _null_proportions(record.current)
        for name, proportion in after.items():
            rise = proportion - before.get(name, 0.0)
            if rise >= thresholds.rate_rise and rise > rises.get(name, {}).get("rise", -1.0):
                rises[name] = {"before": before.get(name, 0.0), "after": proportion, "rise": round(rise, 6)}
                weight = max(weight, asset_relevance)
    top = max((figures["rise"] for figures in rises.values()), default=0.0)
    return make_evidence(
        EvidenceKind.DATASET_PROFILES,
        subject=dataset_urn or "upstream",
        values={"null_rises": rises},
        summary=(
            "DataHub profiles show null proportions rising: "
            + ", ".join(f"{name} {f['before']:.1%} -> {f['after']:.1%}" for name, f in rises.items())
            if rises
            else "no DataHub profile shows a null proportion rising"
        ),
        source=EvidenceSource.METADATA,
        strength=min(1.0, top / thresholds.rate_rise_full) * weight if rises else 0.0,
        method=METHOD,
    )


def _null_proportions(aspect: Mapping[str, Any] | None) -> dict[str, float]:
    if not aspect:
        return {}
    rows = aspect.get("rowCount")
    found = {}
    for profile in aspect.get("fieldProfiles") or []:
        if not isinstance(profile, Mapping) or "fieldPath" not in profile:
            continue
        proportion = profile.get("nullProportion")
        if proportion is None and profile.get("nullCount") is not None and rows:
            proportion = float(profile["nullCount"]) / float(rows)
        if proportion is not None:
            found[simple_path(str(profile["fieldPath"]))] = float(proportion)
    return found
