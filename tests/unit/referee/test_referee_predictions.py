"""Predictions are read strictly: one finite number per row id handed out, nothing more, nothing less."""

from __future__ import annotations

from pathlib import Path

import pytest

from libs.referee.predictions import MalformedPredictions, read_predictions


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "predictions.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_predictions_in_any_order_are_read_by_row_id(tmp_path: Path) -> None:
    values = read_predictions(_file(tmp_path, "prediction,row_id\n0.5,2\n0.1,0\n0.9,1\n"), 3)
    assert values.tolist() == [0.1, 0.9, 0.5]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("row_id,prediction\n0,0.1\n", r"1 of 2 rows have no prediction \(the first: row_id 1\)"),
        ("row_id,prediction\n0,0.1\n0,0.2\n1,0.3\n", "row_id 0 appears twice"),
        ("row_id,prediction\n0,0.1\n7,0.2\n", "row_id 7 was never handed out"),
        ("row_id,prediction,label\n0,0.1,1\n1,0.2,0\n", "header must be row_id,prediction"),
        ("row_id,prediction\n0,nan\n1,0.2\n", "not finite"),
        ("row_id,prediction\n0,inf\n1,0.2\n", "not finite"),
        ("row_id,prediction\n0,high\n1,0.2\n", "not a number"),
        ("row_id,prediction\nx,0.1\n1,0.2\n", "not an integer"),
        ("", "header must be"),
        # a quote opened and never closed: the rest of the file is one cell, past the csv module's size limit
        ('row_id,prediction\n0,"0.1\n' + "1,0.2\n" * 30_000, "not CSV: field larger than field limit"),
        ('"row_id' + "x" * 200_000 + "\n", "not CSV: field larger than field limit"),
    ],
)
def test_what_breaks_the_contract_fails_with_its_reason(tmp_path: Path, text: str, why: str) -> None:
    with pytest.raises(MalformedPredictions, match=why):
        read_predictions(_file(tmp_path, text), 2)


def test_no_file_is_a_failure(tmp_path: Path) -> None:
    with pytest.raises(MalformedPredictions, match="no predictions file"):
        read_predictions(tmp_path / "absent.csv", 2)
