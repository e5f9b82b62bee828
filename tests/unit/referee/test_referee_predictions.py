"""Predictions are read strictly: one finite number per row id handed out, nothing more, nothing less."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from libs.referee import predictions
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


_CELLS = (
    "0",
    "1",
    "2",
    " 1 ",
    "+2",
    "1_0",
    "-0",
    "3",
    "-1",
    "99999999999999999999",
    "x",
    "",
    "0.5",
    " 0.25 ",
    "nan",
    "-inf",
    "1e400",
    "1_000.5",
    "0x1",
    "\u0661",
)  # the last: an Arabic-Indic one, which int() and float() accept


@pytest.mark.parametrize("seed", range(300))
def test_the_bulk_reading_accepts_what_the_row_by_row_reading_does_and_reads_the_same(seed: int) -> None:
    """``_read_in_bulk`` is a shortcut: on any table it either declines (None) or gives exactly what the row-by-row
    reading gives; and on a file that keeps the contract it never declines."""
    rng = random.Random(seed)
    rows = rng.randint(0, 6)
    order = list(range(rows))
    rng.shuffle(order)
    body = [[str(i), repr(rng.uniform(-5, 5))] for i in order]
    if seed % 3:  # most tables broken in one or two places
        for _ in range(rng.randint(1, 2)):
            where = rng.randrange(len(body) + 1)
            change = rng.randrange(5)
            if change == 0 or not body:
                body.insert(where, [rng.choice(_CELLS), rng.choice(_CELLS)])
            elif change == 1 and body[where % len(body)]:
                row = body[where % len(body)]
                row[rng.randrange(len(row))] = rng.choice(_CELLS)
            elif change == 2:
                body.insert(where, [])
            elif change == 3:
                body[where % len(body)].append(rng.choice(_CELLS))
            else:
                del body[where % len(body)]
    id_at, value_at = (0, 1) if seed % 2 else (1, 0)
    body = [row if id_at == 0 or len(row) != 2 else row[::-1] for row in body]
    try:
        expected: object = predictions._read_row_by_row(body, id_at, value_at, rows).tolist()
    except MalformedPredictions as refusal:
        expected = refusal
    quick = predictions._read_in_bulk(body, id_at, value_at, rows)
    if quick is not None:
        assert quick.tolist() == expected
    else:
        assert isinstance(expected, MalformedPredictions), "a table that keeps the contract was declined"
