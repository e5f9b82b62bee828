"""The policy's sections as typed models: every policy the repository ships parses, and a key no phase reads or a
value of the wrong type is refused in one readable line that names it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from contracts.catalogue import RepairStrategy
from libs.bundle.load import load_bundle
from libs.policy.diagnosis import DiagnosisPolicy
from libs.policy.effective import effective_policy, effective_policy_bytes, read_central_policy
from libs.policy.errors import PolicyError
from libs.policy.model_policy import ModelPolicy, parse_policy
from libs.policy.repair import DivisionPolicy, RepairNarrowing, RepairPolicy
from libs.policy.sandbox import SandboxPolicy

ROOT = Path(__file__).resolve().parents[3]
BUNDLES = sorted(path.parent for path in (ROOT / "fixtures").glob("*/*/bundle.yaml"))
CHART_POLICIES = sorted((ROOT / "deploy" / "helm" / "modelguard" / "policies").glob("*.yaml"))
CHURN = ROOT / "fixtures" / "scenarios" / "churn-monthly-spend"


def documented_model_policies() -> list[tuple[str, str]]:
    """The YAML blocks of README.md and docs/ that are model policies (a gate and a workspace, no bundle's model)."""
    found = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for index, block in enumerate(re.findall(r"```yaml\n(.*?)```", page.read_text(encoding="utf-8"), re.S)):
            try:
                document = yaml.safe_load(block)
            except yaml.YAMLError:
                continue
            if isinstance(document, dict) and {"gate", "workspace"} <= set(document) and "model" not in document:
                found.append((f"{page.relative_to(ROOT)}#{index}", block))
    return found


def churn_policy(**sections: Any) -> dict[str, Any]:
    """The churn bundle's effective policy as a mapping, its sections replaced by ``sections``."""
    return effective_policy(load_bundle(CHURN), read_central_policy()) | sections


def refusal(document: dict[str, Any]) -> str:
    with pytest.raises(PolicyError) as raised:
        parse_policy(yaml.safe_dump(document).encode(), "policies/churn.yaml")
    return str(raised.value)


def test_the_repository_ships_policies_of_every_kind() -> None:
    """The corpus the next tests read is not empty: bundles, the chart's policies and a documented one."""
    assert len(BUNDLES) >= 40 and CHART_POLICIES and documented_model_policies()


@pytest.mark.parametrize("bundle", BUNDLES, ids=[path.name for path in BUNDLES])
def test_every_bundle_s_effective_policy_parses_with_typed_sections(bundle: Path) -> None:
    policy = parse_policy(effective_policy_bytes(load_bundle(bundle), read_central_policy()), str(bundle))
    assert isinstance(policy.diagnosis, DiagnosisPolicy) and isinstance(policy.repair, RepairPolicy)
    assert isinstance(policy.sandbox, SandboxPolicy) and policy.sandbox.hidden  # the central policy's, not defaults
    assert policy.diagnosis_thresholds() is policy.diagnosis
    assert "guarded_division" in policy.repair.strategies


@pytest.mark.parametrize("path", CHART_POLICIES, ids=[path.name for path in CHART_POLICIES])
def test_the_helm_chart_s_policies_parse(path: Path) -> None:
    policy = parse_policy(path.read_bytes(), str(path))
    assert isinstance(policy.repair, RepairPolicy) and policy.diagnosis is not None


@pytest.mark.parametrize("origin, block", documented_model_policies())
def test_the_documented_model_policies_parse(origin: str, block: str) -> None:
    assert isinstance(parse_policy(block.encode(), origin), ModelPolicy)


def test_the_central_policy_s_sections_are_what_the_effective_policy_carries() -> None:
    central = read_central_policy()
    policy = parse_policy(effective_policy_bytes(load_bundle(CHURN), central), "churn")
    assert policy.diagnosis == DiagnosisPolicy.model_validate(central["diagnosis"])
    assert policy.repair == RepairPolicy.model_validate(central["repair"])
    assert policy.sandbox == SandboxPolicy.model_validate(central["sandbox"])


@pytest.mark.parametrize(
    "section, misspelt, where",
    [
        ("diagnosis", ("psi_drift", "psi_drfit"), "diagnosis.psi_drfit"),
        ("repair", ("max_files", "max_filez"), "repair.max_filez"),
        ("sandbox", ("run_as_uid", "run_as_id"), "sandbox.run_as_id"),
        ("validation", ("require_predict", "require_predikt"), "validation.require_predikt"),
    ],
)
def test_a_misspelt_key_is_named_in_one_line(section: str, misspelt: tuple[str, str], where: str) -> None:
    """A misspelt key also leaves its right spelling missing: the unknown key is what the line names."""
    document = churn_policy()
    right, wrong = misspelt
    document[section] = {(wrong if key == right else key): value for key, value in document[section].items()}
    assert refusal(document) == f"policies/churn.yaml: {where}: unknown key"


@pytest.mark.parametrize(
    "sections, where",
    [
        ({"sandbox": {"limits": {"cpu": 5}}}, "sandbox.limits.cpu"),
        ({"repair": {"allowed_paths": ["pkg/*.py"], "allowed_path": ["x"]}}, "repair.allowed_path"),
        ({"repair": {"allowed_paths": ["pkg/*.py"], "division": {"fallbak": 0}}}, "repair.division.fallbak"),
        ({"ci": {"outcomes": {"gate_pased": "pass"}}}, "ci.outcomes.gate_pased"),
    ],
)
def test_an_unknown_nested_key_is_named_in_one_line(sections: dict[str, Any], where: str) -> None:
    assert refusal(churn_policy(**sections)) == f"policies/churn.yaml: {where}: unknown key"


@pytest.mark.parametrize(
    "section, key, value",
    [
        ("diagnosis", "psi_drift", "high"),
        ("repair", "max_files", "three"),
        ("repair", "strategies", "guarded_division"),
        ("sandbox", "isolation", "docker"),
    ],
)
def test_a_mistyped_value_is_named_in_one_line(section: str, key: str, value: Any) -> None:
    document = churn_policy()
    document[section] = document[section] | {key: value}
    line = refusal(document)
    assert line.startswith(f"policies/churn.yaml: {section}.{key}: ") and "\n" not in line


def test_an_empty_or_absent_section_is_none_and_the_diagnoser_says_so() -> None:
    policy = parse_policy(yaml.safe_dump(churn_policy(diagnosis={}, repair={})).encode(), "churn")
    assert policy.diagnosis is None and policy.repair is None and policy.generated_paths() == ()
    with pytest.raises(PolicyError, match=r"^churn-monthly-spend: diagnosis: the policy has no diagnosis section$"):
        policy.diagnosis_thresholds()


def test_the_repair_section_s_shape_is_told_by_permitted_paths() -> None:
    narrowing = parse_policy(
        yaml.safe_dump(churn_policy(repair={"allowed_paths": ["pkg/*.py"], "max_files": 1})).encode(), "churn"
    )
    assert narrowing.repair == RepairNarrowing(allowed_paths=("pkg/*.py",), max_files=1)
    central = parse_policy(yaml.safe_dump(churn_policy()).encode(), "churn")
    assert isinstance(central.repair, RepairPolicy) and central.generated_paths() == central.repair.generated_paths
    assert central.generated_paths()  # the central policy names generated files


def test_the_division_section_is_typed_in_either_shape() -> None:
    document = churn_policy()
    document["repair"] = document["repair"] | {"division": {"denominators": ["zero", "nan"], "fallback": 0}}
    policy = parse_policy(yaml.safe_dump(document).encode(), "churn")
    assert isinstance(policy.repair, RepairPolicy)
    assert policy.repair.division == DivisionPolicy(denominators=frozenset({"zero", "nan"}), fallback=0)
    document["repair"]["division"] = {"denominators": ["infinity"]}
    assert refusal(document).startswith("policies/churn.yaml: repair.division.denominators.0: ")


@pytest.mark.parametrize(
    "repair",
    [
        {**read_central_policy()["repair"], "strategies": ["guarded_division", "rewrite_everything"]},
        {"allowed_paths": ["pkg/*.py"], "strategies": ["guarded_division", "rewrite_everything"]},
    ],
    ids=["central", "narrowing"],
)
def test_a_strategy_not_in_the_catalogue_is_named_in_one_line(repair: dict[str, Any]) -> None:
    """A policy's strategies are the catalogue's (contracts.catalogue.RepairStrategy): a name it does not hold is
    refused, not silently never tried."""
    line = refusal(churn_policy(repair=repair))
    assert line == "policies/churn.yaml: repair.strategies: unknown repair strategy 'rewrite_everything'"


def test_a_policy_s_strategies_are_the_catalogue_s_members() -> None:
    policy = parse_policy(effective_policy_bytes(load_bundle(CHURN), read_central_policy()), "churn")
    assert policy.repair is not None and policy.repair.strategies
    assert all(isinstance(name, RepairStrategy) for name in policy.repair.strategies)


@pytest.mark.parametrize("text", [b"model: " + b"[" * 5_000 + b"]" * 5_000 + b"\n", b"model: [1, [2, 3\n"])
def test_a_policy_the_yaml_reader_cannot_take_is_a_policy_error(text: bytes) -> None:
    """A submitted policy is read before anyone trusts it: nesting past the parser's limit is refused with a reason,
    as broken YAML is."""
    with pytest.raises(PolicyError, match="submitted policy: not YAML"):
        parse_policy(text, "submitted policy")
