"""The repairs ModelGuard's strategies propose on the public scenario bundles still pass the guard.

``scenario_repairs/`` holds each proposal as the repairer made it (``propose_repair`` on the bundle's
diagnosis); here the guard judges it the way the repairer does: the central policy's ``repair`` section, the
bundle's workspace config (repair paths, commands, label) and the bundle's candidate tree as the workspace,
so the allow-list compares against the real modules. ``tests/integration/test_churn_phases.py`` and
``test_investigate.py`` run the whole chain on the churn bundle.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from libs.bundle.load import load_bundle
from libs.policy.effective import read_central_policy
from libs.policy.repair import RepairNarrowing, RepairPolicy
from services.repairer.patch_guard import ProposedPatch, check_patch, guard_policy
from services.repairer.unified_diff import parse_unified_diff
from tests.support.typed_policy import repair_section

REPAIRS = Path(__file__).parent / "scenario_repairs"
SCENARIOS = Path(__file__).resolve().parents[3] / "fixtures" / "scenarios"
STRATEGIES: dict[str, str] = yaml.safe_load((REPAIRS / "repairs.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def central_repair() -> RepairPolicy | RepairNarrowing:
    return repair_section(read_central_policy()["repair"])


def test_every_stored_repair_is_listed_and_every_listed_one_stored() -> None:
    assert sorted(path.stem for path in REPAIRS.glob("*.patch")) == sorted(STRATEGIES)
    assert set(STRATEGIES.values()) == {
        "guarded_division",
        "revert_change",
        "column_rename",
        "numeric_coercion",
        "unseen_category",
        "null_guard",
    }


@pytest.mark.parametrize("bundle_name", sorted(STRATEGIES))
def test_the_guard_accepts_the_strategys_repair(
    bundle_name: str, central_repair: RepairPolicy | RepairNarrowing
) -> None:
    bundle = load_bundle(SCENARIOS / bundle_name)
    spec = bundle.spec.workspace
    diff = (REPAIRS / f"{bundle_name}.patch").read_text(encoding="utf-8")
    files = tuple(patch.path for patch in parse_unified_diff(diff))
    verdict = check_patch(
        ProposedPatch(strategy=STRATEGIES[bundle_name], unified_diff=diff, files=files),
        central_repair,
        spec,
        workspace=bundle.tree("candidate"),
    )
    assert verdict.allowed, verdict.violations
    assert guard_policy(central_repair, spec).labels, "the bundle's label reaches the guard"
