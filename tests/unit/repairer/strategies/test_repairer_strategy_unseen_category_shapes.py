"""unseen_category on code shapes people write: a OneHotEncoder with ``categories=[...]`` inside a
ColumnTransformer (fed the raw frame, or a frame the code cleans first), a one-hot loop over a catalogue
constant, a catalogue held in a class attribute with the column in a constructor default, per-record
comparisons. Each test scores rows with a value outside the catalogue and checks they now score like the
declared default, and that known values (before and after the code's own cleaning) are left alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from contracts.events.diagnosis import RepairHints
from services.repairer.strategies import unseen_category
from tests.unit.repairer.strategies.patched_trees import (
    assert_guard_accepts,
    diff_lines,
    edit_of,
    git_applied,
    load_module,
    refusal_of,
    repair_context,
)

FEATURES = "pkg/features.py"
MODEL = "pkg/model.py"
HINTS = RepairHints(unseen_categories={"plan": ["enterprise"]})


def context_for(tmp_path: Path, files: dict[str, str], default: str = "standard"):  # type: ignore[no-untyped-def]
    return repair_context(
        tmp_path, files, hypothesis="category_mapping", hints=HINTS, categorical_defaults={"plan": default}
    )


def policies(plans: list[str]) -> tuple[pd.DataFrame, pd.Series]:
    rng = np.random.default_rng(3)
    rows = len(plans)
    regions, ages = rng.choice(["north", "south"], rows), rng.integers(18, 80, rows)
    frame = pd.DataFrame({"plan": plans, "region": regions, "age": ages})
    labels = pd.Series(
        [int(plan.strip().lower() == "premium" or age > 60) for plan, age in zip(plans, ages, strict=True)]
    )
    return frame, labels


ENCODER_SOURCE = """import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

PLANS = ["basic", "standard", "premium"]
CATEGORICAL = ["plan"]
NUMERIC = ["age"]


def make_model() -> Pipeline:
    encode = ColumnTransformer(
        [
            ("plan", OneHotEncoder(categories=[PLANS], handle_unknown="ignore"), CATEGORICAL),
            ("numeric", "passthrough", NUMERIC),
        ]
    )
    return Pipeline([("encode", encode), ("clf", LogisticRegression(max_iter=500))])


def train(frame: pd.DataFrame, labels) -> Pipeline:
    return make_model().fit(frame[CATEGORICAL + NUMERIC], labels)


def score(model: Pipeline, frame: pd.DataFrame):
    return model.predict_proba(frame[CATEGORICAL + NUMERIC])[:, 1]
"""
ENTRY_LINE = '    frame = frame.replace({"plan": {value: "standard" for value in set(frame["plan"]) - set(PLANS)}})'


def test_a_catalogue_encoder_fed_the_raw_frame_maps_unseen_values_where_the_frame_comes_in(tmp_path: Path) -> None:
    context = context_for(tmp_path, {MODEL: ENCODER_SOURCE})
    edit = edit_of(unseen_category.propose(context))
    assert diff_lines(edit.unified_diff) == [f"+{ENTRY_LINE}", f"+{ENTRY_LINE}"]
    assert_guard_accepts(context, edit)
    module = load_module(git_applied(tmp_path, {MODEL: ENCODER_SOURCE}, edit.unified_diff) / MODEL)
    train, labels = policies(["basic", "standard", "premium"] * 20)
    model = module.train(train, labels)
    unseen, _ = policies(["enterprise", "basic", "premium"] * 3)
    as_default = unseen.assign(plan=unseen["plan"].replace("enterprise", "standard"))
    assert np.allclose(module.score(model, unseen), module.score(model, as_default))
    assert unseen["plan"].tolist()[:3] == ["enterprise", "basic", "premium"], "the caller's frame is not changed"


CLEANED_SOURCE = """import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

REGIONS = ["north", "south"]
PLANS = ["Basic", "Standard", "Premium"]


class ClaimModel:
    def __init__(self):
        categorical = OneHotEncoder(categories=[REGIONS, PLANS], drop="first", handle_unknown="ignore")
        encode = ColumnTransformer(
            [("categorical", categorical, ["region", "plan"]), ("numeric", "passthrough", ["age"])]
        )
        self.pipeline = Pipeline([("encode", encode), ("clf", LogisticRegression(max_iter=500))])

    def _prepare(self, frame: pd.DataFrame) -> pd.DataFrame:
        out = frame[["region", "plan", "age"]].copy()
        out["plan"] = out["plan"].str.strip().str.title()
        return out

    def fit(self, frame: pd.DataFrame, labels):
        self.pipeline.fit(self._prepare(frame), labels)
        return self

    def predict_proba(self, frame: pd.DataFrame):
        return self.pipeline.predict_proba(self._prepare(frame))[:, 1]
"""


def test_values_the_code_cleans_are_mapped_after_the_cleaning(tmp_path: Path) -> None:
    context = context_for(tmp_path, {MODEL: CLEANED_SOURCE}, default="Standard")
    edit = edit_of(unseen_category.propose(context))
    assert diff_lines(edit.unified_diff) == [
        '+        out["plan"] = out["plan"].where(out["plan"].isin(PLANS), "Standard")'
    ]
    assert_guard_accepts(context, edit)
    module = load_module(git_applied(tmp_path, {MODEL: CLEANED_SOURCE}, edit.unified_diff) / MODEL)
    train, labels = policies(["basic", "Standard", " premium"] * 20)
    model = module.ClaimModel().fit(train, labels)
    rows, _ = policies([" premium plus ", "Enterprise", " basic ", "PREMIUM"])
    expected, _ = policies(["Standard", "Standard", "Basic", "Premium"])
    assert np.allclose(model.predict_proba(rows), model.predict_proba(expected))


LOOP_SOURCE = """import pandas as pd

PLANS = ("basic", "standard", "premium")


def plan_columns(frame: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame(index=frame.index)
    out["plan_raw"] = frame["plan"]
    for plan in PLANS:
        out[f"plan_{plan}"] = (frame["plan"] == plan).astype(int)
    return out
"""


def test_a_one_hot_loop_over_a_catalogue_compares_the_default_instead(tmp_path: Path) -> None:
    context = context_for(tmp_path, {FEATURES: LOOP_SOURCE})
    edit = edit_of(unseen_category.propose(context))
    assert diff_lines(edit.unified_diff) == [
        '-        out[f"plan_{plan}"] = (frame["plan"] == plan).astype(int)',
        '+        out[f"plan_{plan}"] = (frame["plan"].where(frame["plan"].isin(PLANS), "standard") == plan)'
        ".astype(int)",
    ]
    assert_guard_accepts(context, edit)
    module = load_module(git_applied(tmp_path, {FEATURES: LOOP_SOURCE}, edit.unified_diff) / FEATURES)
    out = module.plan_columns(pd.DataFrame({"plan": ["enterprise", "premium"]}))
    assert out[["plan_basic", "plan_standard", "plan_premium"]].to_numpy().tolist() == [[0, 1, 0], [0, 0, 1]]
    assert out["plan_raw"].tolist() == ["enterprise", "premium"], "other uses of the column keep its value"


CLASS_SOURCE = """import pandas as pd


class PlanCodes:
    plans = ["basic", "standard", "premium"]

    def __init__(self, column="plan"):
        self.column = column

    def transform(self, frame):
        return pd.Categorical(frame[self.column], categories=self.plans).codes
"""


def test_a_catalogue_in_a_class_attribute_with_the_column_in_a_constructor_default(tmp_path: Path) -> None:
    context = context_for(tmp_path, {FEATURES: CLASS_SOURCE})
    edit = edit_of(unseen_category.propose(context))
    assert diff_lines(edit.unified_diff)[-1] == (
        '+        return pd.Categorical(frame[self.column].where(frame[self.column].isin(self.plans), "standard"), '
        "categories=self.plans).codes"
    )
    assert_guard_accepts(context, edit)
    module = load_module(git_applied(tmp_path, {FEATURES: CLASS_SOURCE}, edit.unified_diff) / FEATURES)
    codes = module.PlanCodes().transform(pd.DataFrame({"plan": ["enterprise", "premium", "basic"]}))
    assert codes.tolist() == [1, 2, 0]


RECORD_SOURCE = """import numpy as np

PLANS = ("basic", "standard", "premium")


def one_hot(records: list[dict[str, str]]) -> np.ndarray:
    return np.array([[float(record["plan"] == plan) for plan in PLANS] for record in records])
"""


def test_per_record_comparisons_with_a_catalogue(tmp_path: Path) -> None:
    context = context_for(tmp_path, {FEATURES: RECORD_SOURCE})
    edit = edit_of(unseen_category.propose(context))
    assert diff_lines(edit.unified_diff)[-1] == (
        '+    return np.array([[float((record["plan"] if record["plan"] in PLANS else "standard") == plan) '
        "for plan in PLANS] for record in records])"
    )
    assert_guard_accepts(context, edit)
    module = load_module(git_applied(tmp_path, {FEATURES: RECORD_SOURCE}, edit.unified_diff) / FEATURES)
    assert module.one_hot([{"plan": "enterprise"}, {"plan": "basic"}]).tolist() == [[0, 1, 0], [1, 0, 0]]


def test_refuses_a_default_outside_the_encoders_catalogue(tmp_path: Path) -> None:
    reason = refusal_of(unseen_category.propose(context_for(tmp_path, {MODEL: ENCODER_SOURCE}, default="gold")))
    assert reason == "the declared default 'gold' is not one of the categories of PLANS"


def test_refuses_an_encoder_that_learns_its_categories(tmp_path: Path) -> None:
    source = ENCODER_SOURCE.replace("OneHotEncoder(categories=[PLANS], ", "OneHotEncoder(")
    reason = refusal_of(unseen_category.propose(context_for(tmp_path, {MODEL: source})))
    assert reason == "no permitted file maps plan through a known set of categories"
