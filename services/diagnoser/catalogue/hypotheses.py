"""The hypotheses of ``contracts.catalogue``: where each puts the cause, which facts support it and which falsify it.

score = sum(weight * strength of supporting facts) - sum(weight * strength of counter facts), at least 0.
Supporting weights add up to at most 1.0 and nothing is rescaled: a fact whose evidence could not be measured
(no ``features`` command, an experiment that did not run) adds nothing, and the hypothesis reports which share
of its support weight was measured. Most weight sits on what was run: the counterfactual (0.30), the change
isolation (which change carries the drop, 0.40) for a cause in the code, the data interventions (which repair
of the incident data wins the loss back, 0.35-0.40) for a cause in the data; static findings (a column is
gone, a rate rose, DataHub logged a change) add the rest. A cause in the code is falsified by the drop
following the data and the other way round (counter weight 1.0); a data cause is falsified by another
intervention winning back clearly more than its own. ``unknown`` scores what the best named hypothesis
leaves: 1 - its score.

A new hypothesis over facts the evidence already gives: its name, where it puts the cause and the repairs that
may answer it in ``contracts/catalogue.py``; its spec here; ``make contracts`` (the names are one generated file,
``contracts/schemas/catalogue.schema.json``); its case in tests/unit/diagnoser/test_catalogue.py and its row in
docs/scenarios.md. A new fact adds its evidence too (``facts.py``, an extractor, ``incident_evidence.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from contracts.catalogue import LOCATION, CauseLocation, Hypothesis
from services.diagnoser.catalogue.facts import Fact


@dataclass(frozen=True)
class HypothesisSpec:
    name: Hypothesis
    description: str
    support: dict[Fact, float]
    counter: dict[Fact, float]

    @property
    def location(self) -> CauseLocation:
        """Where the hypothesis puts the cause: the code or the data (``contracts.catalogue.LOCATION``)."""
        return LOCATION[self.name]


_NOT_HERE = {Fact.NO_REGRESSION: 1.0}
_CODE_COUNTER = {**_NOT_HERE, Fact.DROP_FOLLOWS_DATA: 1.0}
_DATA_COUNTER = {**_NOT_HERE, Fact.DROP_FOLLOWS_CODE: 1.0}

CATALOGUE: tuple[HypothesisSpec, ...] = (
    HypothesisSpec(
        Hypothesis.FEATURE_TRANSFORMATION,
        "a change in the feature code computes different model inputs from the same rows",
        support={
            Fact.DROP_FOLLOWS_CODE: 0.30,
            Fact.CHANGE_IN_FEATURE_CODE: 0.40,
            Fact.FEATURE_CODE_CHANGED: 0.10,
            Fact.FEATURES_DIFFER: 0.10,
            Fact.INVALID_VALUES_INTRODUCED: 0.05,
            Fact.DIVISION_UNGUARDED: 0.05,
        },
        counter={
            **_CODE_COUNTER,
            Fact.FEATURES_IDENTICAL: 0.60,
            Fact.FEATURE_CODE_UNCHANGED: 0.60,
            Fact.CHANGE_OUTSIDE_FEATURE_CODE: 0.60,
            Fact.INVALID_VALUES_UNDER_BASE: 0.10,
        },
    ),
    HypothesisSpec(
        Hypothesis.TRAINING_CONFIG_CHANGE,
        "a change outside the feature code (training code or parameters) makes the model worse",
        support={
            Fact.DROP_FOLLOWS_CODE: 0.30,
            Fact.CHANGE_OUTSIDE_FEATURE_CODE: 0.40,
            Fact.PARAMETERS_CHANGED: 0.15,
            Fact.OTHER_CODE_CHANGED: 0.05,
            Fact.FEATURES_IDENTICAL: 0.10,
        },
        counter={
            **_CODE_COUNTER,
            Fact.FEATURES_DIFFER: 0.60,
            Fact.OTHER_CODE_UNCHANGED: 0.60,
            Fact.CHANGE_IN_FEATURE_CODE: 0.60,
        },
    ),
    HypothesisSpec(
        Hypothesis.UPSTREAM_SCHEMA_CHANGE,
        "a source column the code reads is gone or renamed upstream",
        support={
            Fact.DROP_FOLLOWS_DATA: 0.30,
            Fact.RECOVERED_BY_SCHEMA: 0.35,
            Fact.READ_COLUMN_GONE: 0.20,
            Fact.RENAME_FOUND: 0.05,
            Fact.SCHEMA_RENAMED_OR_REMOVED: 0.10,
        },
        counter={**_DATA_COUNTER, Fact.READ_COLUMNS_PRESENT: 0.70, Fact.OUTDONE_SCHEMA: 0.60},
    ),
    HypothesisSpec(
        Hypothesis.TYPE_CONVERSION,
        "a numeric source column arrives as text (formatted numbers)",
        support={
            Fact.DROP_FOLLOWS_DATA: 0.30,
            Fact.RECOVERED_BY_TYPE: 0.35,
            Fact.NUMERIC_AS_TEXT: 0.25,
            Fact.SCHEMA_RETYPED: 0.10,
        },
        counter={**_DATA_COUNTER, Fact.TYPES_UNCHANGED: 0.70, Fact.OUTDONE_TYPE: 0.60},
    ),
    HypothesisSpec(
        Hypothesis.CATEGORY_MAPPING,
        "a categorical source column carries values unseen in the approval window",
        support={Fact.DROP_FOLLOWS_DATA: 0.30, Fact.RECOVERED_BY_CATEGORY: 0.35, Fact.UNSEEN_CATEGORIES: 0.30},
        counter={**_DATA_COUNTER, Fact.CATEGORIES_KNOWN: 0.70, Fact.OUTDONE_CATEGORY: 0.60},
    ),
    HypothesisSpec(
        Hypothesis.SOURCE_DATA_QUALITY,
        "invalid values (nulls, sentinels, impossible or unparsable values) rose in a source column",
        support={
            Fact.DROP_FOLLOWS_DATA: 0.30,
            Fact.RECOVERED_BY_QUALITY: 0.35,
            Fact.QUALITY_DEGRADED: 0.25,
            Fact.ASSERTION_FAILING: 0.07,
            Fact.PROFILE_NULLS_ROSE: 0.03,
        },
        counter={
            **_DATA_COUNTER,
            Fact.QUALITY_UNCHANGED: 0.70,
            Fact.ASSERTIONS_PASSING: 0.10,
            Fact.OUTDONE_QUALITY: 0.60,
        },
    ),
    HypothesisSpec(
        Hypothesis.COVARIATE_DRIFT,
        "the inputs' valid values moved (a new segment, a shifted distribution) with no schema, type, category, "
        "quality or label fault",
        support={
            Fact.DROP_FOLLOWS_DATA: 0.30,
            Fact.NO_SPECIFIC_RECOVERY: 0.25,
            Fact.SOURCE_SHIFTED: 0.20,
            Fact.RECOVERED_BY_DRIFT: 0.15,
            Fact.FEATURES_SHIFTED: 0.10,
        },
        counter={**_DATA_COUNTER, Fact.DATA_FAULT: 0.50, Fact.SOURCE_STABLE: 0.50, Fact.OUTDONE_DRIFT: 0.40},
    ),
    HypothesisSpec(
        Hypothesis.LABEL_SHIFT,
        "the label mix moved (a prior shift); restoring it wins the metric back",
        support={
            Fact.DROP_FOLLOWS_DATA: 0.30,
            Fact.RECOVERED_BY_LABEL: 0.40,
            Fact.LABEL_SHIFTED: 0.20,
            Fact.FEATURES_STABLE: 0.05,
            Fact.SOURCE_STABLE: 0.05,
        },
        counter={
            **_DATA_COUNTER,
            Fact.LABEL_STABLE: 0.70,
            Fact.OUTDONE_LABEL: 0.60,
            Fact.INPUTS_MOVED_BEYOND_LABEL_MIX: 0.40,
        },
    ),
)

assert {spec.name for spec in CATALOGUE} == set(LOCATION), "every hypothesis of contracts.catalogue is scored"
