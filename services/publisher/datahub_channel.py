"""The DataHub channel: each incident draft reconciled with what the store holds, written only if it changed."""

from __future__ import annotations

import logging

from datahub.emitter.mcp import MetadataChangeProposalWrapper

from contracts.events.publication import ChannelResult
from services.publisher.channel_errors import ChannelRejected
from services.publisher.datahub_incident_store import IncidentStore
from services.publisher.incident_lifecycle import reconcile
from services.publisher.render_incident import IncidentDraft

log = logging.getLogger(__name__)


class DataHubIncidents:
    """`dry_run` says whether the store's writes reach DataHub (False) or only files (True)."""

    def __init__(self, store: IncidentStore, dry_run: bool) -> None:
        self.store = store
        self.dry_run = dry_run

    def _result(self, draft: IncidentDraft, status: str) -> ChannelResult:
        return ChannelResult(
            channel="datahub",
            status=status,  # type: ignore[arg-type]
            target=", ".join(sorted(draft.info.entities)),
            identifier=draft.urn,
            content_digest=draft.content_digest,
            dry_run=self.dry_run,
        )

    def upsert_incident(self, draft: IncidentDraft) -> ChannelResult:
        try:
            decision = reconcile(self.store.read(draft.urn), draft.info)
            if decision.aspect is not None:
                self.store.write(MetadataChangeProposalWrapper(entityUrn=draft.urn, aspect=decision.aspect))
        except ChannelRejected as exc:
            log.warning("DataHub refused incident %s: %s", draft.urn, exc)
            return self._result(draft, "failed")
        log.info("DataHub incident %s: %s (%s)", draft.urn, decision.status, decision.reason)
        return self._result(draft, decision.status)
