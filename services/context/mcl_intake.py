"""DataHub's MetadataChangeLog records in, UpstreamRiskDetected out: decode as untrusted, mirror, detect."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from libs.bus.external_input import FirstEvent
from libs.bus.runtime import RejectedInput, TransientFailure
from libs.canonical_json import sha256_hex
from libs.datahub.mcl.decode_error import MclDecodeError
from libs.datahub.mcl.decoder import MclDecoder
from libs.datahub.mcl.mirror import MetadataMirror
from libs.datahub.mcl.schema_registry import SchemaRegistryUnavailable
from libs.events.identity import incident_id_for
from services.context.change_log import ChangeLog
from services.context.upstream_risk import handle_upstream_mcl
from services.context.upstream_risk_dedup import RiskDeduplicator

UPSTREAM_RISK = "upstream-risk"


class MclIntake:
    """One MCL at a time: JSON when it starts with `{`, Confluent-framed Avro otherwise."""

    def __init__(
        self,
        decoder: MclDecoder,
        mirror: MetadataMirror,
        dedup: RiskDeduplicator,
        change_log: ChangeLog | None = None,
    ) -> None:
        self.decoder, self.mirror, self.dedup, self.change_log = decoder, mirror, dedup, change_log

    def __call__(self, raw: bytes) -> list[FirstEvent]:
        try:
            mcl = self.decoder.decode_json(raw) if raw[:1] == b"{" else self.decoder.decode_avro(raw)
            if mcl is None:  # the prefilter: an aspect the mirror does not keep
                return []
            risk = handle_upstream_mcl(mcl, self.mirror, self.dedup)
            if self.change_log is not None:
                self.change_log.record(mcl)
        except MclDecodeError as exc:
            raise RejectedInput(f"mcl-{exc.reason}".replace("_", "-"), str(exc.detail)) from exc
        except SchemaRegistryUnavailable as exc:
            raise TransientFailure(str(exc)) from exc
        self.mirror.flush()
        if risk is None:
            return []
        incident = incident_id_for(UPSTREAM_RISK, risk.change_fingerprint)
        return [FirstEvent(risk, incident, sha256_hex(raw))]

    def remember(self, published: Sequence[FirstEvent]) -> None:
        """After publication: a repeat of the same change is not reported again."""
        now = datetime.now(UTC).isoformat()
        for first in published:
            self.dedup.remember(first.payload.change_fingerprint, now)  # type: ignore[attr-defined]
