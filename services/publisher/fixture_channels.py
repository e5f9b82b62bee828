"""Fixture mode: GitHub and DataHub stood in for by files, with the same create / update / no-op semantics.

The files are what would have been sent: a real DataHub can ingest the incident file with
`datahub ingest mcps FILE`. Writes are atomic so a crash never leaves half a publication.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

from datahub.emitter.mcp import MetadataChangeProposalWrapper

from contracts.events.publication import ChannelResult
from libs.canonical_json import sha256_hex


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".publishing-")
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.replace(tmp, path)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")


class FixtureGitHub:
    def __init__(self, root: Path) -> None:
        self.root = root / "github"

    def upsert_comment(self, repository: str, pull_request: int | None, marker: str, body: str) -> ChannelResult:
        pr = f"pr-{pull_request}" if pull_request else "no-pr"
        path = self.root / _slug(repository) / pr / f"{_slug(marker.strip('<!->= '))}.md"
        digest = sha256_hex(body.encode())
        existing = path.read_bytes() if path.exists() else None
        if existing is not None and sha256_hex(existing) == digest:
            status = "noop"
        else:
            _atomic_write(path, body.encode())
            status = "updated" if existing is not None else "created"
        return ChannelResult(
            channel="github",
            status=status,
            target=f"{repository}#{pull_request}" if pull_request else repository,
            identifier=marker,
            content_digest=digest,
            dry_run=True,
        )


class FixtureDataHub:
    def __init__(self, root: Path) -> None:
        self.root = root / "datahub"

    def upsert_incident(
        self, urn: str, semantic_digest: str, mcps: list[MetadataChangeProposalWrapper]
    ) -> ChannelResult:
        path = self.root / f"{_slug(urn)}.json"
        digest_path = path.with_suffix(".digest")
        previous = digest_path.read_text().strip() if digest_path.exists() else None
        if previous == semantic_digest:
            status = "noop"
        else:
            document = [mcp.to_obj(simplified_structure=True) for mcp in mcps]
            _atomic_write(path, (json.dumps(document, indent=2, sort_keys=True) + "\n").encode())
            _atomic_write(digest_path, semantic_digest.encode() + b"\n")
            status = "updated" if previous is not None else "created"
        return ChannelResult(
            channel="datahub",
            status=status,
            target=", ".join(sorted({e for m in mcps for e in getattr(m.aspect, "entities", [])})),
            identifier=urn,
            content_digest=semantic_digest,
            dry_run=True,
        )
