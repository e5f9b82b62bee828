"""The DataHub channel: each incident draft reconciled with what the store holds, written only if it changed; the
gate's assertion and its run likewise (a run is written once, a later different result for the same run updates
it)."""

from __future__ import annotations

import logging
from typing import TypeVar

from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.metadata.schema_classes import AssertionInfoClass, AssertionRunEventClass

from contracts.events.publication import ChannelResult
from services.publisher.channel_errors import ChannelRejected
from services.publisher.datahub_incident_store import IncidentStore
from services.publisher.incident_lifecycle import reconcile
from services.publisher.render_assertion import AssertionDraft
from services.publisher.render_incident import IncidentDraft

log = logging.getLogger(__name__)
Aspect = TypeVar("Aspect", AssertionInfoClass, AssertionRunEventClass)


class DataHubIncidents:
    """`dry_run` says whether the store's writes reach DataHub (False) or only files (True)."""

    def __init__(self, store: IncidentStore, dry_run: bool) -> None:
        self.store = store
        self.dry_run = dry_run

    def _result(self, target: str, identifier: str, digest: str, status: str) -> ChannelResult:
        return ChannelResult(
            channel="datahub",
            status=status,  # type: ignore[arg-type]
            target=target,
            identifier=identifier,
            content_digest=digest,
            dry_run=self.dry_run,
        )

    def upsert_incident(self, draft: IncidentDraft) -> ChannelResult:
        target = ", ".join(sorted(draft.info.entities))
        try:
            decision = reconcile(self.store.read(draft.urn), draft.info)
            if decision.aspect is not None:
                self.store.write(MetadataChangeProposalWrapper(entityUrn=draft.urn, aspect=decision.aspect))
        except ChannelRejected as exc:
            log.warning("DataHub refused incident %s: %s", draft.urn, exc)
            return self._result(target, draft.urn, draft.content_digest, "failed")
        log.info("DataHub incident %s: %s (%s)", draft.urn, decision.status, decision.reason)
        return self._result(target, draft.urn, draft.content_digest, decision.status)

    def _write_unless_same(self, urn: str, current: Aspect | None, desired: Aspect) -> str:
        if current is not None and current.to_obj() == desired.to_obj():
            return "noop"
        self.store.write(MetadataChangeProposalWrapper(entityUrn=urn, aspect=desired))
        return "created" if current is None else "updated"

    def upsert_assertion(self, draft: AssertionDraft) -> list[ChannelResult]:
        """The assertion (written when new or changed), then this evaluation's run of it."""
        target = draft.info.customAssertion.entity if draft.info.customAssertion else draft.urn
        run_identifier = f"{draft.urn}#run={draft.run_id}"
        try:
            status = self._write_unless_same(draft.urn, self.store.read_assertion(draft.urn), draft.info)
        except ChannelRejected as exc:
            log.warning("DataHub refused assertion %s: %s", draft.urn, exc)
            return [self._result(target, draft.urn, draft.info_digest, "failed")]
        assertion = self._result(target, draft.urn, draft.info_digest, status)
        try:
            run = self.store.read_assertion_run(draft.urn, draft.run_id)
            # a run already recorded keeps its timestamp: the write replaces that row, it adds none
            desired = draft.run_at(run.timestampMillis) if run is not None else draft.run
            run_status = self._write_unless_same(draft.urn, run, desired)
        except ChannelRejected as exc:
            log.warning("DataHub refused assertion %s's run %s: %s", draft.urn, draft.run_id, exc)
            run_status = "failed"
        log.info("DataHub assertion %s: %s, run %s: %s", draft.urn, status, draft.run_id, run_status)
        return [assertion, self._result(target, run_identifier, draft.run_digest, run_status)]
