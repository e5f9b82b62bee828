"""diagnose_inputs on every bundle of the public suite (``fixtures/scenarios/*/bundle.yaml``), compared with its
``expected.json``: the named hypothesis, or an abstention when the expected hypothesis is null (or the gate
passes). ``MODELGUARD_SUITE_DIR`` points the test at another folder of bundles (a holdout suite)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from libs.policy.diagnosis import central_diagnosis_policy
from services.diagnoser.diagnosis import diagnose_inputs
from services.diagnoser.markdown_report import render_markdown
from tests.support.bundle_inputs import bundle_inputs

SUITE = Path(os.environ.get("MODELGUARD_SUITE_DIR") or Path(__file__).resolve().parents[2] / "fixtures" / "scenarios")
BUNDLES = sorted(path.parent for path in SUITE.glob("*/bundle.yaml") if (path.parent / "expected.json").is_file())


@pytest.mark.skipif(not BUNDLES, reason=f"no bundles in {SUITE}")
@pytest.mark.parametrize("bundle", BUNDLES, ids=[bundle.name for bundle in BUNDLES])
def test_diagnosis_matches_the_expected_hypothesis(bundle: Path) -> None:
    expected = json.loads((bundle / "expected.json").read_text(encoding="utf-8"))
    outcome = diagnose_inputs(bundle_inputs(bundle), central_diagnosis_policy())
    report = render_markdown(outcome)
    if expected.get("hypothesis") is None:
        assert outcome.decision == "abstained", report
    else:
        assert outcome.decision == "diagnosed", report
        assert outcome.chosen_hypothesis == expected["hypothesis"], report
