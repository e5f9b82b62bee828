"""Signals: yes/no facts read off the evidence, each citing the evidence ids it was read from.

Hypotheses are scored from signals, never from raw evidence, so every point of a score traces back to
named evidence.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from enum import StrEnum

from services.diagnoser.evidence import Evidence, EvidenceKind


class Signal(StrEnum):
    FEATURE_FUNCTION_CHANGED = "feature_function_changed"
    NO_FEATURE_CODE_CHANGED = "no_feature_code_changed"
    FEATURE_DIVISION_UNGUARDED = "feature_division_unguarded"
    OTHER_CODE_CHANGED = "other_code_changed"
    NO_OTHER_CODE_CHANGED = "no_other_code_changed"
    INVALID_VALUES_INTRODUCED = "invalid_values_introduced"
    NO_INVALID_VALUES_INTRODUCED = "no_invalid_values_introduced"
    BASE_CODE_INVALID_ON_SAME_DATA = "base_code_invalid_on_same_data"
    BASE_CODE_CLEAN_ON_SAME_DATA = "base_code_clean_on_same_data"
    SOURCE_DATA_CHANGED = "source_data_changed"
    SOURCE_DATA_IDENTICAL = "source_data_identical"
    SOURCE_ANOMALIES_PRESENT = "source_anomalies_present"
    SOURCE_ANOMALIES_INCREASED = "source_anomalies_increased"
    METRIC_REGRESSED = "metric_regressed"
    METRIC_NOT_REGRESSED = "metric_not_regressed"
    CHANGED_FEATURE_CODE_ON_LINEAGE = "changed_feature_code_on_lineage"
    CHANGED_OTHER_CODE_ON_LINEAGE = "changed_other_code_on_lineage"
    ASSERTION_FAILING = "assertion_failing"
    ASSERTION_PASSING = "assertion_passing"
    UPSTREAM_INCIDENT_OPEN = "upstream_incident_open"


SignalReader = Callable[[Evidence], list[Signal]]


def detect_signals(evidence: list[Evidence]) -> dict[Signal, list[str]]:
    """Every signal the evidence shows, with the ids of the evidence items that show it."""
    fired: dict[Signal, list[str]] = defaultdict(list)
    for item in evidence:
        reader = READERS.get(item.kind)
        for signal in reader(item) if reader else []:
            if item.id not in fired[signal]:
                fired[signal].append(item.id)
    return dict(fired)


def _function_changed(item: Evidence) -> list[Signal]:
    return [Signal.FEATURE_FUNCTION_CHANGED] if item.values.get("on_feature_path") else []


def _unguarded_division(item: Evidence) -> list[Signal]:
    introduced = item.values.get("introduced") and item.values.get("on_feature_path")
    return [Signal.FEATURE_DIVISION_UNGUARDED] if introduced else []


def _change_scope(item: Evidence) -> list[Signal]:
    signals = [Signal.OTHER_CODE_CHANGED if item.values["other_count"] else Signal.NO_OTHER_CODE_CHANGED]
    if not item.values["feature_path_count"]:
        signals.append(Signal.NO_FEATURE_CODE_CHANGED)
    return signals


def _invalid_values(item: Evidence) -> list[Signal]:
    values = item.values
    signals = [Signal.INVALID_VALUES_INTRODUCED if values["introduced"] > 0 else Signal.NO_INVALID_VALUES_INTRODUCED]
    if values["same_data"]:
        signals.append(
            Signal.BASE_CODE_INVALID_ON_SAME_DATA if values["base_total"] > 0 else Signal.BASE_CODE_CLEAN_ON_SAME_DATA
        )
    return signals


def _source_identity(item: Evidence) -> list[Signal]:
    return [Signal.SOURCE_DATA_IDENTICAL if item.values["identical"] else Signal.SOURCE_DATA_CHANGED]


def _source_anomalies(item: Evidence) -> list[Signal]:
    signals = []
    if item.values["candidate_data_count"] > 0:
        signals.append(Signal.SOURCE_ANOMALIES_PRESENT)
    if item.values["increase"] > 0:
        signals.append(Signal.SOURCE_ANOMALIES_INCREASED)
    return signals


def _metric_delta(item: Evidence) -> list[Signal]:
    regressed = item.values.get("regressed")
    if regressed is None:
        return []
    return [Signal.METRIC_REGRESSED if regressed else Signal.METRIC_NOT_REGRESSED]


def _lineage_path(item: Evidence) -> list[Signal]:
    signals = []
    if item.values.get("changed_feature_files_on_path"):
        signals.append(Signal.CHANGED_FEATURE_CODE_ON_LINEAGE)
    if item.values.get("changed_other_files_on_path"):
        signals.append(Signal.CHANGED_OTHER_CODE_ON_LINEAGE)
    return signals


def _assertion(item: Evidence) -> list[Signal]:
    status = item.values.get("status")
    if status == "failing":
        return [Signal.ASSERTION_FAILING]
    if status == "passing":
        return [Signal.ASSERTION_PASSING]
    return []


def _upstream_incident(_item: Evidence) -> list[Signal]:
    return [Signal.UPSTREAM_INCIDENT_OPEN]


READERS: dict[EvidenceKind, SignalReader] = {
    EvidenceKind.FUNCTION_CHANGED: _function_changed,
    EvidenceKind.UNGUARDED_DIVISION: _unguarded_division,
    EvidenceKind.CODE_CHANGE_SCOPE: _change_scope,
    EvidenceKind.INVALID_FEATURE_VALUES: _invalid_values,
    EvidenceKind.SOURCE_DATA_IDENTITY: _source_identity,
    EvidenceKind.SOURCE_ANOMALIES: _source_anomalies,
    EvidenceKind.METRIC_DELTA: _metric_delta,
    EvidenceKind.LINEAGE_PATH: _lineage_path,
    EvidenceKind.ASSERTION_RESULT: _assertion,
    EvidenceKind.UPSTREAM_INCIDENT: _upstream_incident,
}
