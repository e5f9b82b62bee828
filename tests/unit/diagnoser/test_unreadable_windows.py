"""Data windows pandas cannot read as a table. The windows' CSVs come from outside (a pull request, an upstream
extract) and are read by the diagnosis's profiling (``profile_windows``) and by its data interventions
(``localise_data_fault``). A file with no columns, a row longer than the header, an unterminated quote or binary
bytes made pandas raise there, and the diagnosis stopped. Now the data evidence is reported as unavailable, naming
the file as the window names it and pandas' reason, and its facts are unmeasured: the diagnosis reads exactly the
facts it reads on the same incident with readable windows, less those of the data evidence.

Each broken form below was measured to make pandas raise (and the readable oddities below them not to)."""

from __future__ import annotations

import gzip
import random
from pathlib import Path
from typing import Any

import pytest

from contracts.events.diagnosis import DiagnosisAbstained, DiagnosisCompleted
from libs.canonical_json import canonical_bytes
from libs.policy.diagnosis import central_diagnosis_policy
from services.diagnoser.catalogue.facts import MEASURED_BY, Fact, read_facts, unmeasured_facts
from services.diagnoser.diagnosis import IncidentDiagnosis, diagnose_inputs
from services.diagnoser.evidence import EvidenceKind
from services.diagnoser.inputs import CounterfactualMetrics, DataWindow, IncidentInputs
from services.diagnoser.markdown_report import render_markdown
from services.diagnoser.profiling.frames import UnreadableWindows, read_text_frame, read_window_files
from services.diagnoser.profiling.windows import profile_windows
from services.diagnoser.report import diagnosis_event
from services.diagnoser.trials.parallelism import trial_runner
from tests.support import toy_repository as toy
from tests.support.sample_events import collected

SOURCE_DATA = (
    EvidenceKind.SOURCE_SCHEMA,
    EvidenceKind.SOURCE_TYPES,
    EvidenceKind.SOURCE_CATEGORIES,
    EvidenceKind.SOURCE_QUALITY,
    EvidenceKind.SOURCE_DRIFT,
    EvidenceKind.LABEL_SHIFT,
)
DATA_FACTS = frozenset(fact for kind in SOURCE_DATA for fact in MEASURED_BY.get(kind, ())) | {Fact.DATA_FAULT}
DATA_DROP = CounterfactualMetrics(
    base_on_approval=0.8, base_on_incident=0.5, candidate_on_approval=0.8, candidate_on_incident=0.5
)
CODE_DROP = CounterfactualMetrics(
    base_on_approval=0.8, base_on_incident=0.8, candidate_on_approval=0.5, candidate_on_incident=0.5
)
PLACES = [("incident", "train.csv"), ("incident", "eval.csv"), ("approval", "train.csv"), ("approval", "eval.csv")]


def _good() -> bytes:
    return str(toy.customers(31).to_csv(index=False)).encode()


def _lines() -> list[bytes]:
    return _good().splitlines(keepends=True)


BROKEN: dict[str, tuple[bytes, str]] = {
    # name: (the file's bytes, what pandas says)
    "zero bytes": (b"", "No columns to parse from file"),
    "blank lines only": (b"\n\r\n\n", "No columns to parse from file"),
    "a ragged row near the top": (
        b"".join([*_lines()[:3], b"88.5,3,2,plus,0,extra\n", *_lines()[3:]]),
        "Expected 5 fields in line 4, saw 6",
    ),
    "a ragged row at the end": (_good() + b"1,2,3,4,5,6,7,8\n", "Expected 5 fields in line 1202, saw 8"),
    "cut inside a quoted cell": (b"".join(_lines()[:-1]) + b'12.5,4,3,"pl', "EOF inside string starting at row 1200"),
    "a quote opened early, never closed": (
        b"".join([*_lines()[:5], b'"' + _lines()[5], *_lines()[6:]]),
        "EOF inside string starting at row 5",
    ),
    "an unterminated quote in the header": (b'"' + _good(), "EOF inside string starting at row 0"),
    "a gzip-compressed extract": (gzip.compress(_good(), mtime=0, compresslevel=1), "Expected 1 fields in line 5"),
    "random bytes": (random.Random(7).randbytes(4096), "Expected 1 fields in line 7, saw 2"),
}
READABLE: dict[str, bytes] = {
    "a header only": _lines()[0],
    "cut mid-row (a short last row)": _good()[: len(_good()) // 2],
    "a trailing comma on every row": _good().replace(b"\n", b",\n"),
    "Latin-1 text": _good().replace(b"plus", b"pl\xfcs", 7),
    # by chance a table to pandas (50 rows of 7 columns of bytes): profiled, and every read column is gone from it
    "a gzip-compressed extract, level 9": gzip.compress(_good(), mtime=0),
}


def _inputs(
    tmp_path: Path,
    broken: dict[tuple[str, str], bytes] | None = None,
    metrics: CounterfactualMetrics = DATA_DROP,
    with_trials: bool = False,
) -> IncidentInputs:
    """The toy repository with readable windows, then each file of ``broken`` overwritten with its bytes."""
    case = toy.toy_inputs(tmp_path, workspace=toy.NO_FEATURES_COMMAND)
    for (window, name), data in (broken or {}).items():
        (tmp_path / window / name).write_bytes(data)
    trials = trial_runner(toy.NO_FEATURES_COMMAND, toy.GATE, central_diagnosis_policy()) if with_trials else None
    return IncidentInputs(
        base_dir=case.base_dir,
        candidate_dir=case.candidate_dir,
        approval=case.approval,
        incident=case.incident,
        workspace=case.workspace,
        gate=case.gate,
        metrics=metrics,
        trials=trials,
    )


def _evidence(outcome: IncidentDiagnosis) -> dict[str, dict[str, Any]]:
    return {str(item.kind): item.values for item in outcome.evidence}


def _assert_unreadable(outcome: IncidentDiagnosis, tmp_path: Path, name: str, says: str) -> None:
    found = _evidence(outcome)
    for kind in SOURCE_DATA:
        values = found[kind]
        assert values["available"] is False, kind
        assert values["reason"].startswith(f"{name} cannot be read as a table: "), values["reason"]
        assert says in values["reason"] and str(tmp_path) not in values["reason"]
        assert values["unreadable"] == [{"file": name, "error": values["reason"].split(": ", 1)[1]}]
    assert {"total", "months", "visits", "plan"} <= set(found[EvidenceKind.READ_COLUMNS]["columns"])


@pytest.mark.parametrize("form", BROKEN)
@pytest.mark.parametrize(("window", "file"), PLACES)
def test_a_window_pandas_cannot_read_leaves_the_data_evidence_unavailable(
    tmp_path: Path, form: str, window: str, file: str
) -> None:
    data, says = BROKEN[form]
    outcome = diagnose_inputs(_inputs(tmp_path, {(window, file): data}), central_diagnosis_policy())
    _assert_unreadable(outcome, tmp_path, f"{window}/{file}", says)
    assert not DATA_FACTS & set(outcome.facts)
    assert DATA_FACTS - {Fact.DATA_FAULT} <= unmeasured_facts(list(outcome.evidence))
    assert outcome.decision == "abstained"  # a data drop, and nothing measured says which fault of the data


@pytest.mark.parametrize("form", READABLE)
def test_readable_oddities_are_still_profiled(tmp_path: Path, form: str) -> None:
    outcome = diagnose_inputs(
        _inputs(tmp_path, {("incident", "train.csv"): READABLE[form]}), central_diagnosis_policy()
    )
    found = _evidence(outcome)
    assert all(found[kind].get("available", True) for kind in SOURCE_DATA if kind != EvidenceKind.LABEL_SHIFT)
    assert found[EvidenceKind.LABEL_SHIFT]["available"] is True


@pytest.mark.parametrize("metrics", [DATA_DROP, CODE_DROP], ids=["data drop", "code drop"])
def test_the_diagnosis_reads_only_the_other_evidence(tmp_path: Path, metrics: CounterfactualMetrics) -> None:
    """The same incident with readable windows and with the incident's training file broken: the facts read off
    everything but the data evidence are the same, and no fact of the data evidence is read at all."""
    policy = central_diagnosis_policy()
    readable = diagnose_inputs(_inputs(tmp_path / "readable", metrics=metrics), policy)
    broken = {("incident", "train.csv"): BROKEN["a ragged row at the end"][0]}
    unreadable = diagnose_inputs(_inputs(tmp_path / "broken", broken, metrics=metrics), policy)
    assert {fact for fact in readable.facts if fact in DATA_FACTS}  # readable windows do give data facts
    assert unreadable.facts == {fact: value for fact, value in readable.facts.items() if fact not in DATA_FACTS}
    # each data hypothesis reports that less of its support could be measured
    before = {h.name.value: h.measured_share for h in readable.hypotheses}
    after = {h.name.value: h.measured_share for h in unreadable.hypotheses}
    for name in ("upstream_schema_change", "type_conversion", "category_mapping", "source_data_quality"):
        assert after[name] < before[name], name
    assert after["covariate_drift"] < before["covariate_drift"] and after["label_shift"] < before["label_shift"]


def test_every_unreadable_file_is_named_and_the_event_and_report_say_so(tmp_path: Path) -> None:
    broken = {("incident", "train.csv"): b"", ("incident", "eval.csv"): BROKEN["a ragged row near the top"][0]}
    outcome = diagnose_inputs(_inputs(tmp_path, broken), central_diagnosis_policy())
    reason = _evidence(outcome)[EvidenceKind.SOURCE_DRIFT]["reason"]
    assert reason == (
        "incident/train.csv cannot be read as a table: No columns to parse from file; incident/eval.csv cannot be "
        "read as a table: Error tokenizing data. C error: Expected 5 fields in line 4, saw 6"
    )
    event = diagnosis_event(collected(), outcome)
    assert isinstance(event, DiagnosisAbstained | DiagnosisCompleted)
    canonical_bytes(event.model_dump(mode="json"))  # a valid, signable event
    assert "## Not computed" in render_markdown(outcome)
    assert "- data.source_schema: incident/train.csv cannot be read as a table" in event.report.markdown
    assert str(tmp_path) not in event.model_dump_json()


def test_the_data_interventions_are_unavailable_too_and_nothing_runs(tmp_path: Path) -> None:
    """A drop that follows the data sends the diagnosis to its data interventions, which read the windows with pandas
    before any trial runs."""
    broken = {("incident", "train.csv"): BROKEN["cut inside a quoted cell"][0]}
    outcome = diagnose_inputs(_inputs(tmp_path, broken, with_trials=True), central_diagnosis_policy())
    interventions = _evidence(outcome)[EvidenceKind.DATA_INTERVENTIONS]
    assert interventions["available"] is False
    assert interventions["reason"] == (
        "incident/train.csv cannot be read as a table: Error tokenizing data. C error: EOF inside string starting "
        "at row 1200"
    )
    assert outcome.evaluations == 0 and outcome.decision == "abstained"
    assert not set(MEASURED_BY[EvidenceKind.DATA_INTERVENTIONS]) & {Fact(f) for f in outcome.facts}


def test_profile_windows_names_the_files_it_cannot_read(tmp_path: Path) -> None:
    folders = {name: tmp_path / name for name in ("approval", "incident")}
    for folder in folders.values():
        folder.mkdir()
        toy.customers(1).to_csv(folder / "train.csv", index=False)
        toy.customers(2).to_csv(folder / "eval.csv", index=False)
    (folders["approval"] / "eval.csv").write_bytes(BROKEN["random bytes"][0])
    windows = [DataWindow(name, folder / "train.csv", folder / "eval.csv") for name, folder in folders.items()]  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^approval/eval.csv cannot be read as a table: ") as raised:
        profile_windows(windows[0], windows[1], 0.9, 20)
    assert [file.name for file in getattr(raised.value, "files", ())] == ["approval/eval.csv"]
    assert str(tmp_path) not in str(raised.value)


def test_unavailable_source_data_gives_no_fact_and_leaves_its_facts_unmeasured(tmp_path: Path) -> None:
    outcome = diagnose_inputs(_inputs(tmp_path, {("approval", "eval.csv"): b""}), central_diagnosis_policy())
    items = [item for item in outcome.evidence if item.kind in SOURCE_DATA]
    assert [item.kind for item in items] == list(SOURCE_DATA)
    assert read_facts(items) == {}
    assert unmeasured_facts(items) == DATA_FACTS - {Fact.DATA_FAULT}
    assert all(item.strength == 0.0 and item.values["available"] is False for item in items)


def test_a_window_file_past_the_size_bound_is_unreadable_without_being_read(tmp_path: Path) -> None:
    small, large = tmp_path / "train.csv", tmp_path / "eval.csv"
    small.write_text("a,b\n1,2\n")
    large.write_text("a,b\n" + "1,2\n" * 100)
    read: list[Path] = []

    def reader(path: Path) -> Any:
        read.append(path)
        return read_text_frame(path)

    with pytest.raises(UnreadableWindows) as unreadable:
        read_window_files([("incident/train.csv", small), ("incident/eval.csv", large)], reader, max_bytes=64)
    assert unreadable.value.as_dicts() == [
        {"file": "incident/eval.csv", "error": f"{large.stat().st_size} bytes, more than the 64 a window file may be"}
    ]
    assert read == [small]
