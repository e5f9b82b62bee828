"""unseen_category on encoders that learn their categories in ``fit`` and look the column up with ``.map``:
a share-of-rows encoder over the columns its constructor is given (a loop over an attribute set by an
inherited ``__init__``, built in another module), and a target-rate encoder holding one column. Each test fits
the patched code, scores a value it never saw and checks that it now scores like the declared default while
seen values keep their own score; and that the edit is refused where it would change another column."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

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

ENCODERS = "pkg/encoders.py"
MODEL = "pkg/model.py"
HINTS = RepairHints(unseen_categories={"plan": ["enterprise"]})

SHARE_SOURCE = '''"""Encoders of the renewal model."""
import numpy as np
import pandas as pd


class Step:
    def __init__(self, cols):
        self.cols = tuple(cols)

    def fit(self, frame):
        return self


class CountShare(Step):
    """Each category becomes its share of the training rows."""

    def fit(self, frame):
        self.share_ = {}
        for name in self.cols:
            self.share_[name] = frame[name].astype(str).str.strip().value_counts(normalize=True)
        return self

    def transform(self, frame):
        parts = []
        for name in self.cols:
            cleaned = frame[name].astype(str).str.strip()
            parts.append(cleaned.map(self.share_[name]).fillna(0.0).to_numpy())
        return np.column_stack(parts)
'''

SHARE_MODEL = """from pkg.encoders import CountShare


def make_encoder():
    return CountShare(["plan"])
"""

RATE_SOURCE = """import pandas as pd


class TargetRate:
    def __init__(self, column, label="renewed"):
        self.column = column
        self.label = label

    def fit(self, frame):
        self.rates_ = frame.groupby(self.column)[self.label].mean().to_dict()
        self.prior_ = float(frame[self.label].mean())
        return self

    def transform(self, frame):
        return frame[self.column].map(self.rates_).fillna(self.prior_).to_numpy()
"""

RATE_MODEL = """from pkg import encoders


def make_encoder():
    return encoders.TargetRate("plan")
"""


def training() -> pd.DataFrame:
    plans = ["basic"] * 5 + ["standard"] * 3 + ["premium"] * 2
    return pd.DataFrame({"plan": plans, "renewed": [0, 0, 0, 1, 0, 1, 1, 0, 1, 1]})


def patched(tmp_path: Path, files: dict[str, str]) -> tuple[ModuleType, str]:
    context = repair_context(
        tmp_path, files, hypothesis="category_mapping", hints=HINTS, categorical_defaults={"plan": "standard"}
    )
    edit = edit_of(unseen_category.propose(context))
    assert edit.files == (ENCODERS,)
    assert_guard_accepts(context, edit)
    changed = diff_lines(edit.unified_diff)
    assert len(changed) == 2, changed
    return load_module(git_applied(tmp_path, files, edit.unified_diff) / ENCODERS), changed[1]


def test_a_share_encoder_built_for_the_column_in_another_module_maps_unseen_values_before_its_lookup(
    tmp_path: Path,
) -> None:
    module, line = patched(tmp_path, {ENCODERS: SHARE_SOURCE, MODEL: SHARE_MODEL})
    assert line == (
        '+            parts.append(cleaned.where(cleaned.isin(self.share_[name].keys()), "standard")'
        ".map(self.share_[name]).fillna(0.0).to_numpy())"
    )
    encoder = module.CountShare(["plan"]).fit(training())
    scores = encoder.transform(pd.DataFrame({"plan": ["enterprise", " standard", "basic"]}))[:, 0]
    assert scores.tolist() == [0.3, 0.3, 0.5]


def test_a_target_rate_encoder_holding_the_column_from_its_constructor_maps_unseen_values(tmp_path: Path) -> None:
    module, line = patched(tmp_path, {ENCODERS: RATE_SOURCE, MODEL: RATE_MODEL})
    assert line == (
        '+        return frame[self.column].where(frame[self.column].isin(self.rates_.keys()), "standard")'
        ".map(self.rates_).fillna(self.prior_).to_numpy()"
    )
    encoder = module.TargetRate("plan").fit(training())
    scores = encoder.transform(pd.DataFrame({"plan": ["enterprise", "premium", "basic"]}))
    assert [round(score, 4) for score in scores] == [0.6667, 1.0, 0.2]


def test_refuses_when_another_construction_encodes_another_column(tmp_path: Path) -> None:
    model = SHARE_MODEL + '\n\ndef make_region_encoder():\n    return CountShare(["region"])\n'
    context = repair_context(
        tmp_path,
        {ENCODERS: SHARE_SOURCE, MODEL: model},
        hypothesis="category_mapping",
        hints=HINTS,
        categorical_defaults={"plan": "standard"},
    )
    assert refusal_of(unseen_category.propose(context)) == (
        "no permitted file maps plan through a known set of categories"
    )


def test_a_method_passed_to_map_is_not_a_learnt_mapping(tmp_path: Path) -> None:
    source = RATE_SOURCE.replace(".map(self.rates_)", ".map(self.normalise)") + (
        "\n    def normalise(self, value):\n        return self.rates_.get(value)\n"
    )
    context = repair_context(
        tmp_path,
        {ENCODERS: source, MODEL: RATE_MODEL},
        hypothesis="category_mapping",
        hints=HINTS,
        categorical_defaults={"plan": "standard"},
    )
    assert refusal_of(unseen_category.propose(context)) == (
        "no permitted file maps plan through a known set of categories"
    )
