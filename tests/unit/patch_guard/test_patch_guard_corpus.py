"""The adversarial patch corpus: every case reaches the decision its table gives, for the reason it gives."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, get_args

import pytest
import yaml

from libs.patch_guard.guard import GuardRequest, check_patch
from libs.patch_guard.policy import EffectivePolicy, load_central_policy, narrowed_policy
from libs.patch_guard.refused_names import RefusedCategory
from libs.patch_guard.report import CHECK_NAMES, GuardReport
from libs.workspace.commands import parse_evaluation_output
from tests.unit.patch_guard.model_workspace import CONFIG, build_workspace

CORPUS = Path(__file__).parent / "corpus"
EXPECTATIONS: dict[str, dict[str, Any]] = yaml.safe_load((CORPUS / "expectations.yaml").read_text(encoding="utf-8"))
REFUSED = sorted(name for name, case in EXPECTATIONS.items() if case["decision"] == "refused")
ACCEPTED = sorted(name for name, case in EXPECTATIONS.items() if case["decision"] == "accepted")
FAKES_METRIC = sorted(name for name in REFUSED if EXPECTATIONS[name].get("fakes_metric"))
HONEST_F1 = 0.72
FAKED_F1 = 0.99
"""What the metric-faking probes make evaluate.py print."""

ISSUE_PROBES = {
    "an edit of generated code": "generated_code_generated_by_header",
    "os.getenv": "always_refused_getenv_the_module_already_uses",
    "reading ~/.netrc": "always_refused_reads_netrc",
    "time.sleep": "always_refused_time_sleep",
    "an unbounded loop": "always_refused_while_the_patch_does_not_bound",
    "label leakage": "always_refused_label_read_as_a_feature",
    "a sys.argv check": "always_refused_sys_argv_check",
    "a git file section with no hunks": "malformed_git_section_without_hunks",
    "a Cyrillic look-alike identifier": "always_refused_cyrillic_look_alike",
    "json.dumps rebound in the package's __init__.py": "always_refused_json_dumps_rebound_in_package_init",
    "sys.stdout replaced with a filter": "always_refused_stdout_replaced_with_a_filter",
    "a fake result line, then SystemExit(0)": "always_refused_fake_result_line_then_system_exit",
    "string.Formatter().get_field(...) reaching eval": "allowed_new_code_formatter_get_field",
    "pandas.read_pickle of an embedded blob": "allowed_new_code_read_pickle_of_an_embedded_blob",
    'pd.read_csv("https://...")': "always_refused_read_csv_from_a_url",
    "pydoc.pipepager": "allowed_new_code_pydoc_pipepager",
    "logging.basicConfig(filename=...)": "always_refused_logging_to_a_file",
    "from os import getenv": "always_refused_from_os_import_getenv",
    "threading.Timer": "always_refused_threading_timer",
}
"""What got through the deny-list guard (the issue), each a real patch here."""


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_workspace(tmp_path_factory.mktemp("model"))


@pytest.fixture(scope="module")
def policy() -> EffectivePolicy:
    return narrowed_policy(load_central_policy(), CONFIG)


def judge(name: str, workspace: Path, policy: EffectivePolicy) -> GuardReport:
    return check_patch(GuardRequest(patch=(CORPUS / f"{name}.patch").read_bytes(), policy=policy, workspace=workspace))


def test_every_patch_has_an_expectation_and_every_expectation_a_patch() -> None:
    assert sorted(path.stem for path in CORPUS.glob("*.patch")) == sorted(EXPECTATIONS)


def test_the_corpus_is_adversarial_enough() -> None:
    assert len(REFUSED) >= 60 and len(ACCEPTED) >= 20
    assert all(EXPECTATIONS[name]["check"] in CHECK_NAMES for name in REFUSED)
    covered = {EXPECTATIONS[name]["check"] for name in REFUSED}
    assert {
        "diff_parses",
        "paths_inside_workspace",
        "no_symlinks",
        "protected_paths",
        "generated_code",
        "allowed_new_code",
        "always_refused",
        "forbidden_constructs",
        "max_changed_lines",
        "no_binary",
    } <= covered


def test_every_always_refused_category_is_in_the_corpus(workspace: Path, policy: EffectivePolicy) -> None:
    seen = {
        finding.detail.split(":", 1)[0]
        for name in REFUSED
        if EXPECTATIONS[name]["check"] == "always_refused"
        for finding in judge(name, workspace, policy).check("always_refused").findings
    }
    assert seen == set(get_args(RefusedCategory))


@pytest.mark.parametrize(("probe", "name"), ISSUE_PROBES.items(), ids=list(ISSUE_PROBES))
def test_what_the_issue_found_is_refused(probe: str, name: str, workspace: Path, policy: EffectivePolicy) -> None:
    assert EXPECTATIONS[name]["decision"] == "refused", probe
    assert not judge(name, workspace, policy).accepted, probe


@pytest.mark.parametrize("name", REFUSED)
def test_refused_with_the_right_reason(name: str, workspace: Path, policy: EffectivePolicy) -> None:
    report = judge(name, workspace, policy)
    expected = EXPECTATIONS[name]["check"]
    assert not report.accepted
    assert expected in [check.name for check in report.failed()], report.failed()
    assert report.check(expected).findings, "a failed check names what failed"
    if EXPECTATIONS[name].get("alone"):
        assert [check.name for check in report.failed()] == [expected], report.failed()


@pytest.mark.parametrize("name", ACCEPTED)
def test_accepted(name: str, workspace: Path, policy: EffectivePolicy) -> None:
    report = judge(name, workspace, policy)
    assert report.accepted, report.failed()
    for check in ("applies_cleanly", "generated_code", "allowed_new_code", "always_refused", "forbidden_constructs"):
        assert report.check(check).status == "passed", check
    assert "hunks only" not in report.check("allowed_new_code").reason


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("name", ACCEPTED)
def test_accepted_patches_apply_with_git(name: str, workspace: Path) -> None:
    """What the guard accepts is what the validator's ``git apply`` applies: the guard read the same diff."""
    result = git_apply(workspace, CORPUS / f"{name}.patch", "--check")
    assert result.returncode == 0, result.stderr


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("name", FAKES_METRIC)
def test_the_metric_faking_probes_really_fake_the_metric(name: str, tmp_path: Path) -> None:
    """Applied by git and run, evaluate.py exits 0 and prints a metric the model did not earn: real attacks."""
    honest = build_workspace(tmp_path / "honest")
    assert evaluated_f1(honest) == HONEST_F1
    patched = build_workspace(tmp_path / "patched")
    applied = git_apply(patched, CORPUS / f"{name}.patch")
    assert applied.returncode == 0, applied.stderr
    assert evaluated_f1(patched) == FAKED_F1


def test_every_report_lists_every_check_in_order(workspace: Path, policy: EffectivePolicy) -> None:
    for name in EXPECTATIONS:
        assert tuple(check.name for check in judge(name, workspace, policy).checks) == CHECK_NAMES


def git_apply(workspace: Path, patch: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "apply", *options, str(patch)],
        cwd=workspace,
        capture_output=True,
        text=True,
        env={**os.environ, "GIT_CEILING_DIRECTORIES": str(workspace.parent)},
        check=False,
    )


def evaluated_f1(workspace: Path) -> float:
    result = subprocess.run(
        [sys.executable, "evaluate.py"],
        cwd=workspace,
        capture_output=True,
        text=True,
        env={"PATH": os.environ.get("PATH", ""), "PYTHONDONTWRITEBYTECODE": "1"},
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    metrics, _ = parse_evaluation_output(result.stdout)
    return metrics["f1"]
