"""The data-cause strategies on model repositories written by other people (``fixtures/repos/``): given the
repair hints the diagnosis gives, propose_repair proposes the named strategy's patch, the patch guard accepts
it against the candidate tree with the bundle's workspace config, and the bundle's own ``predict``, run by the
referee on the incident window with the patch applied, is back within the gate's tolerance of the baseline
(the base revision on the approval window).

Each case runs the model three times in the sandbox (about ten seconds each)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from contracts.events.diagnosis import ColumnRename, RepairHints
from libs.bundle.load import load_bundle
from libs.policy.effective import read_central_policy
from libs.workspace.data_windows import DataWindow
from libs.workspace.model_evaluation import evaluate_model
from services.repairer.handler import RepairProposal, propose_repair
from tests.support.sample_diagnosis import diagnosis_completed
from tests.support.typed_policy import repair_section

REPOS = Path(__file__).resolve().parents[3] / "fixtures" / "repos"
CASES: dict[str, tuple[str, RepairHints, str]] = {
    "freight-cost-text-amounts": (
        "type_conversion",
        RepairHints(text_numeric_columns=["quoted_amount"]),
        "numeric_coercion",
    ),
    "grocery-basket-null-visits": (
        "source_data_quality",
        RepairHints(null_columns=["visits_last_30d"]),
        "null_guard",
    ),
    "travel-insurance-new-plans": (
        "category_mapping",
        RepairHints(unseen_categories={"plan": ["Standard Flex", "Standard Plus"], "purchase_date": ["2025-06-01"]}),
        "unseen_category",
    ),
    "support-ticket-class-attr-rename": (
        "upstream_schema_change",
        RepairHints(renamed_columns=[ColumnRename(old="subject", new="ticket_title")]),
        "column_rename",
    ),
}


def _window(bundle: Any, name: str) -> DataWindow:
    return DataWindow(name=name, train=bundle.window_file(name, "train.csv"), eval=bundle.window_file(name, "eval.csv"))  # type: ignore[arg-type]


def _proposal(name: str) -> tuple[Any, RepairProposal]:
    hypothesis, hints, _ = CASES[name]
    bundle = load_bundle(REPOS / name)
    diagnosis = diagnosis_completed(hypothesis, confidence=0.9, hints=hints)
    result = propose_repair(
        diagnosis,
        bundle.tree("candidate"),
        repair_section(read_central_policy()["repair"]),
        bundle.spec.workspace,
        base_dir=bundle.tree("base"),
    )
    assert isinstance(result, RepairProposal), result
    return bundle, result


def _patched(tmp_path: Path, tree: Path, diff: str) -> Path:
    copy = tmp_path / "candidate"
    shutil.copytree(tree, copy)
    (tmp_path / "repair.patch").write_text(diff, encoding="utf-8")
    subprocess.run(["git", "apply", "--check", str(tmp_path / "repair.patch")], cwd=copy, check=True)
    subprocess.run(["git", "apply", str(tmp_path / "repair.patch")], cwd=copy, check=True)
    return copy


@pytest.mark.skipif(not REPOS.is_dir(), reason=f"the hand-made bundles are not in {REPOS}")
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_proposal_passes_the_guard_and_the_incident_window_recovers(name: str, tmp_path: Path) -> None:
    bundle, proposal = _proposal(name)
    assert proposal.strategy == CASES[name][2]
    assert proposal.guard.allowed, proposal.guard.violations
    spec = bundle.spec
    gate = spec.gate
    base = evaluate_model(bundle.tree("base"), _window(bundle, "approval"), spec.workspace, gate)
    baseline = base.metrics[gate.metric]
    before = evaluate_model(bundle.tree("candidate"), _window(bundle, "incident"), spec.workspace, gate)
    candidate = before.metrics[gate.metric]
    repaired = _patched(tmp_path, bundle.tree("candidate"), proposal.unified_diff)
    after = evaluate_model(repaired, _window(bundle, "incident"), spec.workspace, gate).metrics[gate.metric]
    sign = 1.0 if gate.direction == "higher_is_better" else -1.0
    drop_before = sign * (baseline - candidate)
    drop_after = sign * (baseline - after)
    print(f"{name}: {gate.metric} baseline {baseline:.4f}, candidate {candidate:.4f}, repaired {after:.4f}")
    assert drop_before > gate.tolerance, "the incident window regresses without the repair"
    assert drop_after <= gate.tolerance, f"the repaired model is still {drop_after:.4f} worse than the baseline"


@pytest.mark.skipif(not REPOS.is_dir(), reason=f"the hand-made bundles are not in {REPOS}")
def test_freight_amounts_read_plainly_in_one_expression_recover(tmp_path: Path) -> None:
    """With the formats the diagnosis saw in the column (one example each), the conversion site alone changes."""
    name = "freight-cost-text-amounts"
    bundle = load_bundle(REPOS / name)
    seen = ["$10.10", "$1,019.54", "USD 100.59", "USD 1,008.52", "1,009.04"]
    evidence = [{"kind": "data.source_types", "values": {"retyped": {"quoted_amount": {"examples": seen}}}}]
    diagnosis = diagnosis_completed("type_conversion", confidence=0.9, hints=CASES[name][1], evidence=evidence)
    proposal = propose_repair(
        diagnosis,
        bundle.tree("candidate"),
        repair_section(read_central_policy()["repair"]),
        bundle.spec.workspace,
        base_dir=bundle.tree("base"),
    )
    assert isinstance(proposal, RepairProposal) and proposal.guard.allowed
    assert (proposal.files, proposal.added_lines, proposal.removed_lines) == (("freight_cost/parsing.py",), 1, 1)
    gate = bundle.spec.gate
    repaired = _patched(tmp_path, bundle.tree("candidate"), proposal.unified_diff)
    after = evaluate_model(repaired, _window(bundle, "incident"), bundle.spec.workspace, gate).metrics[gate.metric]
    base = evaluate_model(bundle.tree("base"), _window(bundle, "approval"), bundle.spec.workspace, gate)
    sign = 1.0 if gate.direction == "higher_is_better" else -1.0
    assert sign * (base.metrics[gate.metric] - after) <= gate.tolerance
