"""column_rename when the renamed column's name is held somewhere other than the key itself: a class
attribute, a constructor default (the scikit-learn convention), a module constant, a function default, a
config value (a module-level dict, a JSON file the module loads). Frames are renamed back where they come in;
records follow the rename where the name is held. Each test runs the patched code on rows in the new schema
(and, for frames, the old one)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from contracts.events.diagnosis import ColumnRename, RepairHints
from services.repairer.strategies import column_rename
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
SETTINGS = "pkg/settings.json"
HINTS = RepairHints(renamed_columns=[ColumnRename(old="subject", new="ticket_title")])
NEW_SCHEMA = pd.DataFrame({"ticket_id": ["a", "b"], "ticket_title": ["Login fails", None]})
OLD_SCHEMA = NEW_SCHEMA.rename(columns={"ticket_title": "subject"})


def context_for(tmp_path: Path, files: dict[str, str], repair_paths: tuple[str, ...] = ("pkg/*.py",)):  # type: ignore[no-untyped-def]
    return repair_context(tmp_path, files, hypothesis="upstream_schema_change", hints=HINTS, repair_paths=repair_paths)


CLASS_ATTRIBUTE_SOURCE = '''import pandas as pd


class TitleLength:
    """Length of the ticket title."""

    text_column = "subject"

    def fit(self, X: pd.DataFrame, y=None):
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame({"title_len": X[self.text_column].fillna("").str.len()}, index=X.index)
'''


def test_a_column_named_by_a_class_attribute_is_renamed_back_where_the_frame_comes_in(tmp_path: Path) -> None:
    context = context_for(tmp_path, {FEATURES: CLASS_ATTRIBUTE_SOURCE})
    edit = edit_of(column_rename.propose(context))
    assert diff_lines(edit.unified_diff) == ['+        X = X.rename(columns={"ticket_title": "subject"})']
    assert edit.function == "TitleLength.transform"
    assert_guard_accepts(context, edit)
    module = load_module(git_applied(tmp_path, {FEATURES: CLASS_ATTRIBUTE_SOURCE}, edit.unified_diff) / FEATURES)
    assert module.TitleLength().transform(NEW_SCHEMA)["title_len"].tolist() == [11, 0]
    assert module.TitleLength().transform(OLD_SCHEMA)["title_len"].tolist() == [11, 0]


CONSTRUCTOR_SOURCE = """import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, TransformerMixin

SUBJECT = "subject"


class TitleWords(BaseEstimator, TransformerMixin):
    def __init__(self, text_column: str = SUBJECT, lowercase: bool = True):
        self.text_column = text_column
        self.lowercase = lowercase

    def _text(self, X: pd.DataFrame) -> pd.Series:
        if self.text_column not in X.columns:
            return pd.Series("", index=X.index)
        text = X[self.text_column].fillna("").astype(str)
        return text.str.lower() if self.lowercase else text

    def fit(self, X: pd.DataFrame, y=None):
        self.vocabulary_ = sorted(set(" ".join(self._text(X)).split()))
        return self

    def transform(self, X: pd.DataFrame) -> np.ndarray:
        words = self._text(X).str.split()
        return np.array([[float(word in row) for word in self.vocabulary_] for row in words])
"""


def test_a_constructor_default_held_in_a_module_constant(tmp_path: Path) -> None:
    context = context_for(tmp_path, {FEATURES: CONSTRUCTOR_SOURCE})
    edit = edit_of(column_rename.propose(context))
    assert diff_lines(edit.unified_diff) == [
        '+        X = X.rename(columns={"ticket_title": "subject"})',
        '+        X = X.rename(columns={"ticket_title": "subject"})',
    ]
    assert_guard_accepts(context, edit)
    module = load_module(git_applied(tmp_path, {FEATURES: CONSTRUCTOR_SOURCE}, edit.unified_diff) / FEATURES)
    fitted = module.TitleWords().fit(NEW_SCHEMA)
    assert fitted.vocabulary_ == ["fails", "login"]
    assert fitted.transform(NEW_SCHEMA).tolist() == [[1.0, 1.0], [0.0, 0.0]]
    assert fitted.transform(OLD_SCHEMA).tolist() == [[1.0, 1.0], [0.0, 0.0]]


DEFAULT_SOURCE = """import pandas as pd


def word_count(frame: pd.DataFrame, column: str = "subject") -> pd.Series:
    return frame[column].fillna("").str.split().str.len()


def features(frame: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"words": word_count(frame), "id_len": frame["ticket_id"].str.len()})
"""


def test_a_function_default_names_the_column(tmp_path: Path) -> None:
    context = context_for(tmp_path, {FEATURES: DEFAULT_SOURCE})
    edit = edit_of(column_rename.propose(context))
    assert diff_lines(edit.unified_diff) == ['+    frame = frame.rename(columns={"ticket_title": "subject"})']
    assert edit.edits[0].new_text.index("frame = frame.rename") > edit.edits[0].new_text.index("def features")
    assert_guard_accepts(context, edit)
    module = load_module(git_applied(tmp_path, {FEATURES: DEFAULT_SOURCE}, edit.unified_diff) / FEATURES)
    assert module.features(NEW_SCHEMA)["words"].tolist() == [2, 0]
    assert module.features(OLD_SCHEMA)["words"].tolist() == [2, 0]


CONFIG_SOURCE = """import json
from pathlib import Path

import pandas as pd
import pytest

SETTINGS = json.loads(Path(__file__).with_name("settings.json").read_text())
COLUMNS = {"id": "ticket_id", "text": "subject"}


def title_words(frame: pd.DataFrame) -> pd.Series:
    return frame[SETTINGS["text_column"]].fillna("").str.split().str.len()


def title_ids(frame: pd.DataFrame) -> pd.Series:
    return frame[COLUMNS["id"]] + ":" + frame[COLUMNS["text"]].fillna("")
"""
SETTINGS_TEXT = json.dumps({"text_column": "subject", "max_words": 20}, indent=2) + "\n"


def test_config_values_naming_the_column_on_a_frame(tmp_path: Path) -> None:
    files = {FEATURES: CONFIG_SOURCE, SETTINGS: SETTINGS_TEXT}
    context = context_for(tmp_path, files)
    edit = edit_of(column_rename.propose(context))
    assert edit.files == (FEATURES,)
    assert diff_lines(edit.unified_diff) == [
        '+    frame = frame.rename(columns={"ticket_title": "subject"})',
        '+    frame = frame.rename(columns={"ticket_title": "subject"})',
    ]
    assert_guard_accepts(context, edit)
    module = load_module(git_applied(tmp_path, files, edit.unified_diff) / FEATURES)
    assert module.title_words(NEW_SCHEMA).tolist() == [2, 0]
    assert module.title_ids(NEW_SCHEMA).tolist() == ["a:Login fails", "b:"]
    assert module.title_ids(OLD_SCHEMA).tolist() == ["a:Login fails", "b:"]


RECORDS_SOURCE = """class TitleReader:
    def __init__(self, title_field="subject"):
        self.title_field = title_field

    def titles(self, records: list[dict[str, str]]) -> list[str]:
        return [record[self.title_field].strip() for record in records]
"""


def test_records_read_through_a_constructor_default_follow_the_rename_there(tmp_path: Path) -> None:
    context = context_for(tmp_path, {FEATURES: RECORDS_SOURCE})
    edit = edit_of(column_rename.propose(context))
    assert diff_lines(edit.unified_diff) == [
        '-    def __init__(self, title_field="subject"):',
        '+    def __init__(self, title_field="ticket_title"):',
    ]
    assert_guard_accepts(context, edit)
    module = load_module(git_applied(tmp_path, {FEATURES: RECORDS_SOURCE}, edit.unified_diff) / FEATURES)
    assert module.TitleReader().titles([{"ticket_title": " Login fails "}]) == ["Login fails"]


RECORDS_CONFIG_SOURCE = """import json
from pathlib import Path

SETTINGS = json.loads(Path(__file__).with_name("settings.json").read_text())


def titles(records: list[dict[str, str]]) -> list[str]:
    return [record[SETTINGS["text_column"]].strip() for record in records]
"""


def test_records_named_by_a_config_file_follow_the_rename_in_the_config(tmp_path: Path) -> None:
    files = {FEATURES: RECORDS_CONFIG_SOURCE, SETTINGS: SETTINGS_TEXT}
    context = context_for(tmp_path, files, repair_paths=("pkg/*.py", "pkg/*.json"))
    edit = edit_of(column_rename.propose(context))
    assert edit.files == (SETTINGS,)
    assert diff_lines(edit.unified_diff) == ['-  "text_column": "subject",', '+  "text_column": "ticket_title",']
    assert_guard_accepts(context, edit, repair_paths=("pkg/*.py", "pkg/*.json"))
    module = load_module(git_applied(tmp_path, files, edit.unified_diff) / FEATURES)
    assert module.titles([{"ticket_title": " Login fails "}]) == ["Login fails"]


def test_refuses_when_the_config_naming_the_column_is_not_permitted(tmp_path: Path) -> None:
    files = {FEATURES: RECORDS_CONFIG_SOURCE, SETTINGS: SETTINGS_TEXT}
    reason = refusal_of(column_rename.propose(context_for(tmp_path, files)))
    assert reason == (
        "no permitted file reads 'subject': no column key, column constant or helper argument beside a frame or "
        "record names it (pkg/settings.json names it, which a repair may not edit)"
    )


@pytest.mark.parametrize(
    ("name", "loader", "text", "changed"),
    [
        (
            "settings.toml",
            "tomllib.loads",
            "[columns]\ntext_column = 'subject'\nid = 'ticket_id'\n",
            ["-text_column = 'subject'", "+text_column = 'ticket_title'"],
        ),
        (
            "settings.yaml",
            "yaml.safe_load",
            "columns:\n  text_column: subject  # the title line\n  id: ticket_id\n",
            ["-  text_column: subject  # the title line", "+  text_column: ticket_title  # the title line"],
        ),
    ],
)
def test_records_named_by_a_toml_or_yaml_config_follow_the_rename_in_its_own_style(
    tmp_path: Path, name: str, loader: str, text: str, changed: list[str]
) -> None:
    source = (
        f"import {loader.split('.')[0]}\nfrom pathlib import Path\n\n"
        f'SETTINGS = {loader}(Path(__file__).with_name("{name}").read_text())\n\n\n'
        "def titles(records):\n"
        '    return [record[SETTINGS["columns"]["text_column"]].strip() for record in records]\n'
    )
    files = {FEATURES: source, f"pkg/{name}": text}
    repair_paths = ("pkg/*.py", f"pkg/{name}")
    context = context_for(tmp_path, files, repair_paths=repair_paths)
    edit = edit_of(column_rename.propose(context))
    assert edit.files == (f"pkg/{name}",)
    assert diff_lines(edit.unified_diff) == changed
    assert_guard_accepts(context, edit, repair_paths=repair_paths)
    module = load_module(git_applied(tmp_path, files, edit.unified_diff) / FEATURES)
    assert module.titles([{"ticket_title": " Login fails "}]) == ["Login fails"]


def test_records_named_by_a_constant_of_a_sibling_module_follow_the_rename_there(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/columns.py": 'TITLE = "subject"\nTICKET = "ticket_id"\n',
        FEATURES: "from .columns import TITLE\n\n\ndef titles(rows):\n    return [row[TITLE] for row in rows]\n",
    }
    context = context_for(tmp_path, files)
    edit = edit_of(column_rename.propose(context))
    assert edit.files == ("pkg/columns.py",)
    assert diff_lines(edit.unified_diff) == ['-TITLE = "subject"', '+TITLE = "ticket_title"']
    assert_guard_accepts(context, edit)


@pytest.mark.parametrize(
    "text",
    [
        "[" * 5_000 + "]" * 5_000,  # past json's recursion limit
        '{"text_column": ' * 900 + '"subject"' + "}" * 900,  # parses, deeper than any walk should go
    ],
)
def test_a_config_file_nested_past_any_reader_refuses_as_unreadable(tmp_path: Path, text: str) -> None:
    """The config file is the pull request's: nesting past the parser's limit must refuse the route, not stop the
    repairer."""
    files = {FEATURES: RECORDS_CONFIG_SOURCE, SETTINGS: text}
    result = column_rename.propose(context_for(tmp_path, files, repair_paths=("pkg/*.py", "pkg/*.json")))
    assert refusal_of(result)
