"""Which command arguments are inputs (kept readable) and which declare outputs (folder made writable)."""

from __future__ import annotations

from pathlib import Path

from libs.sandbox.arguments import declared_paths


def test_existing_paths_are_inputs_and_new_ones_outputs(tmp_path: Path) -> None:
    data = tmp_path / "in" / "eval.csv"
    data.parent.mkdir()
    data.write_text("a\n")
    out = tmp_path / "out"
    out.mkdir()
    declared = declared_paths(
        ["-m", "pkg.features", "--data", str(data), "--output", str(out / "features.csv"), "tests", "--x=/nope/y"],
        protected=[],
    )
    assert declared.inputs == (data,)
    assert declared.outputs == (out,)


def test_an_output_option_makes_even_an_existing_file_an_output(tmp_path: Path) -> None:
    existing = tmp_path / "customers.csv"
    existing.write_text("old")
    declared = declared_paths(["--output", str(existing), f"--junitxml={tmp_path / 'j.xml'}"], protected=[])
    assert declared.outputs == (tmp_path,) and declared.inputs == ()


def test_a_folder_holding_something_protected_stays_read_only(tmp_path: Path) -> None:
    workspace = tmp_path / "copy"
    workspace.mkdir()
    declared = declared_paths([str(tmp_path / "new.csv"), "/new-at-root.txt"], protected=[workspace])
    assert declared.outputs == ()
    assert declared.refused_outputs == (tmp_path, Path("/"))
