"""The catalogue, named once: the hypotheses the diagnosis ranks, where each puts the cause, and the repair
strategies that may answer it. The diagnoser, repairer, publisher and projections all read these names from
here, so a new hypothesis or strategy is added in one place (and in the files that implement it)."""

from __future__ import annotations

from enum import StrEnum


class Hypothesis(StrEnum):
    FEATURE_TRANSFORMATION = "feature_transformation"
    TRAINING_CONFIG_CHANGE = "training_config_change"
    UPSTREAM_SCHEMA_CHANGE = "upstream_schema_change"
    TYPE_CONVERSION = "type_conversion"
    CATEGORY_MAPPING = "category_mapping"
    SOURCE_DATA_QUALITY = "source_data_quality"
    COVARIATE_DRIFT = "covariate_drift"
    LABEL_SHIFT = "label_shift"
    UNKNOWN = "unknown"


class CauseLocation(StrEnum):
    CODE = "code"
    DATA = "data"
    MIXED = "mixed"
    UNKNOWN = "unknown"


class RepairStrategy(StrEnum):
    GUARDED_DIVISION = "guarded_division"
    REVERT_CHANGE = "revert_change"
    COLUMN_RENAME = "column_rename"
    NUMERIC_COERCION = "numeric_coercion"
    UNSEEN_CATEGORY = "unseen_category"
    NULL_GUARD = "null_guard"


LOCATION: dict[Hypothesis, CauseLocation] = {
    Hypothesis.FEATURE_TRANSFORMATION: CauseLocation.CODE,
    Hypothesis.TRAINING_CONFIG_CHANGE: CauseLocation.CODE,
    Hypothesis.UPSTREAM_SCHEMA_CHANGE: CauseLocation.DATA,
    Hypothesis.TYPE_CONVERSION: CauseLocation.DATA,
    Hypothesis.CATEGORY_MAPPING: CauseLocation.DATA,
    Hypothesis.SOURCE_DATA_QUALITY: CauseLocation.DATA,
    Hypothesis.COVARIATE_DRIFT: CauseLocation.DATA,
    Hypothesis.LABEL_SHIFT: CauseLocation.DATA,
}
"""Where each named hypothesis puts the cause (``unknown`` puts it nowhere)."""

REPAIRS: dict[Hypothesis, tuple[RepairStrategy, ...]] = {
    Hypothesis.FEATURE_TRANSFORMATION: (RepairStrategy.GUARDED_DIVISION, RepairStrategy.REVERT_CHANGE),
    Hypothesis.TRAINING_CONFIG_CHANGE: (RepairStrategy.REVERT_CHANGE,),
    Hypothesis.UPSTREAM_SCHEMA_CHANGE: (RepairStrategy.COLUMN_RENAME,),
    Hypothesis.TYPE_CONVERSION: (RepairStrategy.NUMERIC_COERCION,),
    Hypothesis.CATEGORY_MAPPING: (RepairStrategy.UNSEEN_CATEGORY,),
    Hypothesis.SOURCE_DATA_QUALITY: (RepairStrategy.NULL_GUARD,),
}
"""The strategies that may answer each hypothesis, in the order they are tried; a hypothesis not listed (drift,
a label shift) gets no code repair: the data's owners are told instead."""


def location_of(hypothesis: str | None) -> CauseLocation | None:
    """Where ``hypothesis`` puts the cause; None for ``unknown``, no hypothesis or a name not in the catalogue."""
    try:
        return LOCATION.get(Hypothesis(hypothesis)) if hypothesis else None
    except ValueError:
        return None


def answers(strategy: RepairStrategy) -> frozenset[Hypothesis]:
    return frozenset(hypothesis for hypothesis, names in REPAIRS.items() if strategy in names)
