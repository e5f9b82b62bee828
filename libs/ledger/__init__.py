"""The incident log: an append-only, hash-chained, signature-checked event store with replay and audit."""

from libs.ledger.chain_links import chain_hash
from libs.ledger.checkpoints import (
    CHECKPOINT_PAYLOAD_TYPE,
    CheckpointProblem,
    CheckpointVerification,
    verify_checkpoints,
    write_checkpoint,
)
from libs.ledger.decoding import decode_row
from libs.ledger.projections import IncidentProjection, apply, project, replay
from libs.ledger.rows import AppendResult, CheckpointRow, IncidentHead, LedgerRow
from libs.ledger.store import LedgerStore
from libs.ledger.tables import GENESIS_HASH, LedgerCheckpoint, LedgerEvent
from libs.ledger.verify import Problem, VerificationReport, verify_all, verify_incident

__all__ = [
    "CHECKPOINT_PAYLOAD_TYPE",
    "GENESIS_HASH",
    "AppendResult",
    "CheckpointProblem",
    "CheckpointRow",
    "CheckpointVerification",
    "IncidentHead",
    "IncidentProjection",
    "LedgerCheckpoint",
    "LedgerEvent",
    "LedgerRow",
    "LedgerStore",
    "Problem",
    "VerificationReport",
    "apply",
    "chain_hash",
    "decode_row",
    "project",
    "replay",
    "verify_all",
    "verify_checkpoints",
    "verify_incident",
    "write_checkpoint",
]
