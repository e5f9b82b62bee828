"""column_rename: a pandas function that receives a frame and reads the renamed column renames it back at its
start (one line; frames in the old and the new schema both work); elsewhere the column keys follow the rename."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from contracts.events.diagnosis import ColumnRename, RepairHints
from services.repairer.strategies import column_rename
from tests.unit.repairer.strategies.patched_trees import (
    diff_lines,
    edit_of,
    git_applied,
    load_module,
    refusal_of,
    repair_context,
)

LOADER = "pkg/loader.py"
FEATURES = "pkg/features.py"
LOADER_SOURCE = '''"""Read the customer extract ("tenure_months" is in months)."""

import pandas as pd

COLUMNS = ["customer_id", "tenure_months", 'monthly_spend']
DTYPES = {"tenure_months": "float64", "monthly_spend": "float64"}


def load(path):
    """The columns the model uses."""
    frame = pd.read_csv(path, usecols=COLUMNS, dtype=DTYPES)
    # tenure_months is in months
    frame["tenure_years"] = frame["tenure_months"] / 12
    note = f"tenure_months of {len(frame)} rows"
    return frame, note, "tenure_months"
'''
FEATURES_SOURCE = """import pandas as pd


def features(frame: pd.DataFrame) -> pd.DataFrame:
    if 'tenure_months' not in frame.columns:
        raise KeyError("no tenure")
    out = frame[["customer_id", 'tenure_months']].copy()
    out["tenure"] = frame.get('tenure_months')
    return out.drop(columns=["tenure_months"])
"""
RENAMED = RepairHints(renamed_columns=[ColumnRename(old="tenure_months", new="account_tenure_months")])
AMOUNT_RENAMED = RepairHints(renamed_columns=[ColumnRename(old="amount", new="transaction_amount")])


def propose(tmp_path: Path, files: dict[str, str], hints: RepairHints = AMOUNT_RENAMED):
    return column_rename.propose(repair_context(tmp_path, files, hypothesis="upstream_schema_change", hints=hints))


def test_a_frame_parameter_is_translated_and_a_loader_follows_in_its_own_quotes(tmp_path: Path) -> None:
    edit = edit_of(propose(tmp_path, {LOADER: LOADER_SOURCE, FEATURES: FEATURES_SOURCE}, RENAMED))
    assert edit.files == (FEATURES, LOADER)
    assert diff_lines(edit.unified_diff) == [
        "+    frame = frame.rename(columns={'account_tenure_months': 'tenure_months'})",
        '-COLUMNS = ["customer_id", "tenure_months", \'monthly_spend\']',
        '-DTYPES = {"tenure_months": "float64", "monthly_spend": "float64"}',
        '+COLUMNS = ["customer_id", "account_tenure_months", \'monthly_spend\']',
        '+DTYPES = {"account_tenure_months": "float64", "monthly_spend": "float64"}',
        '-    frame["tenure_years"] = frame["tenure_months"] / 12',
        '+    frame["tenure_years"] = frame["account_tenure_months"] / 12',
    ]
    patched = edit.edits[1].new_text
    assert '"""Read the customer extract ("tenure_months" is in months)."""' in patched
    assert "# tenure_months is in months" in patched and 'f"tenure_months of' in patched
    assert 'return frame, note, "tenure_months"' in patched
    assert "features (pkg/features.py) renames 'account_tenure_months' back to 'tenure_months'" in edit.rationale
    assert "the column keys in pkg/loader.py name the new column" in edit.rationale


def test_the_patched_code_reads_the_renamed_column_and_still_the_old_one(tmp_path: Path) -> None:
    files = {LOADER: LOADER_SOURCE, FEATURES: FEATURES_SOURCE}
    root = git_applied(tmp_path, files, edit_of(propose(tmp_path, files, RENAMED)).unified_diff)
    extract = tmp_path / "customers.csv"
    pd.DataFrame({"customer_id": ["a", "b"], "account_tenure_months": [24, 6], "monthly_spend": [9.5, 3.0]}).to_csv(
        extract, index=False
    )
    frame, _, _ = load_module(root / LOADER).load(extract)
    assert frame["tenure_years"].tolist() == [2.0, 0.5]
    features = load_module(root / FEATURES).features
    assert features(frame)["tenure"].tolist() == [24, 6]
    old_schema = frame.rename(columns={"account_tenure_months": "tenure_months"})
    assert features(old_schema)["tenure"].tolist() == [24, 6]


def test_only_permitted_files_are_edited(tmp_path: Path) -> None:
    files = {LOADER: LOADER_SOURCE, "other/features.py": FEATURES_SOURCE}
    assert edit_of(propose(tmp_path, files, RENAMED)).files == (LOADER,)


def test_refuses_when_no_permitted_file_reads_the_column(tmp_path: Path) -> None:
    hints = RepairHints(renamed_columns=[ColumnRename(old="plan", new="plan_name")])
    assert "no permitted file reads 'plan'" in refusal_of(propose(tmp_path, {LOADER: LOADER_SOURCE}, hints))


def test_refuses_when_the_old_name_is_only_text(tmp_path: Path) -> None:
    source = (
        "import pandas as pd\n\n\ndef build(df):\n"
        '    """Uses the amount."""\n'
        '    print("amount", f"amount {len(df)}")\n'
        '    return df["amount_usd"], "amount"\n'
    )
    reason = refusal_of(propose(tmp_path, {FEATURES: source}))
    assert reason.startswith("no permitted file reads 'amount': no column key, column constant or helper argument")


BUILDER = "pkg/preprocessing.py"
BUILDER_SOURCE = '''import argparse

import numpy as np
import pandas as pd

RAW_COLUMNS = [
    "amount",
    "hour_of_day",
    "merchant_category",
]
CATEGORIES = ("grocery", "travel")


class FeatureBuilder:
    """Stateless: the same transactions always give the same feature frame."""

    @staticmethod
    def numeric(frame: pd.DataFrame, column: str) -> pd.Series:
        return pd.to_numeric(frame[column], errors="coerce")

    def transform(self, raw: pd.DataFrame) -> pd.DataFrame:
        frame = raw.reindex(columns=RAW_COLUMNS)
        features = pd.DataFrame(index=frame.index)
        features["log_amount"] = np.log1p(self.numeric(frame, "amount").clip(lower=0))
        features["night"] = self.numeric(frame, "hour_of_day").lt(6).astype(float)
        for category in CATEGORIES:
            features[f"mcc_{category}"] = (frame["merchant_category"] == category).astype(float)
        return features


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--data")
    args = parser.parse_args(argv)
    print(FeatureBuilder().transform(pd.read_csv(args.data)))
    return 0
'''


def transactions(amount_column: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "transaction_id": ["TX-1", "TX-2"],
            "merchant_category": ["grocery", "travel"],
            amount_column: [12.5, 840.0],
            "hour_of_day": [2, 14],
        }
    )


def test_a_feature_builder_renames_the_new_column_back_where_the_raw_frame_comes_in(tmp_path: Path) -> None:
    files = {BUILDER: BUILDER_SOURCE}
    edit = edit_of(propose(tmp_path, files))
    assert diff_lines(edit.unified_diff) == ['+        raw = raw.rename(columns={"transaction_amount": "amount"})']
    patched = edit.edits[0].new_text
    assert patched.index("raw = raw.rename") < patched.index("frame = raw.reindex(columns=RAW_COLUMNS)")
    assert edit.function == "FeatureBuilder.transform"
    assert "so frames in either schema work" in edit.rationale
    builder = load_module(git_applied(tmp_path, files, edit.unified_diff) / BUILDER).FeatureBuilder()
    renamed = transactions("transaction_amount")
    new_schema, old_schema = builder.transform(renamed), builder.transform(transactions("amount"))
    assert new_schema["log_amount"].round(4).tolist() == [2.6027, 6.7346]
    pd.testing.assert_frame_equal(new_schema, old_schema)
    assert renamed.equals(transactions("transaction_amount")), "the caller's frame is not changed"


FUNCTIONS_SOURCE = """import pandas as pd


def build(df):
    '''Model inputs from the raw extract.'''
    out = pd.DataFrame(index=df.index)
    out["amount"] = df["amount"].fillna(0) * 2
    out["big"] = _big(df)
    return out


def _big(frame):
    return (frame["amount"] > 100).astype(int)


def summary(path):
    df = pd.read_csv(path)
    return df["amount"].sum()
"""


def test_a_function_gets_the_line_after_its_docstring_and_its_helper_none(tmp_path: Path) -> None:
    files = {FEATURES: FUNCTIONS_SOURCE}
    edit = edit_of(propose(tmp_path, files))
    assert diff_lines(edit.unified_diff) == [
        '+    df = df.rename(columns={"transaction_amount": "amount"})',
        '-    return df["amount"].sum()',
        '+    return df["transaction_amount"].sum()',
    ]
    patched = edit.edits[0].new_text
    assert "    '''Model inputs from the raw extract.'''\n    df = df.rename(" in patched
    assert 'out["amount"] = df["amount"]' in patched and 'frame["amount"] > 100' in patched
    module = load_module(git_applied(tmp_path, files, edit.unified_diff) / FEATURES)
    for column in ("transaction_amount", "amount"):
        built = module.build(pd.DataFrame({column: [50.0, None, 300.0]}))
        assert built["amount"].tolist() == [100.0, 0.0, 600.0] and built["big"].tolist() == [0, 0, 1]
    extract = tmp_path / "extract.csv"
    pd.DataFrame({"transaction_amount": [1.5, 2.5]}).to_csv(extract, index=False)
    assert module.summary(extract) == 4.0


RECORDS_SOURCE = """import csv

AMOUNT_FIELDS = ("amount", "fee")


def parse_amount(row, name):
    return float(row.get(name) or 0)


def load(path):
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    amounts = [float(row["amount"]) for row in rows]
    fees = [parse_amount(row, "fee") for row in rows]
    totals = [parse_amount(row, "amount") + float(row.get('amount')) for row in rows]
    label = "amount"
    return amounts, fees, totals, label
"""


def test_records_fall_back_to_renaming_the_keys(tmp_path: Path) -> None:
    files = {LOADER: RECORDS_SOURCE}
    edit = edit_of(propose(tmp_path, files))
    assert edit.function is None and "the column keys in pkg/loader.py name the new column" in edit.rationale
    assert diff_lines(edit.unified_diff) == [
        '-AMOUNT_FIELDS = ("amount", "fee")',
        '+AMOUNT_FIELDS = ("transaction_amount", "fee")',
        '-    amounts = [float(row["amount"]) for row in rows]',
        '+    amounts = [float(row["transaction_amount"]) for row in rows]',
        "-    totals = [parse_amount(row, \"amount\") + float(row.get('amount')) for row in rows]",
        "+    totals = [parse_amount(row, \"transaction_amount\") + float(row.get('transaction_amount'))"
        " for row in rows]",
    ]
    extract = tmp_path / "extract.csv"
    extract.write_text("transaction_amount,fee\n2.5,1\n4,\n", encoding="utf-8")
    loaded = load_module(git_applied(tmp_path, files, edit.unified_diff) / LOADER).load(extract)
    assert loaded == ([2.5, 4.0], [1.0, 0.0], [5.0, 8.0], "amount")


@pytest.mark.parametrize("annotation", ["dict[str, str]", "np.ndarray"])
def test_a_parameter_annotated_as_a_record_is_not_a_frame(tmp_path: Path, annotation: str) -> None:
    source = f"import numpy as np\nimport pandas as pd\n\n\ndef value(rec: {annotation}):\n    return rec['amount']\n"
    edit = edit_of(propose(tmp_path, {FEATURES: source}))
    assert diff_lines(edit.unified_diff) == ["-    return rec['amount']", "+    return rec['transaction_amount']"]


def test_a_caller_that_passes_its_frame_on_is_the_entry_and_a_helper_also_called_with_loaded_data_too(
    tmp_path: Path,
) -> None:
    source = (
        "import pandas as pd\n\n\ndef build(raw):\n    return _amounts(raw.copy())\n\n\n"
        'def _amounts(frame):\n    return frame["amount"] * 2\n'
    )
    edit = edit_of(propose(tmp_path / "a", {FEATURES: source}))
    assert diff_lines(edit.unified_diff) == ['+    raw = raw.rename(columns={"transaction_amount": "amount"})']
    assert edit.function == "build"
    loaded = source + "\n\ndef report(path):\n    return _amounts(pd.read_csv(path)).sum()\n"
    edit = edit_of(propose(tmp_path / "b", {FEATURES: loaded}))
    assert diff_lines(edit.unified_diff) == [
        '+    raw = raw.rename(columns={"transaction_amount": "amount"})',
        '+    frame = frame.rename(columns={"transaction_amount": "amount"})',
    ]


LATIN1_READER = (
    '# -*- coding: latin-1 -*-\n"""Montant en euros (r\xe9el)."""\n\n\n'
    'def total(row):\n    return float(row["amount"])\n'
)
"""A module a French team wrote in Latin-1, declared: valid Python that reads the renamed column, and that the
repairer does not edit (its edit would be written as UTF-8)."""
UTF8_READER = 'def fee(row):\n    return 0.01 * float(row["amount"])\n'


@pytest.mark.parametrize("encoding", ["latin-1", "utf-8-broken"])
def test_a_rename_is_refused_when_a_file_that_cannot_be_edited_reads_the_old_column(
    tmp_path: Path, encoding: str
) -> None:
    """The rename would follow the column in every file but this one, which would still read it by its old name:
    refused, naming the file and why it cannot be edited, rather than proposed incomplete."""
    context = repair_context(
        tmp_path, {"pkg/fees.py": UTF8_READER}, hypothesis="upstream_schema_change", hints=AMOUNT_RENAMED
    )
    raw = LATIN1_READER.encode("latin-1")
    if encoding == "utf-8-broken":  # no declaration: not UTF-8, so Python itself refuses it
        raw = raw.split(b"\n", 1)[1]
    (tmp_path / "candidate" / "pkg" / "totals.py").write_bytes(raw)
    reason = refusal_of(column_rename.propose(context))
    assert "pkg/totals.py" in reason and "'amount'" in reason
    assert ("declares encoding iso8859-1" if encoding == "latin-1" else "not UTF-8") in reason


def test_a_file_that_cannot_be_edited_and_does_not_read_the_column_does_not_stop_the_rename(tmp_path: Path) -> None:
    context = repair_context(
        tmp_path, {"pkg/fees.py": UTF8_READER}, hypothesis="upstream_schema_change", hints=AMOUNT_RENAMED
    )
    (tmp_path / "candidate" / "pkg" / "labels.py").write_bytes(b'# -*- coding: latin-1 -*-\nLABEL = "d\xe9bit"\n')
    edit = edit_of(column_rename.propose(context))
    assert edit.files == ("pkg/fees.py",)
