"""Bad input to the command line gets one readable line and an exit code, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from modelguard.cli import main


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))


@pytest.mark.parametrize(
    ("argv", "code", "says"),
    [
        (["submit", "--bundle", "/nonexistent"], 2, "is not a bundle folder"),
        (["investigate", "/nonexistent", "--out", "/tmp/never"], 2, "not a bundle"),
        (["bench", "diagnosis", "/nonexistent"], 2, "is not a folder of bundles"),
        (["incidents", "show"], 2, "needs an incident id"),
        (["emit-mcl", "/nonexistent.yaml"], 2, "is not a file"),
        (["verify", "--attestation", "/nonexistent.json"], None, "nonexistent"),
    ],
)
def test_one_readable_line(argv: list[str], code: int | None, says: str, capsys: pytest.CaptureFixture[str]) -> None:
    result = main(argv)
    err = capsys.readouterr().err
    assert result != 0 and (code is None or result == code)
    assert says in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_bad_setting_is_named(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MODELGUARD_KAFKA_SESSION_TIMEOUT_MS", "soon")
    assert main(["stack", "status"]) != 0
    err = capsys.readouterr().err
    assert "MODELGUARD_KAFKA_SESSION_TIMEOUT_MS must be an integer" in err and "Traceback" not in err


CHURN = Path(__file__).resolve().parents[3] / "fixtures" / "scenarios" / "churn-monthly-spend"


def copied_bundle(tmp_path: Path) -> Path:
    import shutil

    return Path(shutil.copytree(CHURN, tmp_path / "bundle"))


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    result = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return result, err.strip()


def test_a_ragged_csv_is_refused_on_load_naming_file_and_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = copied_bundle(tmp_path)
    eval_csv = bundle / "data" / "incident" / "eval.csv"
    lines = eval_csv.read_text().splitlines()
    lines[2] += ",1,2"
    eval_csv.write_text("\n".join(lines) + "\n")
    columns = len(lines[0].split(","))
    for argv in (["investigate", str(bundle), "--out", str(tmp_path / "out")], ["submit", "--bundle", str(bundle)]):
        code, err = run(argv, capsys)
        assert code == 2
        assert err.endswith(f"data/incident/eval.csv: row 3 has {columns + 2} cells, the header {columns}")


def test_a_window_without_the_label_column_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = copied_bundle(tmp_path)
    train = bundle / "data" / "approval" / "train.csv"
    header, *rows = train.read_text().splitlines()
    label = next(
        line.split(":", 1)[1].strip()
        for line in (bundle / "bundle.yaml").read_text().splitlines()
        if line.strip().startswith("label:")
    )
    train.write_text("\n".join([header.replace(label, "outcome"), *rows]) + "\n")
    code, err = run(["investigate", str(bundle), "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and err.endswith(f"data/approval/train.csv: no label column {label!r} in the header")


def test_yaml_errors_say_file_line_and_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    change = tmp_path / "change.yaml"
    change.write_text("urn: x\nfield: [a, b\nchange: drop\n")
    code, err = run(["emit-mcl", str(change)], capsys)
    assert code == 2 and f"{change}:3:" in err and "not YAML" in err
    bundle = copied_bundle(tmp_path)
    (bundle / "bundle.yaml").write_text("name: broken\ngate: {metric: f1\n")
    code, err = run(["submit", "--bundle", str(bundle)], capsys)
    assert code == 2 and f"{bundle / 'bundle.yaml'}:3:1: not YAML" in err


@pytest.mark.parametrize("argv", [["incidents", "list"], ["verify"], ["replay"], ["republish", "--dry-run"]])
def test_commands_that_need_a_home_say_so_and_create_none(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run(argv, capsys)
    assert code == 2 and "nothing has run from" in err
    assert not (tmp_path / "home").exists()
