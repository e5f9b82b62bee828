"""`modelguard policy check-central FILE`: a whole central policy read, before a deploy, by every reader of it the
services run, each pointed at FILE as MODELGUARD_CENTRAL_POLICY would point it. One line per reader: ok, or FAIL
with the section and the reader's own words; notes for sections left to the code's defaults and for sections no
service reads. Exit 0 when every reader accepts it, 1 when one refuses, 2 (one line on stderr) when FILE is not a
readable YAML mapping."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
import yaml

from modelguard.cli import main

REPO = Path(__file__).resolve().parents[3]
POLICY = REPO / "policy" / "central.yaml"
EFFECTIVE = "diagnosis, repair, sandbox, validation, ci"
"""The label of the reader of a model's effective policy, which carries these five sections."""
READER_LABELS = (
    "delivery",
    "repair",
    "diagnosis",
    "sandbox",
    "workspace_images",
    "onboarding",
    "mcl_intake",
    EFFECTIVE,
)


def _document() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(POLICY.read_text(encoding="utf-8"))
    return document


def _written(folder: Path, document: object, name: str = "central-policy.yaml") -> Path:
    path = folder / name
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def _check(path: Path | str, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str], str]:
    code = main(["policy", "check-central", str(path)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out.splitlines(), err


def _lines(out: list[str], status: str) -> dict[str, str]:
    """The report's lines of one status (ok, FAIL, note) by label: ``FAIL  sandbox: <the reader's words>``."""
    found = {}
    for line in out:
        head, _, rest = line.partition(" ")
        if head == status:
            label, _, detail = rest.strip().partition(": ")
            found[label] = detail
    return found


def test_the_repository_s_central_policy_passes_every_reader(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _check(POLICY, capsys)
    assert (code, err) == (0, "")
    assert list(_lines(out, "ok")) == list(READER_LABELS), "one line per reader, in order"
    assert _lines(out, "ok")["delivery"] == "libs.bus.delivery_policy.default_delivery_policy", "the reader, named"
    assert _lines(out, "FAIL") == {} and _lines(out, "note") == {}, "every section given, none unknown"
    assert out[-1] == f"{POLICY}: the {len(READER_LABELS)} readers of the central policy accept it"


BAD_FIELDS = {
    # section: (the change, the readers that refuse it, what their line says)
    "delivery": ({"delivery": {"max_attempts": 0}}, {"delivery"}, "delivery.max_attempts"),
    "sandbox": ({"sandbox": {"limits": {"cpu_s": 0}}}, {"sandbox", EFFECTIVE}, "sandbox.limits.cpu_s"),
    "sandbox unknown key": ({"sandbox": {"isolaton": "none"}}, {"sandbox", EFFECTIVE}, "sandbox.isolaton"),
    "repair": ({"repair": {**_document()["repair"], "max_files": 0}}, {"repair", EFFECTIVE}, "repair.max_files"),
    "diagnosis": (
        {"diagnosis": {**_document()["diagnosis"], "abstain_below": 2}},
        {"diagnosis", EFFECTIVE},
        "diagnosis.abstain_below",
    ),
    "validation": ({"validation": {"require_predict": "sometimes"}}, {EFFECTIVE}, "validation.require_predict"),
    "ci": ({"ci": {"outcomes": {"gate_passed": "maybe"}}}, {EFFECTIVE}, "ci.outcomes.gate_passed"),
    "workspace_images": (
        {"workspace_images": {"allowed": ["churn:latest"]}},
        {"workspace_images"},
        "workspace_images.allowed",
    ),
    "onboarding": ({"onboarding": {"max_tolerance": -1}}, {"onboarding"}, "onboarding.max_tolerance"),
    "mcl_intake": (
        {"mcl_intake": {"max_aspect_bytes": 0, "dead_letter_prefix_bytes": 4096}},
        {"mcl_intake"},
        "mcl_intake.max_aspect_bytes",
    ),
}


def test_every_section_of_the_repository_s_policy_has_a_bad_field_case() -> None:
    assert {case.split()[0] for case in BAD_FIELDS} == set(_document())


@pytest.mark.parametrize("case", sorted(BAD_FIELDS))
def test_a_bad_field_is_refused_by_the_readers_of_its_section_naming_it(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    change, refusing, says = BAD_FIELDS[case]
    path = _written(tmp_path, _document() | change)
    code, out, err = _check(path, capsys)
    assert (code, err) == (1, ""), "a reader's refusal is a check's finding, reported on stdout"
    failed = _lines(out, "FAIL")
    assert set(failed) == refusing
    assert all(says in detail for detail in failed.values()), failed
    assert set(_lines(out, "ok")) == set(READER_LABELS) - refusing, "the other readers still run and pass"
    assert out[-1] == f"{path}: {len(refusing)} of the {len(READER_LABELS)} readers of the central policy refuse it"


def test_every_failure_is_one_line_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each reader says what it refuses in one line, after the file's path, the MCL intake's too."""
    path = _written(tmp_path, _document() | {"mcl_intake": 5, "delivery": "often"})
    code, out, _ = _check(path, capsys)
    failed = _lines(out, "FAIL")
    assert code == 1 and set(failed) == {"mcl_intake", "delivery"}
    assert (
        failed["mcl_intake"] == f"{path}: mcl_intake: Input should be a valid dictionary or instance of MclIntakeLimits"
    )
    assert failed["delivery"] == f"{path}: the delivery section is a mapping"
    assert len(out) == len(READER_LABELS) + 1


def test_sections_left_out_take_the_code_s_defaults_and_are_noted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    defaulted = ("sandbox", "workspace_images", "delivery", "ci", "validation")
    document = {k: v for k, v in _document().items() if k not in defaulted} | {"onboarding": {}}
    code, out, _ = _check(_written(tmp_path, document), capsys)
    assert code == 0, "the services read it: each of these sections has defaults in code"
    notes = _lines(out, "note")
    assert set(notes) == {*defaulted, "onboarding"}
    assert notes["delivery"] == "not in the file: the services use the code's defaults"
    assert notes["onboarding"] == "empty: the services use the code's defaults"


def test_a_required_section_left_out_is_a_failure_not_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = {k: v for k, v in _document().items() if k not in ("repair", "diagnosis", "mcl_intake")}
    code, out, _ = _check(_written(tmp_path, document), capsys)
    assert code == 1
    assert {"repair", "diagnosis", "mcl_intake"} <= set(_lines(out, "FAIL"))
    assert not {"repair", "diagnosis", "mcl_intake"} & set(_lines(out, "note"))


def test_a_section_no_service_reads_is_noted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A misspelt section is read by no one: the services take the real one's defaults."""
    document = {("delivry" if k == "delivery" else k): v for k, v in _document().items()}
    code, out, _ = _check(_written(tmp_path, document), capsys)
    assert code == 0
    assert _lines(out, "note") == {
        "delivery": "not in the file: the services use the code's defaults",
        "delivry": "no service reads this section",
    }


BAD_INPUT = {
    "a missing file": (None, "cannot read the central policy"),
    "a directory": ("", "cannot read the central policy"),
    "not YAML": ("repair: [1, 2\n", "not YAML"),
    "a YAML list": ("- repair: {}\n- diagnosis: {}\n", "the central policy is a mapping"),
    "a single value": ("policy/central.yaml\n", "the central policy is a mapping"),
    "two documents": ("repair: {}\n---\nrepair: {}\n", "not YAML"),
    "not UTF-8": (b"repair: \xff\xfe\n", "not YAML"),
    "nested past the parser": ("a: " + "[" * 5000 + "]" * 5000 + "\n", "nested past the parser's limit"),
}


@pytest.mark.parametrize("shape", sorted(BAD_INPUT))
def test_a_file_that_is_not_a_readable_yaml_mapping_is_one_line_and_bad_input(
    shape: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, says = BAD_INPUT[shape]
    path = tmp_path / "central-policy.yaml"
    if shape == "a directory":
        path.mkdir()
    elif isinstance(text, bytes):
        path.write_bytes(text)
    elif text is not None:
        path.write_text(text, encoding="utf-8")
    code, out, err = _check(path, capsys)
    assert (code, out) == (2, [])
    [line] = err.splitlines()
    assert line.startswith("modelguard policy: ") and says in line and str(path) in line


def test_check_central_needs_the_file(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["policy", "check-central"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("modelguard policy: policy check-central needs the central policy file")


def test_the_file_checked_is_the_one_named_not_the_environment_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = _written(tmp_path, _document() | {"delivery": {"max_attempts": 0}}, "bad.yaml")
    monkeypatch.setenv("MODELGUARD_CENTRAL_POLICY", str(bad))
    code, out, _ = _check(POLICY, capsys)
    assert code == 0 and _lines(out, "FAIL") == {}
    monkeypatch.setenv("MODELGUARD_CENTRAL_POLICY", str(POLICY))
    code, out, _ = _check(bad, capsys)
    assert code == 1 and set(_lines(out, "FAIL")) == {"delivery"}


def _functions_reading_the_central_policy_file() -> set[str]:
    """``path:function`` of every function of libs/, services/ and modelguard/ that reads the central policy's file
    (calls read_central_policy_document), the check itself left out."""
    found = set()
    for folder in ("libs", "services", "modelguard"):
        for path in sorted((REPO / folder).rglob("*.py")):
            name = path.relative_to(REPO).as_posix()
            if name in ("libs/policy/central.py", "modelguard/central_policy_check.py"):
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef) and any(
                    isinstance(call, ast.Call) and getattr(call.func, "id", None) == "read_central_policy_document"
                    for call in ast.walk(node)
                ):
                    found.add(f"{name}:{node.name}")
    return found


RUN_BY_THE_CHECK = {
    "libs/bus/delivery_policy.py:_read": "default_delivery_policy",
    "libs/patch_guard/policy.py:load_central_policy": "load_central_policy",
    "libs/policy/diagnosis.py:central_diagnosis_policy": "central_diagnosis_policy",
    "libs/sandbox/limits.py:read_sandbox_policy": "default_sandbox_policy",
    "libs/sandbox/job/image_policy.py:_cached": "default_image_policy",
    "libs/policy/model_policies/onboarding.py:central_onboarding": "central_onboarding",
    "libs/datahub/mcl/intake_limits.py:central_mcl_limits": "central_mcl_limits",
    "libs/policy/effective.py:read_central_policy": "parse_policy",
}
"""Each function that reads the central policy's file, and the reader the check runs that runs it."""


def test_every_reader_of_the_central_policy_file_is_run_by_the_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert _functions_reading_the_central_policy_file() == set(RUN_BY_THE_CHECK), (
        "a function reads the central policy's file that the check does not know: add its reader to "
        "modelguard/central_policy_check.py's READERS, then here"
    )
    code, out, _ = _check(POLICY, capsys)
    named = " ".join(_lines(out, "ok").values())
    assert code == 0 and all(reader in named for reader in RUN_BY_THE_CHECK.values())


def test_without_the_example_model_the_check_says_it_cannot_run_and_nothing_of_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model's effective policy is built from the bundled churn scenario (in the image at /app/fixtures): without
    it the check fails in one line (exit 1, a failure outside the input), never a verdict on the file."""
    from modelguard import central_policy_check

    monkeypatch.setattr(central_policy_check, "EXAMPLE_MODEL", tmp_path / "absent")
    central_policy_check.example_model.cache_clear()
    try:
        code, out, err = _check(POLICY, capsys)
    finally:
        central_policy_check.example_model.cache_clear()
    assert (code, out) == (1, [])
    [line] = err.splitlines()
    assert line.startswith("modelguard policy: a model's effective policy cannot be built to check: ")
