"""The database against the checkpoints kept outside it: a database that ends before the external head lost
its tail, and the external heads' signed listings name the incidents of what is gone.

Lines are worded the same whichever external source found them, so a head file and a head log that agree
give one line per finding, not two."""

from __future__ import annotations

from collections.abc import Sequence

from libs.ledger.checkpoints import (
    CheckpointProblem,
    GlobalChain,
    listing,
    listing_problems,
    statement_problems,
)
from libs.ledger.external_head import ExternalHeadError, HeadSource
from libs.ledger.rows import CheckpointRow
from libs.ledger.store import LedgerStore
from libs.signing.keys import KeyRegistry


def check_external_heads(
    store: LedgerStore, registry: KeyRegistry, sources: Sequence[HeadSource]
) -> list[CheckpointProblem]:
    """Fail closed: an external head that cannot be read or whose signature does not verify is a finding."""
    problems: list[CheckpointProblem] = []
    held = {c.position: c for c in store.checkpoints()}
    for source in sources:
        try:
            heads = source.heads()
        except ExternalHeadError as exc:
            problems.append(CheckpointProblem(0, f"{exc}: the external head cannot be checked"))
            continue
        if not heads:
            if held:
                problems.append(
                    CheckpointProblem(
                        max(held), f"the {source.name} holds no checkpoint though the database holds {len(held)}"
                    )
                )
            continue
        problems += _source_problems(store, registry, source.name, heads, held)
    return problems


def _source_problems(
    store: LedgerStore, registry: KeyRegistry, name: str, heads: list[CheckpointRow], held: dict[int, CheckpointRow]
) -> list[CheckpointProblem]:
    problems: list[CheckpointProblem] = []
    lacking: list[int] = []
    for head in heads:
        found, statement = statement_problems(head, registry)
        if statement is None:
            problems += [CheckpointProblem(head.position, f"the {name} cannot be checked: {w}") for w in found]
            continue
        problems += [CheckpointProblem(head.position, f"the {name}'s checkpoint {head.position}: {w}") for w in found]
        stored = held.get(head.position)
        if stored is not None and stored.envelope == head.envelope:
            continue  # the database holds this very signed checkpoint; verify_checkpoints checked it
        lacking.append(head.position)
        listed = listing(statement)
        if listed is not None:
            problems += listing_problems(store, head.position, listed, f"external checkpoint {head.position}")
    if lacking:
        shown = ", ".join(str(p) for p in lacking)
        problems.append(
            CheckpointProblem(
                lacking[-1], f"the database lacks or altered checkpoint(s) {shown}, which the {name} holds"
            )
        )
    latest = heads[-1]
    if latest.position in lacking:  # else verify_checkpoints judged that very checkpoint against the events
        problems += _tail_problems(store, latest)
    return problems


def _tail_problems(store: LedgerStore, latest: CheckpointRow) -> list[CheckpointProblem]:
    ends = store.head_position()
    if ends >= latest.position:
        chain = GlobalChain(store)
        chain.advance_to(latest.position)
        if chain.head == latest.head_hash and chain.count == latest.event_count:
            return []
        return [
            CheckpointProblem(
                latest.position,
                f"the events up to position {latest.position} are not the {latest.event_count} the external "
                f"checkpoint {latest.position} signed: events were changed, added or removed",
            )
        ]
    return [
        CheckpointProblem(
            latest.position,
            f"events after position {ends} missing, checkpoint {latest.position} (kept outside the database): "
            "the ledger was truncated",
        )
    ]
