"""null_guard on code shapes people write: the column read through a frame helper that takes its name, a
scikit-learn ColumnTransformer fed a frame (by a column list, or whole), a record field named by a constant,
a numpy array of the column. The declared fill goes in before the frame reaches the model; each test runs the
patched code on rows with nulls and compares with the same code given rows already filled."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from contracts.events.diagnosis import RepairHints
from services.repairer.strategies import null_guard
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
HINTS = RepairHints(null_columns=["visits_last_30d"])
FILLS = {"visits_last_30d": 0}


def context_for(tmp_path: Path, files: dict[str, str], fills: dict[str, object] = FILLS):  # type: ignore[no-untyped-def]
    return repair_context(tmp_path, files, hypothesis="source_data_quality", hints=HINTS, null_fills=fills)


def customers(rows: int = 40, *, nulls: bool = True) -> tuple[pd.DataFrame, pd.Series]:
    rng = np.random.default_rng(7)
    visits = rng.integers(0, 12, rows).astype(float)
    if nulls:
        visits[::3] = np.nan
    frame = pd.DataFrame({"visits_last_30d": visits, "basket_eur": rng.uniform(10, 90, rows).round(2)})
    labels = pd.Series((np.nan_to_num(visits) + rng.normal(0, 2, rows) > 5).astype(int))
    return frame, labels


HELPER_SOURCE = '''import numpy as np
import pandas as pd


def _numeric(frame, name):
    if name not in frame.columns:
        return pd.Series(np.nan, index=frame.index)
    return pd.to_numeric(frame[name], errors="coerce")


def visit_features(frame: pd.DataFrame) -> pd.DataFrame:
    """Visits and basket value."""
    out = pd.DataFrame(index=frame.index)
    out["visits"] = _numeric(frame, "visits_last_30d")
    out["active"] = (out["visits"] > 0).astype(float)
    out["basket"] = _numeric(frame, "basket_eur")
    return out
'''


def test_a_column_read_by_a_frame_helper_is_filled_where_the_frame_comes_in(tmp_path: Path) -> None:
    context = context_for(tmp_path, {FEATURES: HELPER_SOURCE})
    edit = edit_of(null_guard.propose(context))
    assert diff_lines(edit.unified_diff) == ['+    frame = frame.fillna({"visits_last_30d": 0})']
    assert_guard_accepts(context, edit)
    module = load_module(git_applied(tmp_path, {FEATURES: HELPER_SOURCE}, edit.unified_diff) / FEATURES)
    frame = pd.DataFrame({"visits_last_30d": [3.0, None], "basket_eur": [20.0, None]})
    out = module.visit_features(frame)
    assert out["visits"].tolist() == [3.0, 0.0] and out["active"].tolist() == [1.0, 0.0]
    assert math.isnan(out["basket"][1]), "only the declared column is filled"
    assert frame["visits_last_30d"].isna().sum() == 1, "the caller's frame is not changed"


PIPELINE_SOURCE = """import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

NUMERIC = ["visits_last_30d", "basket_eur"]


def make_model() -> Pipeline:
    columns = ColumnTransformer([("numeric", SimpleImputer(strategy="median"), NUMERIC)])
    return Pipeline([("columns", columns), ("clf", LogisticRegression())])


def train(frame: pd.DataFrame, labels) -> Pipeline:
    return make_model().fit(frame[NUMERIC], labels)


def score(model: Pipeline, frame: pd.DataFrame):
    return model.predict_proba(frame[NUMERIC])[:, 1]
"""


def test_a_frame_entering_a_column_transformer_by_its_column_list_is_filled_first(tmp_path: Path) -> None:
    context = context_for(tmp_path, {MODEL: PIPELINE_SOURCE})
    edit = edit_of(null_guard.propose(context))
    assert diff_lines(edit.unified_diff) == [
        '+    frame = frame.fillna({"visits_last_30d": 0})',
        '+    frame = frame.fillna({"visits_last_30d": 0})',
    ]
    assert_guard_accepts(context, edit)
    patched = load_module(git_applied(tmp_path, {MODEL: PIPELINE_SOURCE}, edit.unified_diff) / MODEL)
    frame, labels = customers()
    filled = frame.fillna({"visits_last_30d": 0})
    reference = load_module(context.candidate.root / MODEL)
    expected = reference.score(reference.train(filled, labels), filled)
    assert np.allclose(patched.score(patched.train(frame, labels), frame), expected)
    median_imputed = reference.score(reference.train(frame, labels), frame)
    assert not np.allclose(median_imputed, expected), "the fill changes what the model sees"


CLASS_PIPELINE_SOURCE = """import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline


class VisitModel:
    def __init__(self):
        columns = ColumnTransformer(
            [("numeric", SimpleImputer(strategy="median"), ["visits_last_30d", "basket_eur"])]
        )
        self.pipeline = Pipeline([("columns", columns), ("clf", LogisticRegression())])

    def fit(self, X: pd.DataFrame, y):
        self.pipeline.fit(X, y)
        return self

    def predict_proba(self, X: pd.DataFrame):
        return self.pipeline.predict_proba(X)[:, 1]
"""


def test_a_whole_frame_handed_to_a_column_transformer_pipeline_is_filled_first(tmp_path: Path) -> None:
    context = context_for(tmp_path, {MODEL: CLASS_PIPELINE_SOURCE})
    edit = edit_of(null_guard.propose(context))
    assert diff_lines(edit.unified_diff) == [
        '+        X = X.fillna({"visits_last_30d": 0})',
        '+        X = X.fillna({"visits_last_30d": 0})',
    ]
    assert_guard_accepts(context, edit)
    patched = load_module(git_applied(tmp_path, {MODEL: CLASS_PIPELINE_SOURCE}, edit.unified_diff) / MODEL)
    reference = load_module(context.candidate.root / MODEL)
    frame, labels = customers()
    filled = frame.fillna({"visits_last_30d": 0})
    expected = reference.VisitModel().fit(filled, labels).predict_proba(filled)
    assert np.allclose(patched.VisitModel().fit(frame, labels).predict_proba(frame), expected)


RECORD_SOURCE = """import csv

VISITS = "visits_last_30d"


def visit_counts(path) -> list[int]:
    with open(path, newline="") as handle:
        return [int(record[VISITS]) for record in csv.DictReader(handle)]


def baskets(records) -> list[float]:
    return [float(record.get("visits_last_30d")) * 2 for record in records]
"""


def test_a_record_field_named_by_a_constant_or_read_with_get_takes_the_fill(tmp_path: Path) -> None:
    context = context_for(tmp_path, {FEATURES: RECORD_SOURCE})
    edit = edit_of(null_guard.propose(context))
    assert diff_lines(edit.unified_diff) == [
        "-        return [int(record[VISITS]) for record in csv.DictReader(handle)]",
        "+        return [int(record[VISITS] or 0) for record in csv.DictReader(handle)]",
        '-    return [float(record.get("visits_last_30d")) * 2 for record in records]',
        '+    return [float(record.get("visits_last_30d") or 0) * 2 for record in records]',
    ]
    assert_guard_accepts(context, edit)
    module = load_module(git_applied(tmp_path, {FEATURES: RECORD_SOURCE}, edit.unified_diff) / FEATURES)
    extract = tmp_path / "x.csv"
    extract.write_text("visits_last_30d,tier\n4,gold\n,basic\n", encoding="utf-8")
    assert module.visit_counts(extract) == [4, 0]
    assert module.baskets([{"visits_last_30d": "3"}, {"visits_last_30d": None}, {}]) == [6.0, 0.0, 0.0]


NUMPY_SOURCE = """import numpy as np


def design(columns: dict[str, np.ndarray]) -> np.ndarray:
    visits = columns["visits_last_30d"]
    return np.column_stack([np.log1p(visits), columns["basket_eur"]])
"""


def test_a_numpy_array_of_the_column_is_filled_where_it_is_read(tmp_path: Path) -> None:
    context = context_for(tmp_path, {FEATURES: NUMPY_SOURCE})
    edit = edit_of(null_guard.propose(context))
    assert diff_lines(edit.unified_diff) == [
        '-    visits = columns["visits_last_30d"]',
        '+    visits = np.where(np.isnan(columns["visits_last_30d"]), 0, columns["visits_last_30d"])',
    ]
    assert_guard_accepts(context, edit)
    module = load_module(git_applied(tmp_path, {FEATURES: NUMPY_SOURCE}, edit.unified_diff) / FEATURES)
    matrix = module.design({"visits_last_30d": np.array([3.0, np.nan]), "basket_eur": np.array([1.0, np.nan])})
    assert matrix[:, 0].tolist() == [math.log1p(3.0), 0.0] and math.isnan(matrix[1, 1])


def test_refuses_when_the_pipeline_is_only_fed_outside_the_permitted_files(tmp_path: Path) -> None:
    builder = PIPELINE_SOURCE[: PIPELINE_SOURCE.index("def train")].rstrip() + "\n"
    trainer = (
        "from pkg.model import NUMERIC, make_model\n\n\n"
        "def train(frame, labels):\n    return make_model().fit(frame[NUMERIC], labels)\n"
    )
    reason = refusal_of(null_guard.propose(context_for(tmp_path, {MODEL: builder, "train.py": trainer})))
    assert reason == "no permitted file reads visits_last_30d at a site a fill can guard"
