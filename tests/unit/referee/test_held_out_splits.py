"""An evaluation file is split once per process and shared: same bytes and label, same features file; a changed
file, another label or a failed split is never served stale; splits in use are never removed."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import libs.referee.held_out_splits as held_out_splits
from libs.referee.held_out import HeldOutError, write_features
from libs.referee.held_out_splits import HeldOutSplits


def _csv(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    return path


def _rows(n: int, seed: int = 0) -> list[list[str]]:
    return [["amount", "y", "plan"], *([str(i * 7 + seed), str((i + seed) % 2), f"p{i % 3}"] for i in range(n))]


@pytest.fixture
def splits_made(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files actually split, in order."""
    made: list[str] = []
    real = held_out_splits.split_features

    def counting(data: bytes, name: str, label: str, features_csv: Path):  # type: ignore[no-untyped-def]
        made.append(name)
        return real(data, name, label, features_csv)

    monkeypatch.setattr(held_out_splits, "split_features", counting)
    return made


def test_the_same_bytes_are_split_once_and_the_split_is_write_features_own(
    tmp_path: Path, splits_made: list[str]
) -> None:
    first = _csv(tmp_path / "a.csv", _rows(50))
    second = _csv(tmp_path / "b.csv", _rows(50))  # another file, the same bytes
    splits = HeldOutSplits()
    with splits.features(first, "y") as (features, labels):
        kept = features.read_bytes()
    with splits.features(second, "y") as (again, labels_again):
        assert again == features and again.read_bytes() == kept
    assert splits_made == ["a.csv"] and labels_again == labels
    expected = write_features(first, "y", tmp_path / "direct.csv")
    assert kept == (tmp_path / "direct.csv").read_bytes() and labels == expected
    assert features.stat().st_mode & 0o777 == 0o644 and features.parent.stat().st_mode & 0o777 == 0o755


def test_another_label_or_changed_bytes_make_a_new_split(tmp_path: Path, splits_made: list[str]) -> None:
    source = _csv(tmp_path / "eval.csv", _rows(20))
    with_plan = _csv(tmp_path / "plan.csv", [["amount", "y", "plan"], ["1", "0", "a"], ["2", "1", "b"]])
    splits = HeldOutSplits()
    with splits.features(source, "y") as (by_label, labels):
        assert labels.texts[:2] == ("0", "1")
    with splits.features(source, "plan") as (by_plan, plan_labels):
        assert by_plan != by_label and plan_labels.texts[:3] == ("p0", "p1", "p2")
    _csv(source, _rows(20, seed=1))  # changed in place, same size
    with splits.features(source, "y") as (changed, changed_labels):
        assert changed != by_label and changed_labels.texts[:2] == ("1", "0")
        assert changed.read_text().splitlines()[1] == "0,1,p0"
    assert splits_made == ["eval.csv"] * 3
    with splits.features(with_plan, "y"), splits.features(with_plan, "y"):
        pass
    assert splits_made.count("plan.csv") == 1


def test_callers_at_once_share_one_split(tmp_path: Path, splits_made: list[str]) -> None:
    source = _csv(tmp_path / "eval.csv", _rows(3000))
    splits = HeldOutSplits()
    meeting = threading.Barrier(8, timeout=30)

    def use() -> tuple[Path, tuple[str, ...], bytes]:
        meeting.wait()
        with splits.features(source, "y") as (features, labels):
            return features, labels.texts, features.read_bytes()

    with ThreadPoolExecutor(8) as pool:
        seen = list(pool.map(lambda _: use(), range(8)))
    assert splits_made == ["eval.csv"]
    assert len({s[0] for s in seen}) == 1 and len({s[1] for s in seen}) == 1 and len({s[2] for s in seen}) == 1


def test_a_failed_split_reaches_every_waiting_caller_and_is_not_kept(tmp_path: Path, splits_made: list[str]) -> None:
    source = _csv(tmp_path / "eval.csv", [["a", "b"], *([str(i), "0"] for i in range(3000))])
    splits = HeldOutSplits()
    meeting = threading.Barrier(4, timeout=30)

    def use() -> str:
        meeting.wait()
        try:
            with splits.features(source, "y"):
                return "served"
        except HeldOutError as error:
            return str(error)

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: use(), range(4)))
    assert answers == ["eval.csv has no label column 'y'"] * 4
    assert 1 <= len(splits_made) <= 4 and splits.kept() == 0
    _csv(source, _rows(5))
    with splits.features(source, "y") as (features, labels):
        assert len(labels) == 5 and features.is_file()


def test_splits_nobody_holds_are_removed_oldest_first_and_a_held_one_never(tmp_path: Path) -> None:
    windows = [_csv(tmp_path / f"w{i}.csv", _rows(10, seed=i)) for i in range(5)]
    splits = HeldOutSplits(capacity=2)
    with splits.features(windows[0], "y") as (held, _):
        folders = []
        for window in windows[1:4]:
            with splits.features(window, "y") as (features, _):
                folders.append(features.parent)
            assert held.read_text().startswith("row_id,amount,plan\n")  # held: kept past the capacity
        assert [folder.exists() for folder in folders] == [False, False, True]
    assert held.exists() and splits.kept() == 2  # no longer held, and within the capacity
    with splits.features(windows[4], "y"):
        pass
    assert not held.exists() and folders[2].exists() and splits.kept() == 2


def test_the_budget_bounds_what_is_kept_by_size(tmp_path: Path) -> None:
    small = [_csv(tmp_path / f"s{i}.csv", _rows(10, seed=i)) for i in range(3)]
    size = small[0].stat().st_size
    splits = HeldOutSplits(capacity=10, budget_bytes=2 * size + size // 2)
    for window in small:
        with splits.features(window, "y"):
            pass
    assert splits.kept() == 2


def test_a_large_file_is_split_for_its_one_caller_and_removed_after(tmp_path: Path, splits_made: list[str]) -> None:
    source = _csv(tmp_path / "eval.csv", _rows(200))
    splits = HeldOutSplits(cached_bytes_max=source.stat().st_size - 1)
    with splits.features(source, "y") as (first, labels):
        assert first.is_file() and len(labels) == 200
        assert first.parent.stat().st_mode & 0o777 == 0o755
    with splits.features(source, "y") as (second, _):
        assert second != first
    assert not first.exists() and not second.exists() and splits.kept() == 0 and len(splits_made) == 2


def test_a_forked_child_starts_empty_with_a_lock_of_its_own(tmp_path: Path) -> None:
    """Forked while another thread holds the splits' lock, the child still splits (with a lock of its own, into a
    folder of its own) and leaves its parent's splits in place."""
    source = _csv(tmp_path / "eval.csv", _rows(10))
    splits = HeldOutSplits()
    with splits.features(source, "y") as (parents, _):
        pass
    held, release = threading.Event(), threading.Event()

    def hold_the_lock() -> None:
        with splits._guard:
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    assert held.wait(30)
    try:
        child = os.fork()
        if child == 0:  # pragma: no cover - the child's verdict is its exit status
            signal.alarm(20)  # a child waiting for ever on the parent's lock is killed, and the test fails
            code = 1
            try:
                with splits.features(source, "y") as (childs, _):
                    code = 0 if childs != parents and childs.parent.parent != parents.parent.parent else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(child, 0)
    finally:
        release.set()
        holder.join()
    assert os.waitstatus_to_exitcode(status) == 0
    assert parents.is_file() and splits.kept() == 1


def test_the_folders_of_a_killed_process_are_removed_by_the_next_one_and_a_living_ones_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SIGKILLed service cannot remove its splits (up to the budget of features): the next process that makes a
    folder of splits removes those of processes that no longer run, and never one of a process still running."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    script = (
        "import os, signal, sys; from pathlib import Path; from libs.referee.held_out_splits import HeldOutSplits\n"
        "splits = HeldOutSplits()\n"
        "for kept in (True, False):\n"
        "    splits.cached_bytes_max = 10**9 if kept else 1\n"
        "    with splits.features(Path(sys.argv[1]), 'y') as (features, _):\n"
        "        print(features.parent.parent if kept else features.parent, flush=True)\n"
        "        if not kept: os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    source = _csv(tmp_path / "eval.csv", _rows(20))
    killed = subprocess.run(
        [sys.executable, "-c", script, str(source)],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp_path / "tmp")},
        timeout=60,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    left = [Path(line) for line in killed.stdout.split()]
    assert len(left) == 2 and all(folder.is_dir() for folder in left)
    namespace = os.stat("/proc/self/ns/pid").st_ino
    assert sorted(folder.name.split("-")[1] for folder in left) == ["features", "held"]
    living = tmp_path / "tmp" / f"modelguard-held-out-{namespace}-{os.getppid()}-kept"
    elsewhere = tmp_path / "tmp" / f"modelguard-held-out-{namespace + 1}-{killed_pid(left)}-another-namespace"
    other = tmp_path / "tmp" / "modelguard-held-out-not-a-process"
    for folder in (living, elsewhere, other):
        folder.mkdir()

    with HeldOutSplits().features(source, "y") as (features, _):
        assert features.is_file()

    assert not any(folder.exists() for folder in left)
    assert living.is_dir() and elsewhere.is_dir() and other.is_dir()


def killed_pid(folders: list[Path]) -> str:
    """The process id in the name of a folder the killed process made (`modelguard-held-out-NS-PID-...`)."""
    top = next(folder for folder in folders if folder.name.startswith("modelguard-features-"))
    return top.name.split("-")[3]
