"""Where incidentInfo aspects are read from and written to: DataHub GMS through the SDK, or files.

- `GmsIncidentStore`: `DataHubGraph.get_aspect` and `emit_mcp` (Rest.li `ingestProposal`, synchronous to the
  primary store so the next read sees the write).
- `FileIncidentStore`: one MCP JSON file per incident URN, what a real DataHub ingests with
  `datahub ingest mcps FILE` (fixture mode, and where a dry run puts what it would have sent).
- `SplitIncidentStore`: reads one store, writes another (a dry run reads GMS and writes files).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Protocol

import requests
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.emitter.rest_emitter import EmitMode
from datahub.ingestion.graph.client import DataHubGraph
from datahub.metadata.schema_classes import IncidentInfoClass

from services.publisher.atomic_files import atomic_write
from services.publisher.channel_errors import ChannelRejected, ChannelUnavailable
from services.publisher.secret_redaction import SecretRedactor


class IncidentStore(Protocol):
    def read(self, urn: str) -> IncidentInfoClass | None: ...

    def write(self, mcp: MetadataChangeProposalWrapper) -> None: ...


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")


class FileIncidentStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path_of(self, urn: str) -> Path:
        return self.root / f"{_slug(urn)}.json"

    def read(self, urn: str) -> IncidentInfoClass | None:
        path = self.path_of(urn)
        if not path.exists():
            return None
        for obj in json.loads(path.read_text()):
            mcp = MetadataChangeProposalWrapper.from_obj(obj)
            if isinstance(mcp.aspect, IncidentInfoClass):
                return mcp.aspect
        return None

    def write(self, mcp: MetadataChangeProposalWrapper) -> None:
        assert mcp.entityUrn is not None
        document = [mcp.to_obj(simplified_structure=True)]
        atomic_write(self.path_of(mcp.entityUrn), (json.dumps(document, indent=2, sort_keys=True) + "\n").encode())


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

    def read(self, urn: str) -> IncidentInfoClass | None:
        try:
            return self.graph.get_aspect(urn, IncidentInfoClass)
        except (requests.RequestException, OSError, ValueError) as exc:
            raise self._failure("read", urn, exc) from None

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

    def write(self, mcp: MetadataChangeProposalWrapper) -> None:
        self.writes.write(mcp)
