"""Collect every piece of evidence for one incident: the code change, the workspace's own commands run on
both trees, the source data, the metric, and the DataHub context. The order of the list is stable."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contracts.context_snapshot import ContextSnapshot
from services.diagnoser.code_diff import diff_trees
from services.diagnoser.code_evidence import code_change_evidence
from services.diagnoser.evidence import Evidence, EvidenceKind, of_kind
from services.diagnoser.feature_path import feature_source_files
from services.diagnoser.metadata_evidence import assertion_fields, metadata_evidence
from services.diagnoser.observations import (
    choose_source_column,
    data_digest,
    observe_features,
    observe_metric,
    observe_source_anomalies,
    reported_metric,
)
from services.diagnoser.workspace_evidence import (
    FeatureRun,
    MetricComparison,
    SourceAnomalyCount,
    invalid_values_evidence,
    metric_delta_evidence,
    source_anomaly_evidence,
    source_identity_evidence,
)


@dataclass(frozen=True)
class CollectedEvidence:
    evidence: tuple[Evidence, ...]
    base_features: FeatureRun
    candidate_features: FeatureRun
    source_anomalies: SourceAnomalyCount | None
    metric: MetricComparison | None
    changed_files: tuple[str, ...]
    feature_files: tuple[str, ...]


def collect_evidence(
    base_dir: Path,
    candidate_dir: Path,
    data_csv: Path,
    workspace_spec: Mapping[str, Any],
    snapshot: ContextSnapshot | None,
    *,
    gate_policy: Mapping[str, Any] | None = None,
    base_data_csv: Path | None = None,
    reported_metrics: Mapping[str, Mapping[str, float]] | None = None,
) -> CollectedEvidence:
    base_data = base_data_csv or data_csv
    diff = diff_trees(base_dir, candidate_dir)
    feature_files = feature_source_files(candidate_dir, workspace_spec) | feature_source_files(base_dir, workspace_spec)
    evidence = code_change_evidence(diff, base_dir, candidate_dir, feature_files)

    with tempfile.TemporaryDirectory(prefix="modelguard-diagnoser-") as scratch:
        base_run = observe_features("base", base_dir, data_csv, workspace_spec, Path(scratch))
        candidate_run = observe_features("candidate", candidate_dir, data_csv, workspace_spec, Path(scratch))
    evidence.append(invalid_values_evidence(base_run, candidate_run))
    evidence.append(source_identity_evidence(data_digest(base_data), candidate_run.data_digest))

    divisor_parameters = [
        name
        for item in of_kind(evidence, EvidenceKind.UNGUARDED_DIVISION)
        for name in item.values["divisor_parameters"]
    ]
    column = choose_source_column(data_csv, divisor_parameters, assertion_fields(snapshot))
    anomalies = observe_source_anomalies(column[0], column[1], base_data, data_csv) if column else None
    if anomalies is not None:
        evidence.append(source_anomaly_evidence(anomalies))

    metric = None
    if gate_policy is not None and reported_metrics is not None:
        metric = reported_metric(gate_policy, reported_metrics)
    elif gate_policy is not None:
        metric = observe_metric(base_dir, candidate_dir, base_data, data_csv, workspace_spec, gate_policy)
    if metric is not None:
        evidence.append(metric_delta_evidence(metric))

    evidence.extend(metadata_evidence(snapshot, diff.changed_paths(), feature_files))
    return CollectedEvidence(
        evidence=tuple(evidence),
        base_features=base_run,
        candidate_features=candidate_run,
        source_anomalies=anomalies,
        metric=metric,
        changed_files=tuple(diff.changed_paths()),
        feature_files=tuple(sorted(feature_files)),
    )
