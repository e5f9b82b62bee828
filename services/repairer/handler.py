"""Propose the smallest permitted repair for a diagnosis, or withhold one and say why.

Outcomes: a proposal (a strategy's edit that passed the patch guard); ``cause_in_data`` (no code repair is
right: the cause is in the data and nothing declares what the code should do with it; the owners to tell
are named); or a withholding (no strategy could produce a permitted patch).
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from contracts.catalogue import Hypothesis, RepairStrategy
from contracts.common import AssetOwners
from contracts.events.diagnosis import DiagnosisAbstained, DiagnosisCompleted
from contracts.outcomes import Outcome
from libs.patch_guard.policy import EffectivePolicy, GuardPolicyError
from libs.patch_guard.source_trees import SourceTrees
from libs.patch_guard.workspace_config import WorkspaceConfigError
from libs.policy.model_policy import WorkspacePolicy
from libs.policy.repair import RepairNarrowing, RepairPolicy
from libs.python_source.shared_parses import shared_parses
from services.repairer.catalogue import (
    CATALOGUE,
    CAUSE_IN_DATA,
    DECLARATIONS,
    NEED_DESCRIPTION,
    REPAIRS_BY_HYPOTHESIS,
)
from services.repairer.patch_guard import (
    GuardVerdict,
    GuardViolation,
    ProposedPatch,
    changed_lines_of,
    check_patch,
    guard_policy,
)
from services.repairer.repair_context import RepairContext, build_context
from services.repairer.repair_target import NoRepairTarget, RepairTarget, read_repair_target
from services.repairer.source_tree import SourceTree
from services.repairer.strategies.outcome import MultiFileEdit, StrategyRefusal

WithholdingReason = Literal[
    "diagnosis_abstained",
    "cause_in_data",
    "generated_code",
    "no_applicable_strategy",
    "strategy_refused",
    "guard_rejected",
]


class RepairProposal(BaseModel):
    model_config = ConfigDict(frozen=True)

    decision: Literal["proposed"] = "proposed"
    strategy: RepairStrategy
    hypothesis: Hypothesis
    confidence: float | None
    file: str
    """The first file the patch changes."""
    function: str | None
    files: tuple[str, ...]
    unified_diff: str
    patch_sha256: str
    added_lines: int
    removed_lines: int
    inserted_lines: tuple[str, ...]
    """The patch's added lines, in diff order."""
    rationale: str
    guard: GuardVerdict


class RepairWithholding(BaseModel):
    model_config = ConfigDict(frozen=True)

    decision: Literal[Outcome.REPAIR_WITHHELD, Outcome.NO_CODE_REPAIR] = Outcome.REPAIR_WITHHELD
    """``no_code_repair`` exactly when ``reason_code`` is ``cause_in_data``."""
    reason_code: WithholdingReason
    reason: str
    hypothesis: Hypothesis | None
    owners: tuple[AssetOwners, ...] = ()
    """Who to tell, per affected asset: for a cause in the data the datasets it lies in, then the model; otherwise
    the model (``outcome_owners``)."""
    owner_urns: tuple[str, ...] = ()
    """The owners' urns, each once, in that order."""
    refusals: tuple[StrategyRefusal, ...] = ()
    violations: tuple[GuardViolation, ...] = ()


def propose_repair(
    diagnosis: DiagnosisCompleted | DiagnosisAbstained,
    candidate_dir: Path,
    repair_policy: RepairPolicy | RepairNarrowing | None,
    workspace_spec: WorkspacePolicy,
    *,
    base_dir: Path | None = None,
) -> RepairProposal | RepairWithholding:
    """Try the strategies that answer the diagnosed hypothesis, as far as the policy permits them; of the edits
    that pass the patch guard the smallest (fewest added and removed lines) is proposed, the catalogue's order
    deciding between edits of one size (a two-line guard in front of a division before a revert of the same size).

    ``diagnosis`` is the event the diagnoser published: an abstention is withheld (``diagnosis_abstained``).
    ``candidate_dir`` and ``base_dir`` (the two revisions' trees) are only read. ``repair_policy`` is the policy's
    typed ``repair`` section; ``workspace_spec`` the workspace config: its commands (protected from repair),
    ``repair_paths``, ``categorical_defaults`` and ``null_fills``. Without ``base_dir``, revert_change refuses and
    guarded_division takes no fallback from the base revision.
    """
    target = read_repair_target(diagnosis)
    if isinstance(target, NoRepairTarget):
        return RepairWithholding(reason_code=target.reason_code, reason=target.reason, hypothesis=target.hypothesis)
    if target.hints.generated_files:
        return _generated_code(target)
    names = REPAIRS_BY_HYPOTHESIS.get(target.hypothesis, ())
    if not names:
        if target.hypothesis in CAUSE_IN_DATA:
            return _cause_in_data(target, f"{target.hypothesis} has no code repair")
        return _withhold(
            target, "no_applicable_strategy", f"no strategy answers the hypothesis {target.hypothesis.value!r}"
        )
    try:
        guard = guard_policy(repair_policy, workspace_spec)
    except (GuardPolicyError, WorkspaceConfigError) as error:
        violation = GuardViolation(rule="policy_unreadable", detail=str(error))
        return _withhold(target, "guard_rejected", f"the repair policy is unreadable: {error}", violations=(violation,))
    permitted = [name for name in names if name in guard.strategies]
    if not permitted:
        return _withhold(
            target,
            "no_applicable_strategy",
            f"the policy permits none of {[name.value for name in names]} for {target.hypothesis.value!r}",
        )
    with shared_parses():  # the strategies and the guard read the same few texts: each parsed once
        return _proposal_of(target, permitted, guard, candidate_dir, base_dir, repair_policy, workspace_spec)


def _proposal_of(
    target: RepairTarget,
    permitted: list[RepairStrategy],
    guard: EffectivePolicy,
    candidate_dir: Path,
    base_dir: Path | None,
    repair_policy: RepairPolicy | RepairNarrowing | None,
    workspace_spec: WorkspacePolicy,
) -> RepairProposal | RepairWithholding:
    context = build_context(
        candidate=SourceTree(Path(candidate_dir)),
        base=SourceTree(Path(base_dir)) if base_dir is not None else None,
        hypothesis=target.hypothesis,
        suspect=target.suspect,
        hints=target.hints,
        repair_policy=repair_policy,
        workspace=workspace_spec,
        guard=guard,
        number_examples=target.number_examples,
    )
    return _smallest_permitted_edit(target, context, permitted, repair_policy, workspace_spec)


def _smallest_permitted_edit(
    target: RepairTarget,
    context: RepairContext,
    names: list[RepairStrategy],
    repair_policy: RepairPolicy | RepairNarrowing | None,
    workspace_spec: WorkspacePolicy,
) -> RepairProposal | RepairWithholding:
    refusals: list[StrategyRefusal] = []
    violations: list[GuardViolation] = []
    edits: list[MultiFileEdit] = []
    undeclared = 0
    for name in names:
        strategy = CATALOGUE[name]
        missing = strategy.missing(context)
        if missing:
            undeclared += any(need in DECLARATIONS for need in missing)
            reason = "; ".join(NEED_DESCRIPTION[need] for need in missing)
            refusals.append(StrategyRefusal(strategy=name, reason=reason))
            continue
        edit = strategy.propose(context)
        if isinstance(edit, StrategyRefusal):
            refusals.append(edit)
            continue
        edits.append(edit)
    # The smallest edit first (the catalogue's order among equals), and the first the guard permits is the proposal:
    # the same one as checking every edit and taking the smallest permitted, with fewer guard checks. The checks share
    # one parse of each file text (the files before the edits, the base revision's), for this handling only.
    trees = SourceTrees()
    for edit in sorted(edits, key=_size_for_the_guard):
        verdict = check_patch(
            ProposedPatch(strategy=edit.strategy, unified_diff=edit.unified_diff, files=edit.files),
            repair_policy,
            workspace_spec,
            workspace=context.candidate.root,
            approved=context.base.root if context.base is not None else None,
            trees=trees,
        )
        if verdict.allowed:
            return _proposal(target, edit, verdict)
        violations.extend(verdict.violations)
    if violations:
        return _withhold(
            target,
            "guard_rejected",
            "the patch guard rejected every edit: " + "; ".join(v.rule for v in violations),
            refusals=tuple(refusals),
            violations=tuple(violations),
        )
    explained = "; ".join(f"{refusal.strategy}: {refusal.reason}" for refusal in refusals)
    if undeclared == len(names) and target.hypothesis in CAUSE_IN_DATA:
        return _cause_in_data(target, explained, refusals=tuple(refusals))
    return _withhold(target, "strategy_refused", explained, refusals=tuple(refusals))


def _size_for_the_guard(edit: MultiFileEdit) -> float:
    """The lines the guard will count as changed; an edit it cannot read goes last (it is refused)."""
    changed = changed_lines_of(edit.unified_diff)
    return math.inf if changed is None else changed


def _generated_code(target: RepairTarget) -> RepairWithholding:
    """The cause is in generated code: a hand edit would be overwritten by the next generator run, and the fix
    belongs in the generator or its input. The model's owners are told which file and which generator."""
    described = "; ".join(
        f"{item.path} (generated{f' by {item.generator}' if item.generator else ''}; {item.reason})"
        for item in target.hints.generated_files
    )
    return RepairWithholding(
        reason_code="generated_code",
        reason=f"the cause ({target.hypothesis}) is in generated code, which a repair never edits: {described}; "
        "fix the generator or its input and regenerate",
        hypothesis=target.hypothesis,
        owners=target.owners,
        owner_urns=target.owner_urns,
    )


def _cause_in_data(target: RepairTarget, why: str, refusals: tuple[StrategyRefusal, ...] = ()) -> RepairWithholding:
    notify = f"notify {', '.join(target.owner_urns)}" if target.owner_urns else "DataHub records no owner to notify"
    return RepairWithholding(
        decision=Outcome.NO_CODE_REPAIR,
        reason_code="cause_in_data",
        reason=f"the cause ({target.hypothesis}) is in the data, not the code: {why}; {notify}",
        hypothesis=target.hypothesis,
        owners=target.owners,
        owner_urns=target.owner_urns,
        refusals=refusals,
    )


def _withhold(
    target: RepairTarget,
    code: Literal["no_applicable_strategy", "strategy_refused", "guard_rejected"],
    reason: str,
    *,
    refusals: tuple[StrategyRefusal, ...] = (),
    violations: tuple[GuardViolation, ...] = (),
) -> RepairWithholding:
    return RepairWithholding(
        reason_code=code,
        reason=reason,
        hypothesis=target.hypothesis,
        owners=target.owners,
        owner_urns=target.owner_urns,
        refusals=refusals,
        violations=violations,
    )


def _proposal(target: RepairTarget, edit: MultiFileEdit, verdict: GuardVerdict) -> RepairProposal:
    return RepairProposal(
        strategy=edit.strategy,
        hypothesis=target.hypothesis,
        confidence=target.confidence,
        file=edit.files[0],
        function=edit.function,
        files=verdict.files,
        unified_diff=edit.unified_diff,
        patch_sha256=hashlib.sha256(edit.unified_diff.encode("utf-8")).hexdigest(),
        added_lines=verdict.added_lines,
        removed_lines=verdict.removed_lines,
        inserted_lines=edit.added_lines,
        rationale=edit.rationale,
        guard=verdict,
    )
