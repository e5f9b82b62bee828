"""DataHub's MetadataChangeLog records in, UpstreamRiskDetected out: validate as untrusted, mirror, detect.

Every record ends exactly one way, counted in :class:`IntakeCounts` (kept in the mirror, and logged as
one JSON object every ``log_counts_every`` records):

- **dead-lettered** with a reason (``mcl-<decode failure>``): it failed a check of
  :class:`~libs.datahub.mcl.decoder.MclDecoder` (framing, schema id, envelope, URN, entity registry,
  size, UTF-8, strict JSON, the aspect's SDK class). An input larger than the aspect limit is
  dead-lettered with its first bytes only, its size and digest in the detail;
- **skipped on purpose**, per reason: ``aspect-not-mirrored`` (valid, but the mirror keeps no such aspect),
  ``older-timeseries-run`` (a timeseries value older than the one the mirror has);
- **applied** to the mirror (and logged in the change log when a diagnosis reads that aspect; a skipped
  record is logged nowhere).

With a position (the runtime's records), the mirror's state, the counts and the next offset are written
in one transaction in :meth:`MclIntake.settle`, after the record's outcome is on the bus, so a crash
neither loses a change (nothing committed yet: the record comes again) nor doubles one.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from libs.bus.external_input import FirstEvent, InputPosition
from libs.bus.runtime import RejectedInput, TransientFailure
from libs.canonical_json import sha256_hex
from libs.datahub.mcl.decode_error import MclDecodeError
from libs.datahub.mcl.decoder import MclDecoder
from libs.datahub.mcl.mirror import MetadataMirror
from libs.datahub.mcl.schema_registry import SchemaRegistryUnavailable
from libs.events.identity import incident_id_for
from services.context.change_log import ChangeLog
from services.context.intake_counts import COUNTS_META_KEY, IntakeCounts, Outcome
from services.context.upstream_risk import apply_upstream_mcl
from services.context.upstream_risk_dedup import RiskDeduplicator

UPSTREAM_RISK = "upstream-risk"
NOT_MIRRORED = "aspect-not-mirrored"
LOG_COUNTS_EVERY = 1_000

log = logging.getLogger("modelguard.context.mcl")


class MclIntake:
    """One MCL at a time: JSON when it starts with `{`, Confluent-framed Avro otherwise."""

    def __init__(
        self,
        decoder: MclDecoder,
        mirror: MetadataMirror,
        dedup: RiskDeduplicator,
        change_log: ChangeLog | None = None,
        *,
        log_counts_every: int = LOG_COUNTS_EVERY,
    ) -> None:
        self.decoder, self.mirror, self.dedup, self.change_log = decoder, mirror, dedup, change_log
        self.counts = IntakeCounts.from_json(mirror.meta(COUNTS_META_KEY))
        self._outcome: tuple[Outcome, str] | None = None
        self._log_counts_every = log_counts_every

    def __call__(self, raw: bytes, position: InputPosition | None = None) -> list[FirstEvent]:
        """The record's first events; raises RejectedInput (dead letter) or TransientFailure (retry).

        Without a position (a direct call) the outcome is counted and the mirror flushed at once.
        """
        try:
            mcl = self.decoder.decode_json(raw) if raw[:1] == b"{" else self.decoder.decode_avro(raw)
            if mcl is None:  # valid, but an aspect the mirror does not keep
                risk, outcome = None, self._decided("skipped", NOT_MIRRORED)
            else:
                risk, applied = apply_upstream_mcl(mcl, self.mirror, self.dedup)
                outcome = self._decided("applied") if applied == "applied" else self._decided("skipped", applied)
                if self.change_log is not None and applied == "applied":
                    self.change_log.record(mcl)
        except MclDecodeError as exc:
            reason = f"mcl-{exc.reason}".replace("_", "-")
            self._decided("dead_lettered", reason)
            if position is None:
                self._settle_now()
            raise self._rejection(reason, exc.detail, raw) from exc
        except SchemaRegistryUnavailable as exc:
            self._outcome = None
            raise TransientFailure(str(exc)) from exc
        except Exception:  # a bug: the runtime dead-letters the record as handler-error
            self._decided("dead_lettered", "handler-error")
            raise
        if outcome[0] == "skipped":
            log.debug("mcl skipped (%s)%s", outcome[1], f" at {position}" if position else "")
        if position is None:
            self._settle_now()
        if risk is None:
            return []
        incident = incident_id_for(UPSTREAM_RISK, risk.change_fingerprint)
        return [FirstEvent(risk, incident, sha256_hex(raw))]

    def settle(self, published: Sequence[FirstEvent], position: InputPosition) -> None:
        """After the record's outcome is on the bus: remember what was published, then commit the mirror's
        state, the counts and the next offset of the record's partition in one transaction."""
        self.remember(published)
        if self._outcome is not None:
            self.counts.add(*self._outcome)
            self._outcome = None
        counts = self.counts.to_json()
        self.mirror.flush({(position.topic, position.partition): position.offset + 1}, {COUNTS_META_KEY: counts})
        if self.counts.total % self._log_counts_every == 0:
            log.info("mcl intake counts %s", counts)  # one JSON object: applied, skipped and dead_lettered by reason

    def stored_offsets(self) -> Mapping[tuple[str, int], int]:
        """The next offset to consume per partition, as the mirror last committed it."""
        return self.mirror.committed_offsets()

    def remember(self, published: Sequence[FirstEvent]) -> None:
        """After publication: a repeat of the same change is not reported again."""
        now = datetime.now(UTC).isoformat()
        for first in published:
            self.dedup.remember(first.payload.change_fingerprint, now)  # type: ignore[attr-defined]

    def _decided(self, outcome: Outcome, reason: str = "") -> tuple[Outcome, str]:
        self._outcome = (outcome, reason)
        return self._outcome

    def _settle_now(self) -> None:
        if self._outcome is not None:
            self.counts.add(*self._outcome)
            self._outcome = None
        self.mirror.flush(meta={COUNTS_META_KEY: self.counts.to_json()})

    def _rejection(self, reason: str, detail: str, raw: bytes) -> RejectedInput:
        """The dead letter's verdict; an input beyond the aspect limit keeps only its first bytes."""
        limits = self.decoder.limits
        if len(raw) <= limits.max_aspect_bytes:
            return RejectedInput(reason, detail)
        prefix = raw[: limits.dead_letter_prefix_bytes]
        summary = f"{detail}; the input is {len(raw)} bytes, sha256 {sha256_hex(raw)}, kept: its first {len(prefix)}"
        return RejectedInput(reason, summary, keep=prefix)
