"""Evaluation records are a cache, never the only copy of anything, and nothing else removes them: `modelguard
evaluations prune --older-than DAYS` removes the records last written before then, says what it would remove
without `--apply`, and never touches a file that is not a record (a writer's partial file, another space's
records, anything else under the artifacts)."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from libs.artifacts.record_retention import prune_records
from libs.artifacts.records import FolderRecords
from modelguard.cli import main

DAY = 24 * 3600


def _name(n: int) -> str:
    return f"{n:064x}"


def _written(records: FolderRecords, name: str, days_ago: float, data: bytes = b"{}") -> Path:
    records.write(name, data)
    path = records.root / name[:2] / f"{name}.json"
    stamp = time.time() - days_ago * DAY
    os.utime(path, (stamp, stamp))
    return path


def test_records_written_before_the_cutoff_are_removed_and_the_rest_kept(tmp_path: Path) -> None:
    records = FolderRecords(tmp_path / "evaluations")
    old = [_written(records, _name(n), 40 + n, b"x" * 100) for n in range(3)]
    recent = [_written(records, _name(10 + n), 5) for n in range(2)]
    partial = records.root / "00" / ".incoming-abc"  # a writer's file not yet renamed into place
    partial.write_bytes(b"half")
    os.utime(partial, (time.time() - 90 * DAY,) * 2)
    stray = records.root / "notes.json"
    stray.write_text("{}")
    os.utime(stray, (time.time() - 90 * DAY,) * 2)

    looked = prune_records(records, datetime.now(UTC) - timedelta(days=30), apply=False)
    assert (looked.examined, looked.stale, looked.stale_bytes, looked.removed) == (5, 3, 300, 0)
    assert all(path.exists() for path in old + recent)

    done = prune_records(records, datetime.now(UTC) - timedelta(days=30), apply=True)
    assert (done.examined, done.stale, done.removed) == (5, 3, 3)
    assert not any(path.exists() for path in old) and all(path.exists() for path in recent)
    assert partial.exists() and stray.exists()
    assert records.read(_name(10)) == b"{}" and records.read(_name(0)) is None


def test_a_record_space_never_written_has_nothing_to_prune(tmp_path: Path) -> None:
    pruned = prune_records(FolderRecords(tmp_path / "none-yet"), datetime.now(UTC), apply=True)
    assert (pruned.examined, pruned.stale, pruned.removed) == (0, 0, 0)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("MODELGUARD_ARTIFACTS_URL", "MODELGUARD_ARTIFACTS_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_the_command_says_what_it_would_remove_and_removes_it_only_with_apply(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = FolderRecords(home / "artifacts" / "evaluations")
    old = _written(records, _name(1), 45, b"y" * 2048)
    recent = _written(records, _name(2), 1)

    assert main(["evaluations", "prune", "--older-than", "30"]) == 0
    said = capsys.readouterr().out
    assert "1 of 2 evaluation records" in said and "2.0 KiB" in said and "--apply" in said
    assert old.exists()

    assert main(["evaluations", "prune", "--older-than", "30", "--apply"]) == 0
    assert "removed 1 of 2 evaluation records" in capsys.readouterr().out
    assert not old.exists() and recent.exists()


@pytest.mark.parametrize("days", ["-1", "0", "soon"])
def test_an_age_that_is_not_a_positive_number_of_days_is_one_line_and_exit_2(
    home: Path, days: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["evaluations", "prune", "--older-than", days])
    assert exited.value.code == 2
    assert "--older-than" in capsys.readouterr().err
