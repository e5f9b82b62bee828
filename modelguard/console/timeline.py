"""The incident's signed events in ledger order, each with what its verification found: its signature, its
place in the hash chain, and the signed checkpoint that covers it (libs/ledger/verify.py, checkpoints.py)."""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from contracts.registry import Event
from libs.ledger import CheckpointRow, CheckpointVerification, LedgerRow, VerificationReport
from libs.signing.keys import KeyRegistry
from modelguard.console.ledger_source import verified_event


@dataclass(frozen=True)
class CheckState:
    state: str
    """"verified", "failed", or "pending" (not under a checkpoint yet)."""
    text: str


@dataclass(frozen=True)
class TimelineEntry:
    row: LedgerRow
    event: Event[Any] | None
    signature: CheckState
    chain: CheckState
    checkpoint: CheckState
    other: list[str] = field(default_factory=list)
    """Problems of the stored columns and of the causal links."""

    @property
    def failed(self) -> bool:
        return bool(self.other) or any(c.state == "failed" for c in (self.signature, self.chain, self.checkpoint))

    @property
    def verified(self) -> bool:
        return not self.other and all(c.state == "verified" for c in (self.signature, self.chain, self.checkpoint))


def timeline(
    rows: Sequence[LedgerRow],
    registry: KeyRegistry,
    report: VerificationReport,
    checkpoints: Sequence[CheckpointRow],
    checkpoint_check: CheckpointVerification,
) -> list[TimelineEntry]:
    found: dict[tuple[int, str], list[str]] = defaultdict(list)
    for problem in report.problems:
        found[(problem.position, problem.check)].append(problem.what)
    return [
        TimelineEntry(
            row=row,
            event=verified_event(row, registry),
            signature=_state(found[(row.position, "signature")], f"signed by {row.producer} (key {row.signer_keyid})"),
            chain=_state(found[(row.position, "chain")], f"sequence {row.sequence}, hash {row.hash[:12]}…"),
            checkpoint=_checkpoint(row.position, checkpoints, checkpoint_check),
            other=found[(row.position, "content")] + found[(row.position, "causal")],
        )
        for row in rows
    ]


def _state(problems: list[str], ok_text: str) -> CheckState:
    return CheckState("failed", "; ".join(problems)) if problems else CheckState("verified", ok_text)


def _checkpoint(
    position: int, checkpoints: Sequence[CheckpointRow], checkpoint_check: CheckpointVerification
) -> CheckState:
    positions = [c.position for c in checkpoints]
    index = bisect.bisect_left(positions, position)
    if index == len(positions):
        return CheckState("pending", "after the last signed checkpoint: the ledger service seals it within an interval")
    covering = positions[index]
    problems = [p.what for p in checkpoint_check.problems if p.position == covering]
    if problems:
        return CheckState("failed", f"checkpoint {covering}: " + "; ".join(problems))
    return CheckState("verified", f"under the signed checkpoint at position {covering}")
