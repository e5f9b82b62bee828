"""Quality assertions: the latest result of each DataHub assertion on an asset on the model's lineage,
from ``assertionRunEvent`` change records and the context snapshot's assertions."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from contracts.context_snapshot import ContextSnapshot
from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence
from services.diagnoser.extractors.change_timing import preceded
from services.diagnoser.extractors.lineage_relevance import relevance
from services.diagnoser.inputs import MetadataChangeRecord
from services.diagnoser.schema_fields import field_name

PASSING_RESULTS = frozenset({"SUCCESS"})
FAILING_RESULTS = frozenset({"FAILURE", "ERROR"})

METHOD = (
    "latest assertionRunEvent result per assertion (change records, then the snapshot's latest results), kept "
    "when the asserted asset is on the model's lineage and the run precedes the regression"
)


def assertions_evidence(
    changes: Iterable[MetadataChangeRecord],
    context: ContextSnapshot | None,
    dataset_urn: str | None,
    regression_ms: int | None,
) -> Evidence:
    latest: dict[str, dict[str, Any]] = {}
    if context is not None:
        for assertion in context.assertions:
            assets = list(assertion.asserted_entities)
            latest[assertion.assertion_urn] = {
                "status": assertion_status(assertion.latest_result),
                "assets": assets,
                "fields": [field_name(urn) for urn in assertion.fields],
                "description": assertion.description,
                "time": None,
                "from": "snapshot",
            }
    runs = [r for r in changes if r.aspect == "assertionRunEvent" and r.current and preceded(r, regression_ms)]
    for record in sorted(runs, key=lambda r: r.time_ms or 0):
        event = record.current or {}
        urn = str(event.get("assertionUrn") or record.entity_urn)
        reported = event.get("result")
        result = reported if isinstance(reported, dict) else {}
        previous = latest.get(urn, {})
        latest[urn] = {
            "status": assertion_status(str(result.get("type") or "")),
            "assets": [str(event["asserteeUrn"])] if event.get("asserteeUrn") else previous.get("assets", []),
            "fields": previous.get("fields", []),
            "description": previous.get("description"),
            "time": record.time_ms,
            "from": "change_record",
        }
    for figures in latest.values():
        figures["relevance"] = max((relevance(a, dataset_urn, context) for a in figures["assets"]), default=0.0)
    relevant = {urn: figures for urn, figures in latest.items() if figures["relevance"] > 0}
    failing = sorted(urn for urn, figures in relevant.items() if figures["status"] == "failing")
    passing = sorted(urn for urn, figures in relevant.items() if figures["status"] == "passing")
    return make_evidence(
        EvidenceKind.ASSERTIONS,
        subject="assertions",
        values={"assertions": relevant, "failing": failing, "passing": passing},
        summary=f"{len(failing)} failing and {len(passing)} passing assertion(s) on the model's lineage"
        + (
            f"; failing on: {', '.join(sorted({f for u in failing for f in relevant[u]['fields']}))}" if failing else ""
        ),
        source=EvidenceSource.METADATA,
        strength=max((relevant[urn]["relevance"] for urn in failing), default=0.0),
        method=METHOD,
    )


def assertion_status(latest_result: str | None) -> str:
    """DataHub's assertion result type (``SUCCESS``, ``FAILURE``, ``ERROR``, ...) as passing, failing or unknown."""
    result = (latest_result or "").upper()
    if result in PASSING_RESULTS:
        return "passing"
    if result in FAILING_RESULTS:
        return "failing"
    return "unknown"
