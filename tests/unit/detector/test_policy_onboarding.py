"""Onboarding a model without a redeploy: a policy sent by the model's CI (checked against the central policy,
pinned by digest) and the platform's policy folder, read again when it changes."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
import yaml

from libs.policy.effective import read_central_policy
from libs.policy.model_policies.onboarding import OnboardingPolicy
from libs.policy.model_policies.pins import PinConflict, PolicyPins
from libs.policy.model_policies.submission import NotPermitted, SubmissionRefused, checked_submission
from libs.policy.model_policy import parse_policy
from libs.state.sqlite_state import SqliteState
from services.detector.policy_catalog import PolicyCatalog, PolicyFolder

MODEL = "urn:li:mlModel:(urn:li:dataPlatform:sagemaker,parcel-eta-gbm,PROD)"
OTHER = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,churn-model-v3,PROD)"
OPEN = OnboardingPolicy(submitted_policies_for=("urn:li:mlModel:(urn:li:dataPlatform:sagemaker,*",), max_tolerance=0.1)


def _model_policy(**changes: Any) -> dict[str, Any]:
    """What a logistics team would write for its ETA regressor (its own domain, metric and commands)."""
    document: dict[str, Any] = {
        "name": "parcel-eta",
        "gate": {"metric": "mae", "direction": "lower_is_better", "tolerance": 0.05},
        "workspace": {
            "predict": [
                "python",
                "-m",
                "eta.serve",
                "--fit",
                "{train}",
                "--rows",
                "{features}",
                "--to",
                "{predictions}",
            ],
            "feature_modules": ["eta/features.py"],
            "label": "minutes_late",
            "repair_paths": ["eta/*.py"],
            "timeout_s": 120,
        },
    }
    document.update(changes)
    return document


def _raw(document: dict[str, Any]) -> bytes:
    return yaml.safe_dump(document).encode()


@pytest.fixture
def central() -> dict[str, Any]:
    return read_central_policy()


def test_a_submitted_policy_takes_every_other_section_from_the_central_policy(central: dict[str, Any]) -> None:
    submitted = checked_submission(_raw(_model_policy()), MODEL, central, OPEN)
    effective = yaml.safe_load(submitted.document)
    assert effective["applies_to"] == [MODEL] and effective["name"] == "parcel-eta"
    for section in ("diagnosis", "repair", "sandbox", "validation", "ci"):
        assert effective[section] == (central[section] or {}), section
    assert parse_policy(submitted.document, "x") == submitted.policy
    assert submitted.policy.gate.metric == "mae"


@pytest.mark.parametrize(
    ("changes", "refusal"),
    [
        ({"sandbox": {"allow_unconfined": True}}, "sandbox: set by the platform's central policy"),
        ({"validation": {"require_predict": False}}, "validation: set by the platform's central policy"),
        ({"ci": {"outcomes": {"abstained": "pass"}}}, "ci: set by the platform's central policy"),
        ({"repair": {"permitted_paths": ["**"]}}, "repair: set by the platform's central policy"),
        ({"applies_to": ["*"]}, "applies_to must be absent or exactly"),
        ({"gate": {"metric": "mae", "direction": "lower_is_better", "tolerance": 0.5}}, "wider than the central"),
        ({"gate": {"metric": "mae", "direction": "higher_is_better", "tolerance": 0.05}}, "gate:"),
        ({"workspace": {"label": "y"}}, "workspace"),
    ],
)
def test_a_submission_that_would_widen_the_central_policy_or_is_wrong_is_refused_with_the_reason(
    central: dict[str, Any], changes: dict[str, Any], refusal: str
) -> None:
    with pytest.raises(SubmissionRefused, match=refusal.replace("(", r"\(").replace("[", r"\[")):
        checked_submission(_raw(_model_policy(**changes)), MODEL, central, OPEN)


def test_only_models_the_central_policy_names_may_send_a_policy(central: dict[str, Any]) -> None:
    with pytest.raises(NotPermitted, match="submitted_policies_for does not match"):
        checked_submission(_raw(_model_policy()), OTHER, central, OPEN)
    with pytest.raises(NotPermitted):
        checked_submission(_raw(_model_policy()), MODEL, central, OnboardingPolicy())


@pytest.mark.parametrize(
    ("raw", "refusal"),
    [
        (b"gate: &g {metric: mae}\nworkspace: *g\n", "aliases are not accepted"),
        (b"- a list\n", "a policy is a mapping"),
        (b"gate: [unclosed\n", "not YAML"),
        (b"name: " + b"x" * 70_000 + b"\n", "at most 65536 bytes"),
        (b"gate: " + b"[" * 5_000 + b"]" * 5_000 + b"\n", "nested past the parser's limit"),
        (b"gate: " + b"{a: " * 3_000 + b"1" + b"}" * 3_000 + b"\n", "nested past the parser's limit"),
        (b"gate:\n" + b"- " * 5_000 + b"x\n", "nested past the parser's limit"),
    ],
)
def test_hostile_or_broken_bytes_are_refused_in_one_line(central: dict[str, Any], raw: bytes, refusal: str) -> None:
    with pytest.raises(SubmissionRefused, match=refusal) as refused:
        checked_submission(raw, MODEL, central, OPEN)
    assert "\n" not in str(refused.value)


def _catalog(tmp_path: Path, central: dict[str, Any], onboarding: OnboardingPolicy = OPEN) -> PolicyCatalog:
    folder = tmp_path / "policies"
    folder.mkdir(exist_ok=True)
    return PolicyCatalog(
        PolicyFolder(folder), PolicyPins.of(SqliteState(lambda service: tmp_path / service)), central, onboarding
    )


def test_the_first_submission_is_pinned_and_a_pull_request_cannot_loosen_it(
    tmp_path: Path, central: dict[str, Any]
) -> None:
    catalog = _catalog(tmp_path, central)
    assert catalog.policy_for(MODEL) is None
    first = catalog.submit(MODEL, _raw(_model_policy()))
    assert first.status == "pinned" and first.digest
    # the same policy written differently (key order, flow style) is the same pin
    reordered = yaml.safe_dump(_model_policy(), sort_keys=False, default_flow_style=True).encode()
    assert catalog.submit(MODEL, reordered).status == "already_pinned"
    loosened = _model_policy(gate={"metric": "mae", "direction": "lower_is_better", "tolerance": 0.09})
    with pytest.raises(PinConflict, match=rf"pinned to policy sha256:{first.digest[:12]}"):
        catalog.submit(MODEL, _raw(loosened))
    loaded = catalog.policy_for(MODEL)
    assert loaded is not None and loaded.policy.gate.tolerance == 0.05
    assert loaded.origin == f"submitted sha256:{first.digest[:12]}"

    reopened = _catalog(tmp_path, central)  # a restarted detector keeps the pin
    assert reopened.policy_for(MODEL) == loaded
    assert reopened.pins is not None and reopened.pins.unpin(MODEL)
    assert reopened.submit(MODEL, _raw(loosened)).status == "pinned"


def test_a_pin_is_checked_again_against_a_central_policy_tightened_since(
    tmp_path: Path, central: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    _catalog(tmp_path, central).submit(MODEL, _raw(_model_policy()))
    tightened = OnboardingPolicy(submitted_policies_for=OPEN.submitted_policies_for, max_tolerance=0.01)
    with caplog.at_level(logging.WARNING, "modelguard.detector.policies"):
        assert _catalog(tmp_path, central, tightened).policy_for(MODEL) is None
    assert "no longer fits the central policy" in caplog.text and "wider than" in caplog.text


def _platform_policy(urn: str, tolerance: float) -> bytes:
    document = _model_policy(
        applies_to=[urn], gate={"metric": "mae", "direction": "lower_is_better", "tolerance": tolerance}
    )
    return _raw(document | {"diagnosis": {}, "repair": {}, "sandbox": {}})


def test_the_platform_folder_is_read_again_when_it_changes_and_wins_over_a_pin(
    tmp_path: Path, central: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    catalog = _catalog(tmp_path, central)
    catalog.submit(MODEL, _raw(_model_policy()))
    folder = tmp_path / "policies"
    assert catalog.policy_for(OTHER) is None

    (folder / "churn.yaml").write_bytes(_platform_policy(OTHER, 0.02))
    (folder / "eta.yaml").write_bytes(_platform_policy(MODEL, 0.03))
    assert (loaded := catalog.policy_for(OTHER)) is not None and loaded.origin == "churn.yaml"
    assert (eta := catalog.policy_for(MODEL)) is not None and eta.policy.gate.tolerance == 0.03, "the folder wins"
    assert catalog.submit(MODEL, _raw(_model_policy())).status == "platform"

    with caplog.at_level(logging.WARNING, "modelguard.detector.policies"):
        (folder / "churn.yaml").write_text("gate: [broken\n")
        assert (kept := catalog.policy_for(OTHER)) is not None and kept.policy.gate.tolerance == 0.02
        catalog.policy_for(OTHER)
    assert caplog.text.count("stay in force") == 1, "a broken edit is reported once"

    (folder / "churn.yaml").unlink()
    assert catalog.policy_for(OTHER) is None
    (folder / "eta.yaml").unlink()
    assert (pinned := catalog.policy_for(MODEL)) is not None and pinned.origin.startswith("submitted sha256:")


def test_the_platform_lists_and_removes_pins_with_the_cli(
    tmp_path: Path, central: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from libs.settings import load_settings
    from libs.state.open_state import state_database
    from modelguard.cli import main

    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))
    assert main(["policy", "pins"]) == 2 and "no pinned policies" in capsys.readouterr().err
    pins = PolicyPins.of(state_database(load_settings()))
    first = checked_submission(_raw(_model_policy()), MODEL, central, OPEN)
    pins.pin(first)
    assert main(["policy", "pins"]) == 0
    assert f"{MODEL}  sha256:{first.digest[:12]}  pinned " in capsys.readouterr().out
    assert main(["policy", "unpin", MODEL]) == 0 and pins.pinned(MODEL) is None
    assert main(["policy", "unpin", MODEL]) == 2 and "has no pinned policy" in capsys.readouterr().err
