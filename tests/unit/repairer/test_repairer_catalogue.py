"""The catalogue: which strategies answer which hypothesis, and what each needs."""

from __future__ import annotations

from services.repairer.catalogue import CATALOGUE, CAUSE_IN_DATA, REPAIRS_BY_HYPOTHESIS


def test_each_hypothesis_maps_to_the_documented_strategies_in_order() -> None:
    assert REPAIRS_BY_HYPOTHESIS == {
        "feature_transformation": ("guarded_division", "revert_change"),
        "training_config_change": ("revert_change",),
        "upstream_schema_change": ("column_rename",),
        "type_conversion": ("numeric_coercion",),
        "category_mapping": ("unseen_category",),
        "source_data_quality": ("null_guard",),
    }
    for hypothesis in ("covariate_drift", "label_shift", "unknown"):
        assert hypothesis not in REPAIRS_BY_HYPOTHESIS
    assert {"covariate_drift", "label_shift", "source_data_quality"} <= CAUSE_IN_DATA
    assert "feature_transformation" not in CAUSE_IN_DATA and "unknown" not in CAUSE_IN_DATA


def test_every_strategy_declares_what_it_answers_and_needs() -> None:
    needs = {name: strategy.needs for name, strategy in CATALOGUE.items()}
    assert needs == {
        "guarded_division": ("suspect",),
        "revert_change": ("base_tree", "changed_code"),
        "column_rename": ("renamed_columns",),
        "numeric_coercion": ("text_numeric_columns",),
        "unseen_category": ("unseen_categories", "categorical_default"),
        "null_guard": ("null_columns", "null_fill"),
    }
    assert all(strategy.answers for strategy in CATALOGUE.values())
