"""Where incidentInfo aspects, and the gate's assertionInfo and assertionRunEvent, are read from and written to:
DataHub GMS through the SDK, or files.

- `GmsIncidentStore`: `DataHubGraph.get_aspect` and `emit_mcp` (Rest.li `ingestProposal`, synchronous to the
  primary store so the next read sees the write).
- `FileIncidentStore`: one MCP JSON file per incident or assertion URN (and one per assertion run), what a real
  DataHub ingests with `datahub ingest mcps FILE` (fixture mode, and where a dry run puts what it would have sent).
- `SplitIncidentStore`: reads one store, writes another (a dry run reads GMS and writes files).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar

import requests
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.emitter.rest_emitter import EmitMode
from datahub.ingestion.graph.client import DataHubGraph
from datahub.metadata.schema_classes import AssertionInfoClass, AssertionRunEventClass, IncidentInfoClass

from libs.atomic_file import atomic_write
from services.publisher.channel_errors import ChannelRejected, ChannelUnavailable
from services.publisher.secret_redaction import SecretRedactor

A = TypeVar("A", IncidentInfoClass, AssertionInfoClass, AssertionRunEventClass)


class IncidentStore(Protocol):
    def read(self, urn: str) -> IncidentInfoClass | None: ...

    def read_assertion(self, urn: str) -> AssertionInfoClass | None: ...

    def read_assertion_run(self, urn: str, run_id: str) -> AssertionRunEventClass | None: ...

    def write(self, mcp: MetadataChangeProposalWrapper) -> None: ...


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")


class FileIncidentStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path_of(self, urn: str) -> Path:
        return self.root / f"{_slug(urn)}.json"

    def path_of_run(self, urn: str, run_id: str) -> Path:
        return self.root / "assertion-runs" / f"{_slug(urn)}--{_slug(run_id)}.json"

    @staticmethod
    def _aspect(path: Path, kind: type[A]) -> A | None:
        if not path.exists():
            return None
        for obj in json.loads(path.read_text()):
            mcp = MetadataChangeProposalWrapper.from_obj(obj)
            if isinstance(mcp.aspect, kind):
                return mcp.aspect
        return None

    def read(self, urn: str) -> IncidentInfoClass | None:
        return self._aspect(self.path_of(urn), IncidentInfoClass)

    def read_assertion(self, urn: str) -> AssertionInfoClass | None:
        return self._aspect(self.path_of(urn), AssertionInfoClass)

    def read_assertion_run(self, urn: str, run_id: str) -> AssertionRunEventClass | None:
        return self._aspect(self.path_of_run(urn, run_id), AssertionRunEventClass)

    def write(self, mcp: MetadataChangeProposalWrapper) -> None:
        assert mcp.entityUrn is not None
        aspect = mcp.aspect
        path = (
            self.path_of_run(mcp.entityUrn, aspect.runId)
            if isinstance(aspect, AssertionRunEventClass)
            else self.path_of(mcp.entityUrn)
        )
        document = [mcp.to_obj(simplified_structure=True)]
        atomic_write(path, (json.dumps(document, indent=2, sort_keys=True) + "\n").encode())


class GmsIncidentStore:
    def __init__(self, graph: DataHubGraph, redactor: SecretRedactor) -> None:
        self.graph = graph
        self.redactor = redactor

    def _failure(self, action: str, urn: str, exc: Exception) -> Exception:
        response = getattr(exc, "response", None)
        if response is None:  # the SDK wraps the requests error it raised from
            response = getattr(exc.__cause__, "response", None)
        status = getattr(response, "status_code", None)
        message = self.redactor.redact(f"DataHub GMS {action} {urn} failed: {type(exc).__name__}: {exc}"[:500])
        if isinstance(status, int) and 400 <= status < 500 and status not in (408, 429):
            return ChannelRejected(message, status)
        return ChannelUnavailable(message)

    def _read(self, urn: str, fetch: Callable[[], A | None]) -> A | None:
        try:
            aspect = fetch()
        except Exception as exc:
            if isinstance(exc, (requests.RequestException, OSError)) or isinstance(
                exc.__cause__, requests.RequestException
            ):
                # the transport's errors (requests' own ValueErrors, not JSON, among them), and GMS's HTTP errors the
                # SDK's POSTed reads (the assertion run's) wrap in an OperationalError: classed by their status
                raise self._failure("read", urn, exc) from None
            # else the SDK read GMS's answer as the shape it expects: AttributeError, GraphError, a ValueError for a
            # missing required field; the same answer comes again, so it is not retried
            why = f"DataHub GMS read {urn} answered in a shape the publisher cannot read: {type(exc).__name__}: {exc}"
            raise ChannelRejected(self.redactor.redact(why[:500])) from None
        if aspect is not None and not aspect.validate():  # the SDK checks a union's type, not a field's
            raise ChannelRejected(
                f"DataHub GMS read {urn} answered a {aspect.ASPECT_NAME} that does not fit its schema"
            )
        return aspect

    def read(self, urn: str) -> IncidentInfoClass | None:
        return self._read(urn, lambda: self.graph.get_aspect(urn, IncidentInfoClass))

    def read_assertion(self, urn: str) -> AssertionInfoClass | None:
        return self._read(urn, lambda: self.graph.get_aspect(urn, AssertionInfoClass))

    def read_assertion_run(self, urn: str, run_id: str) -> AssertionRunEventClass | None:
        return self._read(
            urn, lambda: self.graph.get_latest_timeseries_value(urn, AssertionRunEventClass, {"runId": run_id})
        )

    def write(self, mcp: MetadataChangeProposalWrapper) -> None:
        try:
            self.graph.emit_mcp(mcp, emit_mode=EmitMode.SYNC_PRIMARY)
        except Exception as exc:  # the SDK raises OperationalError, requests errors and more
            raise self._failure("write", str(mcp.entityUrn), exc) from None


class SplitIncidentStore:
    def __init__(self, reads: IncidentStore, writes: IncidentStore) -> None:
        self.reads = reads
        self.writes = writes

    def read(self, urn: str) -> IncidentInfoClass | None:
        return self.reads.read(urn)

    def read_assertion(self, urn: str) -> AssertionInfoClass | None:
        return self.reads.read_assertion(urn)

    def read_assertion_run(self, urn: str, run_id: str) -> AssertionRunEventClass | None:
        return self.reads.read_assertion_run(urn, run_id)

    def write(self, mcp: MetadataChangeProposalWrapper) -> None:
        self.writes.write(mcp)
