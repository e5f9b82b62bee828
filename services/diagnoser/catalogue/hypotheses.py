"""The nine hypotheses: where each puts the cause, which facts support it and which falsify it.

score = clamp(sum(weight * strength of supporting facts) - sum(weight * strength of counter facts), 0, 1).
Supporting weights add up to at most 1.0. Every data hypothesis reaches 0.9 on the windows' own data alone
(0.3 for the drop following the data, 0.6 for its own fault), DataHub adds at most 0.1, so two faults found
in the same data score alike and the margin test abstains instead of preferring whichever has more
metadata. A cause in the code is falsified by the drop following the data and
the other way round; the counter weight 1.0 makes that decisive. ``unknown`` scores what the best named
hypothesis leaves: 1 - its score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from services.diagnoser.catalogue.facts import Fact

Location = Literal["code", "data"]

FEATURE_TRANSFORMATION = "feature_transformation"
TRAINING_CONFIG_CHANGE = "training_config_change"
UPSTREAM_SCHEMA_CHANGE = "upstream_schema_change"
TYPE_CONVERSION = "type_conversion"
CATEGORY_MAPPING = "category_mapping"
SOURCE_DATA_QUALITY = "source_data_quality"
COVARIATE_DRIFT = "covariate_drift"
LABEL_SHIFT = "label_shift"
UNKNOWN = "unknown"


@dataclass(frozen=True)
class HypothesisSpec:
    name: str
    location: Location
    description: str
    support: dict[Fact, float]
    counter: dict[Fact, float]


_NOT_HERE = {Fact.NO_REGRESSION: 1.0}
_CODE_COUNTER = {**_NOT_HERE, Fact.DROP_FOLLOWS_DATA: 1.0}
_DATA_COUNTER = {**_NOT_HERE, Fact.DROP_FOLLOWS_CODE: 1.0}

CATALOGUE: tuple[HypothesisSpec, ...] = (
    HypothesisSpec(
        FEATURE_TRANSFORMATION,
        "code",
        "a changed function in a feature module computes different model inputs from the same rows",
        support={
            Fact.DROP_FOLLOWS_CODE: 0.30,
            Fact.FEATURES_DIFFER: 0.30,
            Fact.FEATURE_CODE_CHANGED: 0.20,
            Fact.INVALID_VALUES_INTRODUCED: 0.10,
            Fact.DIVISION_UNGUARDED: 0.10,
        },
        counter={
            **_CODE_COUNTER,
            Fact.FEATURES_IDENTICAL: 0.60,
            Fact.FEATURE_CODE_UNCHANGED: 0.60,
            Fact.INVALID_VALUES_UNDER_BASE: 0.30,
        },
    ),
    HypothesisSpec(
        TRAINING_CONFIG_CHANGE,
        "code",
        "the candidate changed training code or parameters outside the feature modules",
        support={
            Fact.DROP_FOLLOWS_CODE: 0.30,
            Fact.FEATURES_IDENTICAL: 0.30,
            Fact.PARAMETERS_CHANGED: 0.20,
            Fact.OTHER_CODE_CHANGED: 0.20,
        },
        counter={**_CODE_COUNTER, Fact.FEATURES_DIFFER: 0.60, Fact.OTHER_CODE_UNCHANGED: 0.60},
    ),
    HypothesisSpec(
        UPSTREAM_SCHEMA_CHANGE,
        "data",
        "a source column the code reads is gone or renamed upstream",
        support={
            Fact.DROP_FOLLOWS_DATA: 0.30,
            Fact.READ_COLUMN_GONE: 0.50,
            Fact.SCHEMA_RENAMED_OR_REMOVED: 0.10,
            Fact.RENAME_FOUND: 0.10,
        },
        counter={**_DATA_COUNTER, Fact.READ_COLUMNS_PRESENT: 0.70},
    ),
    HypothesisSpec(
        TYPE_CONVERSION,
        "data",
        "a numeric source column arrives as text (formatted numbers)",
        support={Fact.DROP_FOLLOWS_DATA: 0.30, Fact.NUMERIC_AS_TEXT: 0.60, Fact.SCHEMA_RETYPED: 0.10},
        counter={**_DATA_COUNTER, Fact.TYPES_UNCHANGED: 0.70},
    ),
    HypothesisSpec(
        CATEGORY_MAPPING,
        "data",
        "a categorical source column carries values unseen in the approval window",
        support={Fact.DROP_FOLLOWS_DATA: 0.30, Fact.UNSEEN_CATEGORIES: 0.60},
        counter={**_DATA_COUNTER, Fact.CATEGORIES_KNOWN: 0.70},
    ),
    HypothesisSpec(
        SOURCE_DATA_QUALITY,
        "data",
        "nulls, zeros or out-of-range values rose in a source column the code reads",
        support={
            Fact.DROP_FOLLOWS_DATA: 0.30,
            Fact.QUALITY_DEGRADED: 0.60,
            Fact.ASSERTION_FAILING: 0.07,
            Fact.PROFILE_NULLS_ROSE: 0.03,
        },
        counter={**_DATA_COUNTER, Fact.QUALITY_UNCHANGED: 0.70, Fact.ASSERTIONS_PASSING: 0.10},
    ),
    HypothesisSpec(
        COVARIATE_DRIFT,
        "data",
        "the distributions of the model's inputs shifted with no quality, type or schema fault",
        support={Fact.DROP_FOLLOWS_DATA: 0.30, Fact.SOURCE_SHIFTED: 0.40, Fact.FEATURES_SHIFTED: 0.20},
        counter={**_DATA_COUNTER, Fact.DATA_FAULT: 0.80, Fact.SOURCE_STABLE: 0.50},
    ),
    HypothesisSpec(
        LABEL_SHIFT,
        "data",
        "the label's distribution moved while the inputs did not",
        support={
            Fact.DROP_FOLLOWS_DATA: 0.30,
            Fact.LABEL_SHIFTED: 0.40,
            Fact.SOURCE_STABLE: 0.10,
            Fact.FEATURES_STABLE: 0.10,
        },
        counter={**_DATA_COUNTER, Fact.LABEL_STABLE: 0.70, Fact.DATA_FAULT: 0.80, Fact.SOURCE_SHIFTED: 0.60},
    ),
)

LOCATION: dict[str, Location] = {spec.name: spec.location for spec in CATALOGUE}
