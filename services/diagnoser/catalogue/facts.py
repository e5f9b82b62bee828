"""Facts: graded statements read off the evidence (strength in [0, 1]), each citing the evidence it was
read from. Counter facts are the outcomes of falsification tests: "the features are identical on the same
rows", "every column the code reads is still there", "the rates are as before"."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from services.diagnoser.evidence import Evidence, EvidenceKind


class Fact(StrEnum):
    NO_REGRESSION = "no_regression"
    DROP_FOLLOWS_CODE = "drop_follows_code"
    DROP_FOLLOWS_DATA = "drop_follows_data"
    FEATURE_CODE_CHANGED = "feature_code_changed"
    FEATURE_CODE_UNCHANGED = "feature_code_unchanged"
    OTHER_CODE_CHANGED = "other_code_changed"
    OTHER_CODE_UNCHANGED = "other_code_unchanged"
    DIVISION_UNGUARDED = "division_unguarded"
    PARAMETERS_CHANGED = "parameters_changed"
    FEATURES_DIFFER = "features_differ_on_same_rows"
    FEATURES_IDENTICAL = "features_identical_on_same_rows"
    INVALID_VALUES_INTRODUCED = "invalid_feature_values_introduced"
    INVALID_VALUES_UNDER_BASE = "invalid_feature_values_under_base_code"
    FEATURES_SHIFTED = "features_shifted_between_windows"
    FEATURES_STABLE = "features_stable_between_windows"
    READ_COLUMN_GONE = "read_column_gone"
    READ_COLUMNS_PRESENT = "read_columns_present"
    RENAME_FOUND = "rename_candidate_found"
    SCHEMA_RENAMED_OR_REMOVED = "datahub_field_renamed_or_removed"
    SCHEMA_RETYPED = "datahub_field_retyped"
    NUMERIC_AS_TEXT = "numeric_column_as_text"
    TYPES_UNCHANGED = "column_types_unchanged"
    UNSEEN_CATEGORIES = "unseen_categories"
    CATEGORIES_KNOWN = "categories_known"
    QUALITY_DEGRADED = "quality_degraded"
    QUALITY_UNCHANGED = "quality_unchanged"
    PROFILE_NULLS_ROSE = "datahub_profile_nulls_rose"
    ASSERTION_FAILING = "assertion_failing"
    ASSERTIONS_PASSING = "assertions_passing"
    SOURCE_SHIFTED = "source_columns_shifted"
    SOURCE_STABLE = "source_columns_stable"
    LABEL_SHIFTED = "label_shifted"
    LABEL_STABLE = "label_stable"
    DATA_FAULT = "data_fault_found"
    CHANGE_IN_FEATURE_CODE = "isolated_change_in_feature_code"
    CHANGE_OUTSIDE_FEATURE_CODE = "isolated_change_outside_feature_code"
    CHANGE_IN_GENERATED_CODE = "isolated_change_in_generated_code"
    RECOVERED_BY_SCHEMA = "recovered_by_renaming_back"
    RECOVERED_BY_TYPE = "recovered_by_reparsing_numbers"
    RECOVERED_BY_CATEGORY = "recovered_by_mapping_unseen_categories"
    RECOVERED_BY_QUALITY = "recovered_by_undoing_invalid_values"
    RECOVERED_BY_DRIFT = "recovered_by_quantile_mapping"
    RECOVERED_BY_LABEL = "recovered_by_restoring_the_label_mix"
    OUTDONE_SCHEMA = "another_intervention_recovers_more_than_renaming"
    OUTDONE_TYPE = "another_intervention_recovers_more_than_reparsing"
    OUTDONE_CATEGORY = "another_intervention_recovers_more_than_mapping_categories"
    OUTDONE_QUALITY = "another_intervention_recovers_more_than_undoing_invalid_values"
    OUTDONE_DRIFT = "another_intervention_recovers_more_than_quantile_mapping"
    OUTDONE_LABEL = "another_intervention_recovers_more_than_the_label_mix"
    NO_SPECIFIC_RECOVERY = "no_specific_intervention_recovers"
    INPUTS_MOVED_BEYOND_LABEL_MIX = "inputs_still_moved_once_the_label_mix_is_restored"


@dataclass(frozen=True)
class FactValue:
    strength: float
    evidence_ids: tuple[str, ...]


Facts = dict[Fact, FactValue]
Reader = Callable[[Evidence], dict[Fact, float]]
DATA_FAULTS = (Fact.READ_COLUMN_GONE, Fact.NUMERIC_AS_TEXT, Fact.UNSEEN_CATEGORIES, Fact.QUALITY_DEGRADED)
RECOVERED = {
    "schema": Fact.RECOVERED_BY_SCHEMA,
    "type": Fact.RECOVERED_BY_TYPE,
    "category": Fact.RECOVERED_BY_CATEGORY,
    "quality": Fact.RECOVERED_BY_QUALITY,
    "drift": Fact.RECOVERED_BY_DRIFT,
    "label": Fact.RECOVERED_BY_LABEL,
}
OUTDONE = {
    "schema": Fact.OUTDONE_SCHEMA,
    "type": Fact.OUTDONE_TYPE,
    "category": Fact.OUTDONE_CATEGORY,
    "quality": Fact.OUTDONE_QUALITY,
    "drift": Fact.OUTDONE_DRIFT,
    "label": Fact.OUTDONE_LABEL,
}
SPECIFIC_KINDS = ("schema", "type", "category", "quality", "label")


def read_facts(evidence: list[Evidence]) -> Facts:
    """Every fact the evidence shows with a positive strength; a fact seen twice keeps its strongest reading."""
    facts: Facts = {}
    for item in evidence:
        reader = READERS.get(item.kind)
        for fact, strength in (reader(item) if reader else {}).items():
            strength = round(min(1.0, max(0.0, strength)), 4)
            if strength <= 0:
                continue
            held = facts.get(fact)
            if held is None or strength > held.strength:
                ids = (item.id,) if held is None else (item.id, *held.evidence_ids)
                facts[fact] = FactValue(strength, ids)
            elif item.id not in held.evidence_ids:
                facts[fact] = FactValue(held.strength, (*held.evidence_ids, item.id))
    faults = [facts[fact] for fact in DATA_FAULTS if fact in facts]
    if faults:
        strongest = max(faults, key=lambda value: value.strength)
        facts[Fact.DATA_FAULT] = FactValue(strongest.strength, tuple(i for f in faults for i in f.evidence_ids))
    return facts


MEASURED_BY: dict[EvidenceKind, tuple[Fact, ...]] = {
    EvidenceKind.FEATURE_RECOMPUTATION: (
        Fact.FEATURES_DIFFER,
        Fact.FEATURES_IDENTICAL,
        Fact.INVALID_VALUES_INTRODUCED,
        Fact.INVALID_VALUES_UNDER_BASE,
    ),
    EvidenceKind.FEATURE_DRIFT: (Fact.FEATURES_SHIFTED, Fact.FEATURES_STABLE),
    EvidenceKind.CHANGE_ISOLATION: (
        Fact.CHANGE_IN_FEATURE_CODE,
        Fact.CHANGE_OUTSIDE_FEATURE_CODE,
        Fact.CHANGE_IN_GENERATED_CODE,
    ),
    EvidenceKind.DATA_INTERVENTIONS: (
        *RECOVERED.values(),
        *OUTDONE.values(),
        Fact.NO_SPECIFIC_RECOVERY,
        Fact.INPUTS_MOVED_BEYOND_LABEL_MIX,
    ),
    EvidenceKind.SOURCE_SCHEMA: (Fact.READ_COLUMN_GONE, Fact.READ_COLUMNS_PRESENT, Fact.RENAME_FOUND),
    EvidenceKind.SOURCE_TYPES: (Fact.NUMERIC_AS_TEXT, Fact.TYPES_UNCHANGED),
    EvidenceKind.SOURCE_CATEGORIES: (Fact.UNSEEN_CATEGORIES, Fact.CATEGORIES_KNOWN),
    EvidenceKind.SOURCE_QUALITY: (Fact.QUALITY_DEGRADED, Fact.QUALITY_UNCHANGED),
    EvidenceKind.SOURCE_DRIFT: (Fact.SOURCE_SHIFTED, Fact.SOURCE_STABLE),
    EvidenceKind.LABEL_SHIFT: (Fact.LABEL_SHIFTED, Fact.LABEL_STABLE),
}
"""Evidence that may not be available for an incident (no ``features`` command, an experiment not run, a window's
CSV that cannot be read as a table), and the facts it would give: when it is unavailable those facts are unmeasured,
neither for nor against."""


def unmeasured_facts(evidence: list[Evidence]) -> frozenset[Fact]:
    """The facts of evidence that could not be computed for this incident: neither true nor false."""
    return frozenset(
        fact
        for item in evidence
        if item.kind in MEASURED_BY and not item.values.get("available", True)
        for fact in MEASURED_BY[item.kind]
    )


def _counterfactual(item: Evidence) -> dict[Fact, float]:
    values = item.values
    if not values.get("available"):
        return {}
    if not values["regressed"]:
        return {Fact.NO_REGRESSION: 1.0}
    return {Fact.DROP_FOLLOWS_CODE: values["code_attribution"], Fact.DROP_FOLLOWS_DATA: values["data_attribution"]}


def _code_change(item: Evidence) -> dict[Fact, float]:
    values = item.values
    feature, other = bool(values["feature_files_changed"]), bool(values["other_files_changed"])
    return {
        Fact.FEATURE_CODE_CHANGED: float(feature),
        Fact.FEATURE_CODE_UNCHANGED: float(not feature),
        Fact.OTHER_CODE_CHANGED: float(other),
        Fact.OTHER_CODE_UNCHANGED: float(not other),
        Fact.DIVISION_UNGUARDED: float(bool(values["unguarded_divisions"])),
    }


def _config_change(item: Evidence) -> dict[Fact, float]:
    return {Fact.PARAMETERS_CHANGED: item.strength}


def _feature_recomputation(item: Evidence) -> dict[Fact, float]:
    values = item.values
    if not values.get("available"):
        return {}
    base, candidate = values["base_invalid"], values["candidate_invalid"]
    return {
        Fact.FEATURES_DIFFER: float(values["differ"]),
        Fact.FEATURES_IDENTICAL: float(not values["differ"]),
        Fact.INVALID_VALUES_INTRODUCED: float(candidate > base),
        Fact.INVALID_VALUES_UNDER_BASE: min(1.0, base / candidate) if candidate else float(base > 0),
    }


def _feature_drift(item: Evidence) -> dict[Fact, float]:
    if not item.values.get("available"):
        return {}
    return {Fact.FEATURES_SHIFTED: item.strength, Fact.FEATURES_STABLE: 1.0 - item.strength}


def _source_schema(item: Evidence) -> dict[Fact, float]:
    if not item.values.get("available", True):
        return {}
    gone = item.values["read_columns_gone"]
    renamed = {candidate["old"] for candidate in item.values["rename_candidates"]} & set(gone)
    return {
        Fact.READ_COLUMN_GONE: item.strength,
        Fact.READ_COLUMNS_PRESENT: float(not gone),
        Fact.RENAME_FOUND: float(bool(renamed)),
    }


def _schema_history(item: Evidence) -> dict[Fact, float]:
    values = item.values
    structural = bool(values["renamed"] or values["removed"])
    return {
        Fact.SCHEMA_RENAMED_OR_REMOVED: item.strength if structural else 0.0,
        Fact.SCHEMA_RETYPED: item.strength if values["retyped"] and not structural else 0.0,
    }


def _source_types(item: Evidence) -> dict[Fact, float]:
    if not item.values.get("available", True):
        return {}
    retyped = item.values["retyped"]
    as_numbers = 1.0 if item.values["text_numeric_columns"] else 0.5 if retyped else 0.0
    return {Fact.NUMERIC_AS_TEXT: as_numbers, Fact.TYPES_UNCHANGED: float(not retyped)}


def _source_categories(item: Evidence) -> dict[Fact, float]:
    if not item.values.get("available", True):
        return {}
    return {Fact.UNSEEN_CATEGORIES: item.strength, Fact.CATEGORIES_KNOWN: float(item.strength == 0)}


def _source_quality(item: Evidence) -> dict[Fact, float]:
    if not item.values.get("available", True):
        return {}
    return {Fact.QUALITY_DEGRADED: item.strength, Fact.QUALITY_UNCHANGED: float(item.strength == 0)}


def _dataset_profiles(item: Evidence) -> dict[Fact, float]:
    return {Fact.PROFILE_NULLS_ROSE: item.strength}


def _assertions(item: Evidence) -> dict[Fact, float]:
    values = item.values
    return {
        Fact.ASSERTION_FAILING: item.strength,
        Fact.ASSERTIONS_PASSING: float(bool(values["passing"]) and not values["failing"]),
    }


def _source_drift(item: Evidence) -> dict[Fact, float]:
    if not item.values.get("available", True):
        return {}
    return {Fact.SOURCE_SHIFTED: item.strength, Fact.SOURCE_STABLE: 1.0 - item.strength}


def _label_shift(item: Evidence) -> dict[Fact, float]:
    if not item.values.get("available"):
        return {}
    return {Fact.LABEL_SHIFTED: item.strength, Fact.LABEL_STABLE: float(item.strength == 0)}


def _clip(value: float | None) -> float:
    return 0.0 if value is None else min(1.0, max(0.0, float(value)))


def _change_isolation(item: Evidence) -> dict[Fact, float]:
    values = item.values
    if not values.get("available"):
        return {}
    carried, in_features = _clip(values["carried"]), float(values["share_in_feature_code"])
    return {
        Fact.CHANGE_IN_FEATURE_CODE: carried * in_features,
        Fact.CHANGE_OUTSIDE_FEATURE_CODE: carried * (1 - in_features),
        Fact.CHANGE_IN_GENERATED_CODE: float(bool(values["generated_files"])),
    }


def _data_interventions(item: Evidence) -> dict[Fact, float]:
    values = item.values
    if not values.get("available"):
        return {}
    recovered = {kind: _clip(value) for kind, value in values["recovered"].items()}
    found = {RECOVERED[kind]: value for kind, value in recovered.items()}
    residual = values.get("residual_drift")
    confounded = residual is not None and residual["ks"] >= values["ks_drift"]
    if confounded:  # the inputs moved within each label group: resampling the labels also removed those rows,
        found[Fact.INPUTS_MOVED_BEYOND_LABEL_MIX] = 1.0  # so its recovery outdoes nothing and names nothing
        recovered = {kind: value for kind, value in recovered.items() if kind != "label"}
    for kind, fact in OUTDONE.items():
        others = max((value for other, value in recovered.items() if other != kind), default=0.0)
        found[fact] = others - recovered.get(kind, 0.0)
    found[Fact.NO_SPECIFIC_RECOVERY] = 1.0 - max((recovered.get(kind, 0.0) for kind in SPECIFIC_KINDS), default=0.0)
    return found


READERS: dict[EvidenceKind, Reader] = {
    EvidenceKind.COUNTERFACTUAL: _counterfactual,
    EvidenceKind.CODE_CHANGE: _code_change,
    EvidenceKind.CONFIG_CHANGE: _config_change,
    EvidenceKind.FEATURE_RECOMPUTATION: _feature_recomputation,
    EvidenceKind.FEATURE_DRIFT: _feature_drift,
    EvidenceKind.SOURCE_SCHEMA: _source_schema,
    EvidenceKind.SCHEMA_HISTORY: _schema_history,
    EvidenceKind.SOURCE_TYPES: _source_types,
    EvidenceKind.SOURCE_CATEGORIES: _source_categories,
    EvidenceKind.SOURCE_QUALITY: _source_quality,
    EvidenceKind.DATASET_PROFILES: _dataset_profiles,
    EvidenceKind.ASSERTIONS: _assertions,
    EvidenceKind.SOURCE_DRIFT: _source_drift,
    EvidenceKind.LABEL_SHIFT: _label_shift,
    EvidenceKind.CHANGE_ISOLATION: _change_isolation,
    EvidenceKind.DATA_INTERVENTIONS: _data_interventions,
}
