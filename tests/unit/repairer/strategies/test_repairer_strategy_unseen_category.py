"""unseen_category: values unseen in training behave like the declared default category."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from contracts.events.diagnosis import RepairHints
from services.repairer.strategies import unseen_category
from tests.unit.repairer.strategies.patched_trees import (
    diff_lines,
    edit_of,
    git_applied,
    load_module,
    refusal_of,
    repair_context,
)

FEATURES = "pkg/features.py"
HINTS = RepairHints(unseen_categories={"plan": ["enterprise"]})
DEFAULTS = {"plan": "basic"}
PANDAS_SOURCE = """import pandas as pd

PLAN_CODES = {"basic": 0, "standard": 1, "premium": 2}
TIERS = ("low", "high")


def encode(frame: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame(index=frame.index)
    out["plan"] = frame["plan"].map(PLAN_CODES)
    out["plan_list"] = [PLAN_CODES[value] for value in frame["plan"]]
    return out
"""
NUMPY_SOURCE = """import numpy as np

PLANS = ("basic", "standard", "premium")


def one_hot(values: np.ndarray, categories: tuple[str, ...]) -> np.ndarray:
    return np.stack([(values == category).astype(np.float64) for category in categories], axis=1)


def build(customers: dict[str, np.ndarray]) -> np.ndarray:
    return np.hstack([customers["spend"][:, None], one_hot(customers["plan"], PLANS)])
"""


def context_for(tmp_path: Path, source: str, defaults: dict[str, str] = DEFAULTS):  # type: ignore[no-untyped-def]
    return repair_context(
        tmp_path, {FEATURES: source}, hypothesis="category_mapping", hints=HINTS, categorical_defaults=defaults
    )


def test_a_dict_map_and_a_dict_lookup_fall_back_to_the_defaults_code(tmp_path: Path) -> None:
    edit = edit_of(unseen_category.propose(context_for(tmp_path, PANDAS_SOURCE)))
    assert diff_lines(edit.unified_diff) == [
        '-    out["plan"] = frame["plan"].map(PLAN_CODES)',
        '-    out["plan_list"] = [PLAN_CODES[value] for value in frame["plan"]]',
        '+    out["plan"] = frame["plan"].map(lambda value: PLAN_CODES.get(value, PLAN_CODES["basic"]))',
        '+    out["plan_list"] = [PLAN_CODES.get(value, PLAN_CODES["basic"]) for value in frame["plan"]]',
    ]
    module = load_module(git_applied(tmp_path, {FEATURES: PANDAS_SOURCE}, edit.unified_diff) / FEATURES)
    out = module.encode(pd.DataFrame({"plan": ["premium", "enterprise", "standard"]}))
    assert out["plan"].tolist() == [2, 0, 1] and out["plan_list"].tolist() == [2, 0, 1]


def test_a_one_hot_over_a_category_tuple_sees_unseen_values_as_the_default(tmp_path: Path) -> None:
    edit = edit_of(unseen_category.propose(context_for(tmp_path, NUMPY_SOURCE)))
    assert diff_lines(edit.unified_diff) == [
        '-    return np.hstack([customers["spend"][:, None], one_hot(customers["plan"], PLANS)])',
        '+    return np.hstack([customers["spend"][:, None], one_hot(np.where(np.isin(customers["plan"], PLANS), '
        'customers["plan"], "basic"), PLANS)])',
    ]
    module = load_module(git_applied(tmp_path, {FEATURES: NUMPY_SOURCE}, edit.unified_diff) / FEATURES)
    matrix = module.build({"spend": np.array([1.0, 2.0]), "plan": np.array(["enterprise", "premium"])})
    assert matrix.tolist() == [[1.0, 1.0, 0.0, 0.0], [2.0, 0.0, 0.0, 1.0]]


def test_a_pandas_categorical_with_declared_categories(tmp_path: Path) -> None:
    source = (
        "import pandas as pd\n\nPLANS = ['basic', 'standard', 'premium']\n\n\n"
        "def codes(frame):\n    return pd.Categorical(frame['plan'], categories=PLANS).codes\n"
    )
    edit = edit_of(unseen_category.propose(context_for(tmp_path, source)))
    assert diff_lines(edit.unified_diff)[-1] == (
        "+    return pd.Categorical(frame['plan'].where(frame['plan'].isin(PLANS), 'basic'), categories=PLANS).codes"
    )
    module = load_module(git_applied(tmp_path, {FEATURES: source}, edit.unified_diff) / FEATURES)
    assert module.codes(pd.DataFrame({"plan": ["enterprise", "premium"]})).tolist() == [0, 2]


def test_refuses_a_default_that_is_not_a_known_category(tmp_path: Path) -> None:
    refusal = refusal_of(unseen_category.propose(context_for(tmp_path, PANDAS_SOURCE, {"plan": "gold"})))
    assert "the declared default 'gold' is not one of the categories of PLAN_CODES" in refusal


def test_refuses_when_no_known_set_of_categories_is_used_with_the_column(tmp_path: Path) -> None:
    source = "import pandas as pd\n\n\ndef encode(frame):\n    return pd.get_dummies(frame['plan'])\n"
    assert "no permitted file maps plan" in refusal_of(unseen_category.propose(context_for(tmp_path, source)))
