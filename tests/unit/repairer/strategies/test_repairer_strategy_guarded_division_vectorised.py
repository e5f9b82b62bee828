"""guarded_division on vectorised divisions: a frame column by a frame column, a Series local, a helper whose
divisor is a parameter the module passes Series to, numpy arrays. The guard is one expression at the division
(no ``if``, which a Series cannot answer), the result keeps the operands' index and dtype, and the fallback is
the surrounding code's ``fillna``, else the base revision's, else the policy's, else 0.0. Each test runs the
patched code."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from contracts.events.diagnosis import Suspect
from libs.policy.repair import DivisionPolicy
from services.repairer.strategies import guarded_division
from services.repairer.strategies.guarded_division import guard_division
from tests.unit.repairer.strategies.patched_trees import (
    assert_guard_accepts,
    diff_lines,
    edit_of,
    git_applied,
    load_module,
    refusal_of,
    repair_context,
)

FILE = "pkg/features.py"

PARCELS = '''"""Parcel characteristics -> model features (vectorised pandas)."""
from __future__ import annotations

import numpy as np
import pandas as pd

PASSTHROUGH = ["living_sqft"]


def parcel_features(parcels: pd.DataFrame) -> pd.DataFrame:
    df = parcels.reindex(columns=["living_sqft", "lot_sqft"])
    out = df[PASSTHROUGH].copy()
    out["building_coverage"] = df["living_sqft"] / df["lot_sqft"]
    return out
'''
PARCELS_BASE = '''"""Parcel characteristics -> model features (vectorised pandas)."""
from __future__ import annotations

import numpy as np
import pandas as pd


def parcel_features(parcels: pd.DataFrame) -> pd.DataFrame:
    df = parcels.reindex(columns=["living_sqft", "lot_sqft"])
    out = pd.DataFrame(index=parcels.index)
    out["living_sqft"] = df["living_sqft"]
    out["building_coverage"] = (df["living_sqft"] / df["lot_sqft"].replace(0, np.nan)).fillna(0.0)
    return out
'''
PARCELS_SUSPECT = Suspect(file=FILE, function="parcel_features", divisor='df["lot_sqft"]')
PARCEL_ROWS = pd.DataFrame({"living_sqft": [1200, 900, 800], "lot_sqft": [4800, 0, 3200]}, index=[17, 4, 9])


def test_a_frame_column_division_takes_the_base_revisions_fillna(tmp_path: Path) -> None:
    context = repair_context(tmp_path, {FILE: PARCELS}, base={FILE: PARCELS_BASE}, suspect=PARCELS_SUSPECT)
    edit = edit_of(guarded_division.propose(context))
    assert diff_lines(edit.unified_diff) == [
        '-    out["building_coverage"] = df["living_sqft"] / df["lot_sqft"]',
        '+    out["building_coverage"] = (df["living_sqft"] / df["lot_sqft"].where(df["lot_sqft"] > 0)).fillna(0.0)',
    ]
    assert "from the base revision" in edit.rationale
    assert_guard_accepts(context, edit)
    module = load_module(git_applied(tmp_path, {FILE: PARCELS}, edit.unified_diff) / FILE)
    coverage = module.parcel_features(PARCEL_ROWS)["building_coverage"]
    assert coverage.index.tolist() == [17, 4, 9] and coverage.dtype == np.float64
    assert coverage.tolist() == [0.25, 0.0, 0.25]


AFFORDABILITY = '''"""Feature transformers used by the lapse pipeline."""
from __future__ import annotations

import pandas as pd


class AffordabilityFeatures:
    def __init__(self, max_premium_to_income=1.0):
        self.max_premium_to_income = max_premium_to_income

    def _ratio(self, X, numerator, denominator, upper):
        return (X[numerator] / X[denominator]).fillna(0.0).clip(0.0, upper)

    def transform(self, X):
        X = X.copy()
        X = X.assign(annual_income=12.0 * X["monthly_income"].astype(float))
        X["premium_to_income"] = self._ratio(X, "annual_premium", "annual_income", self.max_premium_to_income)
        return X.drop(columns=["annual_income"])
'''
AFFORDABILITY_SUSPECT = Suspect(file=FILE, function="AffordabilityFeatures._ratio", divisor="X[denominator]")


def test_a_helper_method_dividing_frame_columns_named_by_parameters_keeps_its_own_fillna(tmp_path: Path) -> None:
    context = repair_context(tmp_path, {FILE: AFFORDABILITY}, base={FILE: ""}, suspect=AFFORDABILITY_SUSPECT)
    edit = edit_of(guarded_division.propose(context))
    assert diff_lines(edit.unified_diff) == [
        "-        return (X[numerator] / X[denominator]).fillna(0.0).clip(0.0, upper)",
        "+        return (X[numerator] / X[denominator].where(X[denominator] > 0)).fillna(0.0).clip(0.0, upper)",
    ]
    assert edit.function == "AffordabilityFeatures._ratio"
    assert_guard_accepts(context, edit)
    module = load_module(git_applied(tmp_path, {FILE: AFFORDABILITY}, edit.unified_diff) / FILE)
    policies = pd.DataFrame({"annual_premium": [600.0, 900.0], "monthly_income": [500, 0]})
    out = module.AffordabilityFeatures().transform(policies)
    assert out["premium_to_income"].tolist() == [0.1, 0.0]  # no declared income: 0, not the cap


def test_the_policy_can_guard_zero_only() -> None:
    policy = DivisionPolicy(denominators=frozenset({"zero"}))
    edit = edit_of(guard_division(AFFORDABILITY, FILE, "AffordabilityFeatures._ratio", "X[denominator]", policy=policy))
    assert "X[denominator].where(X[denominator] != 0)" in edit.edits[0].new_text


PREMIUMS = """import pandas as pd


def premium_features(X: pd.DataFrame) -> pd.DataFrame:
    X = X.copy()
    premium = X["annual_premium"].astype(float)
    annual_income = 12.0 * X["monthly_income"].astype(float)
    X["premium_to_income"] = premium / annual_income
    return X
"""


def test_a_series_local_divisor_gets_a_vectorised_guard_not_an_if(tmp_path: Path) -> None:
    suspect = Suspect(file=FILE, function="premium_features", divisor="annual_income")
    context = repair_context(tmp_path, {FILE: PREMIUMS}, suspect=suspect)
    edit = edit_of(guarded_division.propose(context))
    assert diff_lines(edit.unified_diff) == [
        '-    X["premium_to_income"] = premium / annual_income',
        '+    X["premium_to_income"] = (premium / annual_income).mask(annual_income <= 0, 0.0)',
    ]
    assert "0.0 (from the division's float result)" in edit.rationale
    assert_guard_accepts(context, edit)
    module = load_module(git_applied(tmp_path, {FILE: PREMIUMS}, edit.unified_diff) / FILE)
    frame = pd.DataFrame({"annual_premium": [600, 900, None], "monthly_income": [500, 0, None]})
    ratio = module.premium_features(frame)["premium_to_income"]
    assert ratio.iloc[:2].tolist() == [0.1, 0.0]
    assert np.isnan(ratio.iloc[2])  # only the guarded denominators change; a missing value stays missing


def test_the_policys_fallback_when_the_base_had_none() -> None:
    text = (
        edit_of(
            guard_division(PREMIUMS, FILE, "premium_features", "annual_income", policy=DivisionPolicy(fallback=-1.0))
        )
        .edits[0]
        .new_text
    )
    assert '    X["premium_to_income"] = (premium / annual_income).mask(annual_income <= 0, -1.0)\n' in text


def test_the_base_revisions_fallback_comes_before_the_policys() -> None:
    text = (
        edit_of(
            guard_division(
                PARCELS,
                FILE,
                "parcel_features",
                'df["lot_sqft"]',
                policy=DivisionPolicy(fallback=-1.0),
                base_source=PARCELS_BASE,
            )
        )
        .edits[0]
        .new_text
    )
    assert '.where(df["lot_sqft"] > 0)).fillna(0.0)\n' in text


def test_null_and_nan_denominators_join_the_mask_when_the_policy_says() -> None:
    policy = DivisionPolicy(denominators=frozenset({"zero", "negative", "nan"}))
    text = edit_of(guard_division(PREMIUMS, FILE, "premium_features", "annual_income", policy=policy)).edits[0].new_text
    assert "(premium / annual_income).mask(annual_income.isna() | (annual_income <= 0), 0.0)" in text


SHARES = """import pandas as pd


def _share(part, whole):
    return part / whole


def basket_features(baskets: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame(index=baskets.index)
    out["fresh_share"] = _share(baskets["fresh_items"], baskets["items"])
    out["promo_share"] = _share(baskets["promo_items"], baskets["items"])
    return out
"""


def test_a_helper_whose_divisor_parameter_the_module_passes_series_to(tmp_path: Path) -> None:
    context = repair_context(tmp_path, {FILE: SHARES}, suspect=Suspect(file=FILE, function="_share", divisor="whole"))
    edit = edit_of(guarded_division.propose(context))
    assert diff_lines(edit.unified_diff) == [
        "-    return part / whole",
        "+    return (part / whole).mask(whole <= 0, 0.0)",
    ]
    assert_guard_accepts(context, edit)
    module = load_module(git_applied(tmp_path, {FILE: SHARES}, edit.unified_diff) / FILE)
    baskets = pd.DataFrame({"fresh_items": [2, 0], "promo_items": [1, 0], "items": [4, 0]}, index=["a", "b"])
    out = module.basket_features(baskets)
    assert out["fresh_share"].to_dict() == {"a": 0.5, "b": 0.0}


def test_the_same_helper_given_numbers_keeps_the_scalar_guard() -> None:
    source = SHARES.replace('_share(baskets["fresh_items"], baskets["items"])', "_share(3, len(baskets))")
    source = source.replace('_share(baskets["promo_items"], baskets["items"])', "_share(1, len(baskets))")
    text = edit_of(guard_division(source, FILE, "_share", "whole")).edits[0].new_text
    assert "    if whole <= 0:\n        return 0.0\n    return part / whole\n" in text


DESIGN = """import numpy as np


def design(columns: dict[str, np.ndarray]) -> np.ndarray:
    distance = np.asarray(columns["distance_km"], dtype=np.float32)
    hours = np.asarray(columns["hours"], dtype=np.float32)
    speed = distance / hours
    return np.column_stack([distance, speed])
"""


def test_numpy_arrays_are_divided_where_the_divisor_is_guarded_keeping_the_dtype(tmp_path: Path) -> None:
    context = repair_context(tmp_path, {FILE: DESIGN}, suspect=Suspect(file=FILE, function="design", divisor="hours"))
    edit = edit_of(guarded_division.propose(context))
    assert diff_lines(edit.unified_diff) == [
        "-    speed = distance / hours",
        "+    speed = np.where(hours <= 0, 0.0, distance) / np.where(hours <= 0, 1, hours)",
    ]
    assert_guard_accepts(context, edit)
    module = load_module(git_applied(tmp_path, {FILE: DESIGN}, edit.unified_diff) / FILE)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no divide-by-zero RuntimeWarning either
        matrix = module.design({"distance_km": [120.0, 30.0, 8.0], "hours": [2.0, 0.0, float("nan")]})
    assert matrix.dtype == np.float32
    assert matrix[:2, 1].tolist() == [60.0, 0.0] and np.isnan(matrix[2, 1])


def test_a_division_of_several_lines_is_guarded_in_place() -> None:
    source = PARCELS.replace(
        'df["living_sqft"] / df["lot_sqft"]', '(\n        df["living_sqft"]\n        / df["lot_sqft"]\n    )'
    )
    text = edit_of(guard_division(source, FILE, "parcel_features", 'df["lot_sqft"]')).edits[0].new_text
    assert '        / df["lot_sqft"]).mask(df["lot_sqft"] <= 0, 0.0)\n' in text
    module_namespace: dict[str, object] = {}
    exec(compile(text, FILE, "exec"), module_namespace)
    out = module_namespace["parcel_features"](PARCEL_ROWS)  # type: ignore[operator]
    assert out["building_coverage"].tolist() == [0.25, 0.0, 0.25]


RECORDS = """from typing import Any, Mapping


def booking_features(rec: Mapping[str, Any]) -> dict[str, float]:
    return {"eta_per_km": float(rec["pickup_eta_min"]) / rec["distance_km"]}
"""


@pytest.mark.parametrize(
    ("source", "function", "divisor", "reason"),
    [
        (RECORDS, "booking_features", 'rec["distance_km"]', "no unguarded division by 'rec[\"distance_km\"]'"),
        (
            PARCELS.replace('df["living_sqft"] / df["lot_sqft"]', 'df["living_sqft"] // df["lot_sqft"]'),
            "parcel_features",
            'df["lot_sqft"]',
            "changes the result's dtype",
        ),
        (
            PARCELS.replace(
                'df["living_sqft"] / df["lot_sqft"]', 'df["living_sqft"] / df["lot_sqft"].where(df["lot_sqft"] > 0)'
            ),
            "parcel_features",
            None,
            "no unguarded division",
        ),
        (
            PARCELS.replace(
                'out["building_coverage"] = df["living_sqft"] / df["lot_sqft"]',
                'out["building_coverage"] = df["living_sqft"].astype(float)\n'
                '    out["building_coverage"] /= df["lot_sqft"]',
            ),
            "parcel_features",
            'df["lot_sqft"]',
            "divides in place",
        ),
    ],
)
def test_refusals(source: str, function: str, divisor: str | None, reason: str) -> None:
    assert reason in refusal_of(guard_division(source, FILE, function, divisor))


def test_refuses_a_vectorised_division_the_base_made_unguarded_too(tmp_path: Path) -> None:
    context = repair_context(tmp_path, {FILE: PARCELS}, base={FILE: PARCELS}, suspect=PARCELS_SUSPECT)
    assert "not introduced" in refusal_of(guarded_division.propose(context))


TWO_RATIOS = PARCELS.replace(
    "    return out\n", '    out["floor_ratio"] = df["lot_sqft"] / df["living_sqft"]\n    return out\n'
)


@pytest.mark.parametrize(
    ("source", "function", "divisor", "base"),
    [
        (TWO_RATIOS, "parcel_features", None, PARCELS_BASE),  # two vectorised divisions, each asks the base
        (
            "def ratio(a: float, b: float) -> float:\n    return a / b\n",
            "ratio",
            "b",
            "def ratio(a: float, b: float) -> float:\n    if b == 0:\n        return 0.0\n    return a / b\n",
        ),
    ],
)
def test_the_base_revisions_file_is_parsed_once_for_every_question_asked_of_it(
    monkeypatch: pytest.MonkeyPatch, source: str, function: str, divisor: str | None, base: str
) -> None:
    """Which divisions the base left unguarded and what it returns instead are asked of one parse of its file."""
    import libs.python_source.untrusted_parsing as untrusted_parsing

    parsed: list[str] = []
    real = untrusted_parsing._parsed

    def counted(text: str | bytes, mode: str) -> object:
        parsed.append(text if isinstance(text, str) else text.decode())
        return real(text, mode)

    monkeypatch.setattr(untrusted_parsing, "_parsed", counted)
    edit = edit_of(guard_division(source, FILE, function, divisor, base_source=base))

    assert edit.edits[0].new_text != source
    assert parsed.count(base) == 1
