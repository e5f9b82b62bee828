"""The diagnoser's I/O edge: run the workspace's own commands on both trees and read the data files.

Everything here produces figures; turning them into evidence is done by pure functions elsewhere.
Command outputs are written to a scratch folder outside both trees.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from libs.workspace.commands import build_features, evaluate
from libs.workspace.data_checks import count_invalid_values, count_source_anomalies
from libs.workspace.snapshot import file_digest
from services.diagnoser.workspace_evidence import FeatureRun, MetricComparison, SourceAnomalyCount


def observe_features(tree_name: str, tree: Path, data_csv: Path, spec: Mapping[str, Any], scratch: Path) -> FeatureRun:
    """Run the features command of ``tree`` on ``data_csv`` and count the non-finite cells it wrote."""
    output = build_features(tree, data_csv, scratch / f"{tree_name}-features.csv", spec)
    counted = count_invalid_values(output)
    return FeatureRun(
        tree=tree_name,
        data_digest=data_digest(data_csv),
        invalid_total=counted.total,
        invalid_by_column=dict(counted.by_column),
        invalid_rows=counted.rows,
    )


def choose_source_column(
    data_csv: Path, divisor_parameters: Sequence[str], metadata_fields: Sequence[str]
) -> tuple[str, str] | None:
    """(column, how it was chosen): a divisor parameter that names a data column, else a column named by
    a metadata assertion, else None."""
    columns = set(csv_header(data_csv))
    for name in divisor_parameters:
        if name in columns:
            return name, "divisor_parameter"
    for name in metadata_fields:
        if name in columns:
            return name, "metadata_assertion"
    return None


def observe_source_anomalies(
    column: str, selected_by: str, base_data_csv: Path, candidate_data_csv: Path
) -> SourceAnomalyCount:
    return SourceAnomalyCount(
        column=column,
        selected_by=selected_by,
        base_data_count=count_source_anomalies(base_data_csv, column),
        candidate_data_count=count_source_anomalies(candidate_data_csv, column),
    )


def observe_metric(
    base_dir: Path,
    candidate_dir: Path,
    base_data_csv: Path,
    candidate_data_csv: Path,
    spec: Mapping[str, Any],
    gate: Mapping[str, Any],
) -> MetricComparison:
    """Evaluate both trees (each on the data it was run on) and compare the gate's metric."""
    metric = str(gate["metric"])
    base = evaluate(base_dir, base_data_csv, spec).metrics[metric]
    candidate = evaluate(candidate_dir, candidate_data_csv, spec).metrics[metric]
    return _comparison(metric, gate, base, candidate, measured_by="diagnoser_evaluation")


def reported_metric(gate: Mapping[str, Any], reported: Mapping[str, Mapping[str, float]]) -> MetricComparison:
    """The gate's metric as reported upstream: ``{"base": {...}, "candidate": {...}}``."""
    metric = str(gate["metric"])
    return _comparison(metric, gate, float(reported["base"][metric]), float(reported["candidate"][metric]), "reported")


def data_digest(data_csv: Path) -> str:
    return file_digest(Path(data_csv))


def csv_header(data_csv: Path) -> list[str]:
    with Path(data_csv).open(newline="", encoding="utf-8") as handle:
        return next(csv.reader(handle), [])


def _comparison(
    metric: str, gate: Mapping[str, Any], base: float, candidate: float, measured_by: str
) -> MetricComparison:
    tolerance = gate.get("tolerance")
    return MetricComparison(
        metric=metric,
        direction=gate.get("direction"),
        tolerance=float(tolerance) if tolerance is not None else None,
        base=base,
        candidate=candidate,
        measured_by=measured_by,
    )
