from __future__ import annotations

from pathlib import Path

import pytest

from libs.workspace.data_checks import InvalidValueCount, count_invalid_values


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_counts_non_finite_and_unparsable_cells_per_column(tmp_path: Path) -> None:
    features = write(
        tmp_path / "features.csv",
        "age,monthly_spend,tickets\n12,100.0,1\n0,inf,0\n0,nan,2\n3,-inf,\n4,abc,1\n5,1e3\n",
    )
    assert count_invalid_values(features) == InvalidValueCount(
        total=6, by_column={"monthly_spend": 4, "tickets": 2}, rows=6
    )


def test_clean_matrix_has_no_invalid_values(tmp_path: Path) -> None:
    features = write(tmp_path / "features.csv", "a,b\n1.0,2\n-3.5,0.0\n")
    assert count_invalid_values(features) == InvalidValueCount(total=0, by_column={}, rows=2)


def test_matrix_without_header_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        count_invalid_values(write(tmp_path / "empty.csv", ""))


@pytest.mark.parametrize(
    ("data", "why"),
    [
        # written by the workspace's features command: a quote never closed runs past the csv module's size limit
        (b'a,b\n1,"2\n' + b"3,4\n" * 40_000, "cannot be read as CSV: field larger than field limit"),
        (b"a,b\n1,2\n\xff,3\n", "not UTF-8"),
    ],
    ids=["unterminated-quote", "not-utf-8"],
)
def test_a_matrix_the_csv_reader_refuses_is_a_value_error_with_its_reason(
    tmp_path: Path, data: bytes, why: str
) -> None:
    features = tmp_path / "features.csv"
    features.write_bytes(data)
    with pytest.raises(ValueError, match=why):
        count_invalid_values(features)
