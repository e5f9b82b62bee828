"""Who a repair outcome tells: the affected assets, each with the owners DataHub records for it.

A cause in the data (the named hypothesis, or every candidate of an abstention, placed by the catalogue's
``LOCATION``) puts the datasets the diagnosis says it lies in first, then the model; any other cause (the code,
generated code, candidates on both sides, none), the model alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from contracts.catalogue import CauseLocation, location_of
from contracts.common import AssetOwners, owner_urns
from contracts.events.diagnosis import ContextSummary, DiagnosisReport

LOW_CONFIDENCE = "low"
"""The diagnosis's word (``RankedHypothesis.confidence``) for a score below its policy's ``confidence_medium``."""


def abstention_candidates(report: DiagnosisReport) -> list[str]:
    """The causes an abstention could not choose between: the named hypotheses the report rates above low
    confidence (none when nothing was supported)."""
    return [h.name for h in report.hypotheses if location_of(h.name) is not None and h.confidence != LOW_CONFIDENCE]


def is_data_cause(hypotheses: Sequence[str]) -> bool:
    return bool(hypotheses) and all(location_of(name) == CauseLocation.DATA for name in hypotheses)


def owners_to_tell(summary: ContextSummary, hypotheses: Sequence[str]) -> list[AssetOwners]:
    """The affected assets for a cause among ``hypotheses``; empty for a report from before contracts 1.1, which
    carries no owner records."""
    if summary.model_ownership is None:
        return []
    if not is_data_cause(hypotheses):
        return [summary.model_ownership]
    recorded = {entry.asset: entry for entry in summary.dataset_ownership}
    datasets = [recorded.get(urn, AssetOwners(asset=urn)) for urn in summary.cause_datasets]
    return [*datasets, summary.model_ownership]


def urns_to_notify(summary: ContextSummary, owners: Sequence[AssetOwners]) -> list[str]:
    """The owners' urns, each once; for a report from before 1.1 the flat lists it had (model, then upstream)."""
    if summary.model_ownership is None:
        return list(dict.fromkeys([*summary.model_owners, *summary.upstream_owners]))
    return owner_urns(owners)
