"""Code change, configuration change and read columns on small trees."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from services.diagnoser.code_diff import diff_trees
from services.diagnoser.extractors.code_change import code_change_evidence
from services.diagnoser.extractors.config_change import config_change_evidence
from services.diagnoser.extractors.read_columns import read_columns_evidence
from services.diagnoser.inputs import MetadataChangeRecord

FEATURES = '''"""Features."""


def ratio(row):
    if row["visits"] <= 0:
        return 0.0
    return row["spend"] / row["visits"]


def build(row):
    return {"ratio": ratio(row), "region": row.get("region")}
'''
FEATURES_UNGUARDED = FEATURES.replace('    if row["visits"] <= 0:\n        return 0.0\n', "")
TRAIN = 'C = 1.0\n\n\ndef fit(model_class):\n    return model_class(max_iter=100, penalty="l2")\n'


def tree(root: Path, files: dict[str, str]) -> Path:
    for relpath, text in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_a_changed_feature_function_with_an_introduced_unguarded_division(tmp_path: Path) -> None:
    base = tree(tmp_path / "base", {"pkg/features.py": FEATURES, "pkg/train.py": TRAIN, "README.md": "a"})
    candidate = tree(
        tmp_path / "cand", {"pkg/features.py": FEATURES_UNGUARDED, "pkg/train.py": TRAIN, "README.md": "b"}
    )
    item = code_change_evidence(diff_trees(base, candidate), base, candidate, frozenset({"pkg/features.py"}))
    values = item.values
    assert values["feature_files_changed"] == ["pkg/features.py"] and values["other_files_changed"] == []
    assert values["ignored_files"] == ["README.md"]
    assert [(f["function"], f["on_feature_path"]) for f in values["functions"]] == [("ratio", True)]
    assert values["unguarded_divisions"][0]["divisor"] == 'row["visits"]'
    assert {"visits", "spend"} <= set(values["columns_in_changed_feature_code"])
    assert item.strength == 1.0


def test_no_behavioural_change(tmp_path: Path) -> None:
    base = tree(tmp_path / "base", {"pkg/features.py": FEATURES, "docs/x.md": "a"})
    candidate = tree(tmp_path / "cand", {"pkg/features.py": FEATURES, "docs/x.md": "b"})
    item = code_change_evidence(diff_trees(base, candidate), base, candidate, frozenset({"pkg/features.py"}))
    assert item.strength == 0.0 and item.values["functions"] == []


def test_config_change_finds_keyword_constant_and_config_file_values(tmp_path: Path) -> None:
    base = tree(tmp_path / "base", {"pkg/train.py": TRAIN, "conf/model.yaml": "model:\n  depth: 3\n"})
    candidate_train = TRAIN.replace("C = 1.0", "C = 0.001").replace("max_iter=100", "max_iter=5")
    candidate = tree(tmp_path / "cand", {"pkg/train.py": candidate_train, "conf/model.yaml": "model:\n  depth: 9\n"})
    item = config_change_evidence(diff_trees(base, candidate), base, candidate, frozenset())
    changed = {(entry["file"], entry["key"]): (entry["before"], entry["after"]) for entry in item.values["changed"]}
    assert changed == {
        ("conf/model.yaml", "model.depth"): (3, 9),
        ("pkg/train.py", "<module>:C"): (1.0, 0.001),
        ("pkg/train.py", "fit:model_class(max_iter=)"): (100, 5),
    }
    assert item.strength == 1.0


def test_config_change_ignores_feature_modules_and_reads_hyper_parameters(tmp_path: Path) -> None:
    base = tree(tmp_path / "base", {"pkg/features.py": "SCALE = 1\n"})
    candidate = tree(tmp_path / "cand", {"pkg/features.py": "SCALE = 2\n"})
    record = MetadataChangeRecord(
        entity_urn="urn:li:mlModel:m",
        entity_type="mlModel",
        aspect="mlModelProperties",
        change_type="UPSERT",
        time_ms=None,
        actor=None,
        previous={"hyperParams": [{"name": "lr", "value": "0.1"}]},
        current={"hyperParams": [{"name": "lr", "value": "0.5"}]},
    )
    item = config_change_evidence(
        diff_trees(base, candidate), base, candidate, frozenset({"pkg/features.py"}), [record]
    )
    assert item.values["changed"] == [{"file": "urn:li:mlModel:m", "key": "lr", "before": "0.1", "after": "0.5"}]


def test_read_columns_are_names_of_csv_columns_in_code_outside_tests_and_docstrings(tmp_path: Path) -> None:
    code = '"""Reads spend."""\nCOLUMNS = ("visits", "plan")\n\n\ndef f(df):\n    return df["spend"], df.get("label")\n'
    base = tree(tmp_path / "base", {"pkg/a.py": code, "tests/test_a.py": 'X = "region"\n'})
    item = read_columns_evidence([base], {"visits", "plan", "spend", "region", "label", "unused"}, label="label")
    assert item.values["columns"] == ["plan", "spend", "visits"]
    assert item.values["label_read"] is True
    assert item.values["uses"]["spend"] == ["subscript"] and item.values["uses"]["plan"] == ["list_of_names"]


def _laughs(levels: int = 9) -> str:
    """YAML whose aliases stand for 9**levels values in a few hundred bytes (safe_load shares them; a walk does not)."""
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\ntop: *l" + str(levels - 1) + "\n"


UNREADABLE_CONFIGS = {
    "conf/infinite.yaml": "model:\n  max_loss: .inf\n  alpha: .nan\n",
    "conf/infinite.json": '{"model": {"max_loss": Infinity, "alpha": NaN}}',
    "conf/infinite.toml": "[model]\nmax_loss = inf\nalpha = nan\n",
    "conf/deep.json": "[" * 5_000 + "]" * 5_000,
    "conf/deep_objects.json": '{"a": ' * 900 + "1" + "}" * 900,
    "conf/deep.yaml": "a: " + "[" * 3_000 + "]" * 3_000 + "\n",
    "conf/deep.toml": "a = " + "[" * 3_000 + "]" * 3_000 + "\n",
    "conf/laughs.yaml": _laughs(),
    "pkg/limits.py": "MAX_LOSS = 1e999\nMIN_LOSS = -1e999\n\n\ndef fit(model):\n    return model(tol=1e999)\n",
}


def test_config_values_no_json_can_carry_or_no_walk_can_finish_still_give_evidence(tmp_path: Path) -> None:
    """Config files and literals a pull request changes are untrusted: infinity and NaN (YAML's .inf, JSON's
    Infinity, TOML's inf, Python's 1e999), nesting past the parsers' and a recursive walk's limits, and YAML aliases
    that stand for a billion values. The evidence is still made (its id is a digest of its canonical JSON), and
    says what it can: a value JSON cannot carry is written as its text."""
    base = tree(tmp_path / "base", {"pkg/train.py": TRAIN, "conf/infinite.yaml": "model:\n  max_loss: 10.0\n"})
    candidate = tree(tmp_path / "cand", {"pkg/train.py": TRAIN, **UNREADABLE_CONFIGS})
    item = config_change_evidence(diff_trees(base, candidate), base, candidate, frozenset())
    changed = {(entry["file"], entry["key"]): (entry["before"], entry["after"]) for entry in item.values["changed"]}
    assert changed[("conf/infinite.yaml", "model.max_loss")] == (10.0, "inf")
    assert changed[("conf/infinite.yaml", "model.alpha")] == (None, "nan")
    assert changed[("conf/infinite.json", "model.max_loss")] == (None, "inf")
    assert changed[("conf/infinite.toml", "model.alpha")] == (None, "nan")
    assert changed[("pkg/limits.py", "<module>:MAX_LOSS")] == (None, "inf")
    assert changed[("pkg/limits.py", "<module>:MIN_LOSS")] == (None, "-inf")
    assert changed[("pkg/limits.py", "fit:model(tol=)")] == (None, "inf")
    assert len(item.values["changed"]) < 1_000  # the aliases were not walked a billion times


def test_each_changed_file_is_parsed_once_however_many_functions_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file that adds many functions (an outsider's generated module, a vendored library) is read and parsed
    once per revision, not once per function: the evidence of 200 added functions took seconds per file, and
    grew with the square of the file's size."""
    functions = "".join(
        f"\n\ndef ratio_{index}(row):\n    return row['spend_{index}'] / row['visits']\n" for index in range(200)
    )
    base = tree(tmp_path / "base", {"pkg/features.py": FEATURES})
    candidate = tree(tmp_path / "cand", {"pkg/features.py": FEATURES_UNGUARDED + functions})
    diff = diff_trees(base, candidate)
    parses = []
    real_parse = ast.parse

    def counted(*args: Any, **kwargs: Any) -> ast.AST:
        parses.append(args)
        tree: ast.AST = real_parse(*args, **kwargs)
        return tree

    monkeypatch.setattr(ast, "parse", counted)
    item = code_change_evidence(diff, base, candidate, frozenset({"pkg/features.py"}))
    assert len(parses) <= 2
    divisions = item.values["unguarded_divisions"]
    assert len(divisions) == 201 and divisions[0] == {
        "file": "pkg/features.py",
        "function": "ratio",
        "line": 5,
        "divisor": 'row["visits"]',
        "divisor_parameters": ["row"],
    }
    assert {"spend_0", "spend_199", "visits"} <= set(item.values["columns_in_changed_feature_code"])


def test_a_string_with_a_lone_surrogate_escape_is_evidence_json_can_hold(tmp_path: Path) -> None:
    """``"\\ud800"`` is a valid Python literal (codec and JSON tests write it), but its value is no UTF-8 text: put in
    the evidence as it is, the evidence's canonical JSON raised UnicodeEncodeError out of the extractor. A literal
    parameter keeps it escaped, as its ``repr``; it names no column (a CSV header is UTF-8 text)."""
    surrogate = '"\\ud800"'
    base_train = TRAIN.replace('penalty="l2"', 'penalty="\\ud801"')
    base = tree(tmp_path / "base", {"pkg/train.py": base_train, "pkg/features.py": FEATURES})
    features = FEATURES_UNGUARDED.replace('row.get("region")', f"row[{surrogate}]")
    candidate_train = TRAIN.replace('penalty="l2"', f"penalty={surrogate}")
    candidate = tree(tmp_path / "cand", {"pkg/train.py": candidate_train, "pkg/features.py": features})
    diff = diff_trees(base, candidate)
    code = code_change_evidence(diff, base, candidate, frozenset({"pkg/features.py"}))
    assert code.values["columns_in_changed_feature_code"] == ["ratio", "region", "spend", "visits"]
    config = config_change_evidence(diff, base, candidate, frozenset({"pkg/features.py"}))
    assert config.values["changed"] == [
        {
            "file": "pkg/train.py",
            "key": "fit:model_class(penalty=)",
            "before": "'\\ud801'",
            "after": "'\\ud800'",
        }
    ]
