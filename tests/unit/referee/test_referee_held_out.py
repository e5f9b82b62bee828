"""The workspace gets the evaluation rows without their labels; ModelGuard keeps the labels by row id."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from libs.referee.held_out import HeldOutError, write_features


def _csv(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    return path


def test_the_label_column_is_removed_and_a_row_id_added(tmp_path: Path) -> None:
    source = _csv(tmp_path / "eval.csv", [["amount", "churned", "plan"], ["1,5", "1", "a b"], ["2", "0", ""]])
    held = write_features(source, "churned", tmp_path / "features.csv")
    with (tmp_path / "features.csv").open(newline="", encoding="utf-8") as handle:
        assert list(csv.reader(handle)) == [["row_id", "amount", "plan"], ["0", "1,5", "a b"], ["1", "2", ""]]
    assert held.texts == ("1", "0")
    assert "churned" not in (tmp_path / "features.csv").read_text()


def test_labels_compare_as_text_with_numbers_and_booleans_normalised(tmp_path: Path) -> None:
    source = _csv(tmp_path / "eval.csv", [["y"], ["1.0"], [" 1"], ["0"], ["True"], ["yes"]])
    held = write_features(source, "y", tmp_path / "f.csv")
    assert held.as_targets("classification", "1").tolist() == [1, 1, 0, 0, 0]
    assert held.as_targets("classification", "true").tolist() == [0, 0, 0, 1, 0]
    with pytest.raises(HeldOutError, match="numeric labels"):
        held.as_targets("regression", "1")


@pytest.mark.parametrize(
    ("rows", "why"),
    [
        ([["a", "b"], ["1", "2"]], "no label column 'y'"),
        ([["row_id", "y"], ["1", "2"]], "already has a column 'row_id'"),
        ([["a", "y"]], "no rows"),
        ([["a", "y"], ["1"]], "row 2 has 1 cells"),
    ],
)
def test_rows_that_cannot_be_split_are_refused(tmp_path: Path, rows: list[list[str]], why: str) -> None:
    with pytest.raises(HeldOutError, match=why):
        write_features(_csv(tmp_path / "eval.csv", rows), "y", tmp_path / "f.csv")


def _row_by_row(source: Path, label: str, features: Path) -> list[str]:
    """The split written one row at a time: what ``write_features`` wrote before it wrote rows in batches."""
    with source.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    position, labels = rows[0].index(label), []
    with features.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["row_id", *(name for index, name in enumerate(rows[0]) if index != position)])
        for number, row in enumerate(rows[1:]):
            labels.append(row[position])
            writer.writerow([number, *(cell for index, cell in enumerate(row) if index != position)])
    return labels


@pytest.mark.parametrize("position", [0, 2, 4])
def test_many_rows_are_split_as_one_row_at_a_time_would_split_them(tmp_path: Path, position: int) -> None:
    cells = ["plain", "a,comma", 'a "quote"', "line\nbreak", "", "ünïcødé", " padded ", "3.5e-7"]
    header = ["c0", "c1", "c2", "c3", "c4"]
    header[position] = "target"
    rows = [header] + [
        [cells[(row * 7 + col * 3) % len(cells)] + str(row % 5) for col in range(5)] for row in range(9001)
    ]
    source = _csv(tmp_path / "eval.csv", rows)
    held = write_features(source, "target", tmp_path / "features.csv")
    expected = _row_by_row(source, "target", tmp_path / "expected.csv")
    assert (tmp_path / "features.csv").read_bytes() == (tmp_path / "expected.csv").read_bytes()
    assert list(held.texts) == expected and len(expected) == 9001


def test_a_short_row_after_many_is_named_by_its_line(tmp_path: Path) -> None:
    rows = [["a", "y"]] + [[str(row), "1"] for row in range(5000)] + [["short"]]
    source = _csv(tmp_path / "eval.csv", rows)
    with pytest.raises(HeldOutError, match="row 5002 has 1 cells, the header 2"):
        write_features(source, "y", tmp_path / "features.csv")


@pytest.mark.parametrize(
    ("data", "why"),
    [
        # a quote opened early and never closed: the rest of the file becomes one cell, past the csv module's limit
        (b'a,y\n"1,0\n' + b"2,1\n" * 40_000, "field larger than field limit"),
        (b"a,y\n1,0\n2,1\n\xff\xfe,0\n", "not UTF-8"),
    ],
    ids=["unterminated-quote", "not-utf-8"],
)
def test_a_file_the_csv_reader_refuses_is_refused_with_its_reason(tmp_path: Path, data: bytes, why: str) -> None:
    source = tmp_path / "eval.csv"
    source.write_bytes(data)
    with pytest.raises(HeldOutError, match=why) as refused:
        write_features(source, "y", tmp_path / "f.csv")
    assert "eval.csv" in str(refused.value) and str(tmp_path) not in str(refused.value)
