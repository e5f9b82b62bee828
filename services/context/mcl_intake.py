"""DataHub's MetadataChangeLog records in, UpstreamRiskDetected out: validate as untrusted, mirror, detect.

Records come in batches (:meth:`MclIntake.handle_batch`, the runtime's batch consumer); every record ends exactly
one way, counted in :class:`IntakeCounts` (the mirror store's counters, and logged as one JSON object every
``log_counts_every`` records):

- **dead-lettered** with a reason (``mcl-<decode failure>``): it failed a check of
  :class:`~libs.datahub.mcl.decoder.MclDecoder` (framing, schema id, envelope, URN, entity registry,
  size, UTF-8, strict JSON, the aspect's SDK class). An input larger than the aspect limit is
  dead-lettered with its first bytes only, its size and digest in the detail. A bug met while handling
  one record dead-letters that record as ``handler-error``; the batch goes on;
- **skipped on purpose**, per reason: ``aspect-not-mirrored`` (valid, but the mirror keeps no such aspect),
  ``older-timeseries-run`` (a timeseries value older than the one the mirror has);
- **applied** to the mirror (and logged in the change log when a diagnosis reads that aspect; a skipped
  record is logged nowhere).

"Validate before filter" for a record the prefilter drops: the whole envelope (URN, entity type, aspect of the
entity, change type), the aspect value's size, content type, UTF-8 and strict JSON are checked for every record;
only the check of the aspect against its SDK class is left out for an aspect the mirror does not store, and
such a record is counted as skipped, never silently dropped. Every record that is applied passed every check.

Within a batch, records are decoded, checked for risk and applied to the mirror's pending state one after the
other (detection reads the state the earlier records of the batch left). :meth:`MclIntake.settle_batch`, called
once the batch's dead letters and first events are on the bus, writes the mirror's state, the change log entries,
the risks just reported, the counts and each partition's next offset in one transaction: a crash before it
loses nothing (nothing committed: the records come again), a crash after it doubles nothing (the stored offsets
say where to resume). A registry that does not answer stops the batch at the record that needed it
(:class:`~libs.bus.external_input.BatchStop`): the runtime settles the records before it and retries from it.

With a store of its own (SQLite), the runtime settles behind (:meth:`MclIntake.settle_behind`): the batch's
settlement is taken aside when it is published (:meth:`MclIntake.begin_settle`) and committed in another thread
while the next batch is handled, which reads what is in flight as if it were stored. A failed commit is met before
the next batch is published: :meth:`MclIntake.reload` drops what the store does not hold and the runtime reads the
unsettled records again. A shared store (PostgreSQL) is settled in step: other replicas follow what it holds.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from libs.bus.external_input import (
    BatchStop,
    BatchVerdicts,
    DeadLetterVerdict,
    ExternalRecord,
    FirstEvent,
    InputPosition,
    RecordVerdict,
    SettleBehind,
)
from libs.bus.handler_errors import RejectedInput, TransientFailure
from libs.canonical_json import sha256_hex
from libs.datahub.mcl.decode_error import MclDecodeError
from libs.datahub.mcl.decoder import MclDecoder
from libs.datahub.mcl.mirror import MetadataMirror
from libs.datahub.mcl.mirror_store import ChangeRow, MirrorStore
from libs.datahub.mcl.schema_registry import SchemaRegistryUnavailable
from libs.events.identity import incident_id_for
from services.context.change_log import change_row
from services.context.intake_counts import IntakeCounts, Outcome
from services.context.upstream_risk import apply_upstream_mcl

UPSTREAM_RISK = "upstream-risk"
NOT_MIRRORED = "aspect-not-mirrored"
HANDLER_ERROR = "handler-error"
LOG_COUNTS_EVERY = 1_000
DIRECT = InputPosition("", -1, -1)
"""The position of a record handed over without one (a direct call): no offset is stored for it."""

log = logging.getLogger("modelguard.context.mcl")


@dataclass
class _SeenRisks:
    """Risks already reported: those the store remembers, those of the batch in hand (not settled yet) and those
    of the batch being written behind."""

    store: MirrorStore
    pending: dict[str, None]
    in_flight: dict[str, None] = field(default_factory=dict)

    def seen(self, fingerprint: str) -> bool:
        return fingerprint in self.pending or fingerprint in self.in_flight or self.store.seen(fingerprint)


class MclIntake:
    """MCL records in batches: JSON when a record starts with `{`, Confluent-framed Avro otherwise."""

    def __init__(
        self, decoder: MclDecoder, mirror: MetadataMirror, *, log_counts_every: int = LOG_COUNTS_EVERY
    ) -> None:
        self.decoder, self.mirror = decoder, mirror
        self.counts = IntakeCounts.from_counters(mirror.store.counters())
        """The counts as this process knows them: the store's at start, plus what it settled since."""
        self._log_counts_every = log_counts_every
        self._outcomes: dict[InputPosition, tuple[Outcome, str]] = {}
        self._changes: list[ChangeRow] = []
        self._seen = _SeenRisks(mirror.store, {})

    # --- batches (the runtime's path) ------------------------------------------------------------------

    def handle_batch(self, records: Sequence[ExternalRecord]) -> BatchVerdicts:
        """Each record's verdict, in order; stops early (``stopped``) when the schema registry does not answer."""
        # a batch handled before and never settled (its first events or dead letters never reached the bus) is read
        # again: what it left must not count, its risks must not pass for reported, and its changes must not be
        # what its records are compared with (the mirror is read again from its store: a failure's cost only)
        self._forget_unsettled()
        if self.mirror.has_pending_changes:
            log.info("mcl: changes of a batch that was not settled are dropped; the mirror is read again")
            self.mirror.reload()
        self.mirror.follow_feed()
        verdicts: list[RecordVerdict] = []
        for record in records:
            try:
                verdicts.append(self._handle(record))
            except SchemaRegistryUnavailable as exc:
                return BatchVerdicts(verdicts, BatchStop(record, TransientFailure(str(exc))))
        return BatchVerdicts(verdicts)

    def settle_batch(self, verdicts: Sequence[RecordVerdict]) -> None:
        """After the verdicts' dead letters and first events are on the bus: commit the mirror's state, the change
        log, the reported risks, the counts and the next offset of each partition in one transaction."""
        settled, offsets, reported = self._settlement(verdicts)
        self.mirror.flush(
            offsets, changes=self._changes, seen_fingerprints=reported, counter_increments=settled.as_counters()
        )
        self._changes = []
        self._seen.pending.clear()
        self._count(settled)

    def settle_behind(self) -> SettleBehind | None:
        """Settling a batch while the next is handled, when the mirror's store is its own (not shared)."""
        return None if self.mirror.store.shared else SettleBehind(self.begin_settle, self.reload)

    def begin_settle(self, verdicts: Sequence[RecordVerdict]) -> Callable[[], None]:
        """What :meth:`settle_batch` commits, taken aside now; the answer commits it, in any thread, while the next
        batch is handled (which sees it: the mirror and the reported risks read it until it is stored)."""
        if self.mirror.write_in_flight:  # refused before the verdicts' outcomes are taken
            raise RuntimeError("a batch's commit is in flight already")
        settled, offsets, reported = self._settlement(verdicts)
        write = self.mirror.begin_flush(
            offsets, changes=self._changes, seen_fingerprints=reported, counter_increments=settled.as_counters()
        )
        self._changes = []
        in_flight = self._seen.in_flight = self._seen.pending
        self._seen.pending = {}

        def commit() -> None:
            write()
            if self._seen.in_flight is in_flight:
                self._seen.in_flight = {}
            self._count(settled)

        return commit

    def reload(self) -> None:
        """After a commit begun behind failed: forget what the store does not hold, and read the mirror again."""
        self.mirror.reload()
        self._forget_unsettled()
        self._seen.in_flight = {}

    def _forget_unsettled(self) -> None:
        """The outcomes, change log entries and reported risks of records handled and not settled."""
        self._outcomes.clear()
        self._changes = []
        self._seen.pending = {}

    def _settlement(
        self, verdicts: Sequence[RecordVerdict]
    ) -> tuple[IntakeCounts, dict[tuple[str, int], int], list[tuple[str, str]]]:
        """The counts, the next offset of each partition and the risks reported of the verdicts' records."""
        settled = IntakeCounts()
        offsets: dict[tuple[str, int], int] = {}
        reported: list[tuple[str, str]] = []
        now = datetime.now(UTC).isoformat()
        for verdict in verdicts:
            position = verdict.record.position
            outcome = self._outcomes.pop(position, None)
            if verdict.dead_letter is not None and (outcome is None or outcome[0] != "dead_lettered"):
                outcome = ("dead_lettered", verdict.dead_letter.reason)  # given up by the runtime
            if outcome is not None:
                settled.add(*outcome)
            if position != DIRECT:
                key = (position.topic, position.partition)
                offsets[key] = max(offsets.get(key, 0), position.offset + 1)
            reported += [(first.payload.change_fingerprint, now) for first in verdict.firsts]  # type: ignore[attr-defined]
        return settled, offsets, reported

    def _count(self, settled: IntakeCounts) -> None:
        before = self.counts.total
        self.counts = self.counts.merged(settled)
        if before // self._log_counts_every != self.counts.total // self._log_counts_every:
            log.info("mcl intake counts %s", self.counts.to_json())  # one JSON object: applied, skipped, dead_lettered

    def stored_offsets(self) -> Mapping[tuple[str, int], int]:
        """The next offset to consume per partition, as the mirror last committed it."""
        return self.mirror.committed_offsets()

    # --- one record at a time (a batch of one) ---------------------------------------------------------

    def __call__(self, raw: bytes, position: InputPosition | None = None) -> list[FirstEvent]:
        """One record's first events; raises RejectedInput (dead letter) or TransientFailure (retry).

        Without a position (a direct call) the outcome is settled at once; with one, :meth:`settle` settles it.
        """
        record = ExternalRecord(position or DIRECT, raw)
        result = self.handle_batch([record])
        if result.stopped is not None:
            raise TransientFailure(str(result.stopped.failure))
        (verdict,) = result.verdicts
        if position is None:
            self.settle_batch([verdict])
        if verdict.dead_letter is not None:
            letter = verdict.dead_letter
            raise RejectedInput(letter.reason, letter.detail, letter.keep)
        return list(verdict.firsts)

    def settle(self, published: Sequence[FirstEvent], position: InputPosition) -> None:
        """Settle one record handled with a position (its first events published)."""
        self.settle_batch([RecordVerdict(ExternalRecord(position, b""), tuple(published))])

    # --- internals -------------------------------------------------------------------------------------

    def _handle(self, record: ExternalRecord) -> RecordVerdict:
        raw, position = record.value, record.position
        try:
            mcl = self.decoder.decode_json(raw) if raw[:1] == b"{" else self.decoder.decode_avro(raw)
            if mcl is None:  # valid, but an aspect the mirror does not keep
                self._outcomes[position] = ("skipped", NOT_MIRRORED)
                return RecordVerdict(record)
            risk, applied = apply_upstream_mcl(mcl, self.mirror, self._seen)
            if applied != "applied":
                self._outcomes[position] = ("skipped", applied)
                log.debug("mcl skipped (%s) at %s", applied, position)
                return RecordVerdict(record)
            self._outcomes[position] = ("applied", "")
            row = change_row(mcl)
            if row is not None:
                self._changes.append(row)
        except MclDecodeError as exc:
            reason = f"mcl-{exc.reason}".replace("_", "-")
            self._outcomes[position] = ("dead_lettered", reason)
            return RecordVerdict(record, dead_letter=self._dead_letter(reason, exc.detail, raw))
        except SchemaRegistryUnavailable:
            raise
        except Exception as exc:  # a bug or bad data met in one record must not stop the batch
            self._outcomes[position] = ("dead_lettered", HANDLER_ERROR)
            detail = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"
            return RecordVerdict(record, dead_letter=DeadLetterVerdict(HANDLER_ERROR, detail))
        if risk is None:
            return RecordVerdict(record)
        self._seen.pending[risk.change_fingerprint] = None
        incident = incident_id_for(UPSTREAM_RISK, risk.change_fingerprint)
        return RecordVerdict(record, (FirstEvent(risk, incident, sha256_hex(raw)),))

    def _dead_letter(self, reason: str, detail: str, raw: bytes) -> DeadLetterVerdict:
        """The dead letter's verdict; an input beyond the aspect limit keeps only its first bytes."""
        limits = self.decoder.limits
        if len(raw) <= limits.max_aspect_bytes:
            return DeadLetterVerdict(reason, detail)
        prefix = raw[: limits.dead_letter_prefix_bytes]
        summary = f"{detail}; the input is {len(raw)} bytes, sha256 {sha256_hex(raw)}, kept: its first {len(prefix)}"
        return DeadLetterVerdict(reason, summary, keep=prefix)
