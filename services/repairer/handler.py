"""Propose the smallest permitted repair for a diagnosis, or withhold one and say why."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from services.repairer.catalogue import CATALOGUE
from services.repairer.patch_guard import GuardVerdict, GuardViolation, ProposedPatch, check_patch
from services.repairer.repair_target import NoRepairTarget, RepairTarget, read_repair_target
from services.repairer.strategies.outcome import SourceEdit, StrategyRefusal

WithholdingReason = Literal[
    "diagnosis_abstained",
    "no_target",
    "target_unreadable",
    "no_applicable_strategy",
    "strategy_refused",
    "guard_rejected",
]


class RepairProposal(BaseModel):
    model_config = ConfigDict(frozen=True)

    decision: Literal["proposed"] = "proposed"
    strategy: str
    hypothesis: str
    confidence: float | None
    file: str
    function: str
    files: tuple[str, ...]
    unified_diff: str
    patch_sha256: str
    added_lines: int
    removed_lines: int
    inserted_lines: tuple[str, ...]
    rationale: str
    guard: GuardVerdict


class RepairWithholding(BaseModel):
    model_config = ConfigDict(frozen=True)

    decision: Literal["withheld"] = "withheld"
    reason_code: WithholdingReason
    reason: str
    hypothesis: str | None
    refusals: tuple[StrategyRefusal, ...] = ()
    violations: tuple[GuardViolation, ...] = ()


def propose_repair(
    diagnosis_outcome: Mapping[str, Any] | BaseModel,
    candidate_dir: Path,
    repair_policy: Mapping[str, Any],
    workspace_spec: Mapping[str, Any],
) -> RepairProposal | RepairWithholding:
    """Try the policy's strategies, in its order, that answer the diagnosed hypothesis; the first edit
    that passes the patch guard is proposed. ``candidate_dir`` is only read."""
    target = read_repair_target(diagnosis_outcome)
    if isinstance(target, NoRepairTarget):
        return RepairWithholding(reason_code=target.reason_code, reason=target.reason, hypothesis=target.hypothesis)
    source = _read_target_source(Path(candidate_dir), target.file)
    if source is None:
        return RepairWithholding(
            reason_code="target_unreadable",
            reason=f"{target.file} is not a readable file inside the candidate workspace",
            hypothesis=target.hypothesis,
        )
    strategies = [
        CATALOGUE[name]
        for name in repair_policy.get("strategies") or []
        if name in CATALOGUE and target.hypothesis in CATALOGUE[name].answers
    ]
    if not strategies:
        return RepairWithholding(
            reason_code="no_applicable_strategy",
            reason=f"no permitted strategy answers the hypothesis {target.hypothesis!r}",
            hypothesis=target.hypothesis,
        )
    refusals: list[StrategyRefusal] = []
    violations: list[GuardViolation] = []
    for strategy in strategies:
        edit = strategy.edit(source, target)
        if isinstance(edit, StrategyRefusal):
            refusals.append(edit)
            continue
        verdict = check_patch(
            ProposedPatch(strategy=edit.strategy, unified_diff=edit.unified_diff, files=(edit.file,)),
            repair_policy,
            workspace_spec,
        )
        if verdict.allowed:
            return _proposal(target, edit, verdict)
        violations.extend(verdict.violations)
    if violations:
        return RepairWithholding(
            reason_code="guard_rejected",
            reason="the patch guard rejected every edit: " + "; ".join(v.rule for v in violations),
            hypothesis=target.hypothesis,
            refusals=tuple(refusals),
            violations=tuple(violations),
        )
    return RepairWithholding(
        reason_code="strategy_refused",
        reason="; ".join(f"{refusal.strategy}: {refusal.reason}" for refusal in refusals),
        hypothesis=target.hypothesis,
        refusals=tuple(refusals),
    )


def _proposal(target: RepairTarget, edit: SourceEdit, verdict: GuardVerdict) -> RepairProposal:
    return RepairProposal(
        strategy=edit.strategy,
        hypothesis=target.hypothesis,
        confidence=target.confidence,
        file=edit.file,
        function=edit.function,
        files=verdict.files,
        unified_diff=edit.unified_diff,
        patch_sha256=hashlib.sha256(edit.unified_diff.encode("utf-8")).hexdigest(),
        added_lines=verdict.added_lines,
        removed_lines=verdict.removed_lines,
        inserted_lines=edit.inserted_lines,
        rationale=edit.rationale,
        guard=verdict,
    )


def _read_target_source(candidate_dir: Path, relpath: str) -> str | None:
    root = candidate_dir.resolve()
    path = (root / relpath).resolve()
    if not path.is_relative_to(root) or not path.is_file():
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
