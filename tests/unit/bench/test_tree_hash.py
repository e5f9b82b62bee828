"""``python -m modelguard.bench_tree_hash`` measures a real tree: the figures are the tree's own, and the known
hash reads no file of a tree that did not change."""

from __future__ import annotations

from pathlib import Path

import pytest

from modelguard.bench_tree_hash import main, tree_hash_figures, write_tree


def test_the_figures_are_those_of_the_tree_written(tmp_path: Path) -> None:
    size = write_tree(tmp_path, 45)
    assert len(list(tmp_path.iterdir())) == 3  # twenty files a folder
    figures = tree_hash_figures(tmp_path, rounds=2)
    assert (figures.files, figures.size_bytes, figures.files_read_when_known) == (45, size, 0)
    assert figures.every_file_read_s > 0 and figures.known_s > 0


def test_a_bad_flag_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--files", "0"])
    assert exited.value.code == 2 and "--files and --rounds must be at least 1" in capsys.readouterr().err
