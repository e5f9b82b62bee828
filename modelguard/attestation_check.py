"""`modelguard verify --attestation FILE`: the offline check with public keys, then the ledger when there is one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from libs.attestation import AttestationCheck, cross_check, verify_attestation
from libs.ledger import LedgerStore
from libs.signing.keys import KeyRegistry


@dataclass(frozen=True)
class AttestationReport:
    ok: bool
    lines: list[str] = field(default_factory=list)


def check_attestation(
    raw: bytes,
    name: str,
    registry: KeyRegistry,
    ledger: LedgerStore | None,
    ledger_required: bool,
    envelopes: Sequence[bytes] = (),
) -> AttestationReport:
    check = verify_attestation(raw, registry, envelopes=envelopes)
    if not check.ok:
        return AttestationReport(False, [f"attestation {name}: FAILED", *(f"  {p}" for p in check.problems)])
    lines = [f"attestation {name}: verified offline", *(f"  {claim}" for claim in check.claims())]
    if ledger is None:
        if ledger_required:
            return AttestationReport(False, [*lines, "ledger: not reachable, so the chain was not cross-checked"])
        return AttestationReport(True, [*lines, "ledger: not reachable; offline verification only"])
    ok, ledger_lines = _cross_check_lines(check, ledger, registry, ledger_required)
    return AttestationReport(ok, lines + ledger_lines)


def _cross_check_lines(
    check: AttestationCheck, ledger: LedgerStore, registry: KeyRegistry, required: bool
) -> tuple[bool, list[str]]:
    assert check.predicate is not None
    incident_id = check.predicate.incident_id
    if not required and not ledger.incident_events(incident_id):
        return True, [f"ledger: holds no event of {incident_id}; offline verification only"]
    result = cross_check(check, ledger, registry)
    if not result.ok:
        return False, ["ledger: cross-check FAILED", *(f"  {p}" for p in result.problems)]
    positions = [link.position for link in result.links]
    lines = [
        f"ledger: all {result.chain_length} chain events found, signatures verified, in causal order "
        f"(positions {positions[0]}..{positions[-1]})"
    ]
    if result.published_by:
        lines.append(f"ledger: named by the publication {result.published_by}")
    return True, lines
