"""Context from DataHub MCP JSON files (the embedded default: no DataHub server needed)."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path

from contracts.context_snapshot import ContextSnapshot
from libs.datahub.graph import MetadataGraph
from libs.datahub.mcp_file import LoadedMetadataFile, MetadataFileError, decode_mcp_text, read_mcp_text
from libs.datahub.provenance import ProvenanceStamp
from libs.datahub.snapshot_assembly import WalkLimits, assemble_snapshot

FILE_PROVIDER = "file"

# What a DataHub server would add that files cannot: said once in every file snapshot.
CAPABILITY_GAPS = (
    "file provider: lineage is computed locally from Relationship annotations, not by DataHub's "
    "lineage search; only entities present in the files are known",
    "file provider: no aspect history (schema versions) beyond the latest aspect in the files",
)


class FileContextProvider:
    """Reads the given MCP JSON files on every ``collect`` and assembles a snapshot for one model; relative paths
    under ``root`` when one is given (``libs/datahub/file_root.py``). A file whose text has not changed since the
    last ``collect`` (same SHA-256) is not decoded again: decoding through the SDK's typed classes was most of the
    context phase's time (250 ms of 270 for the 14 bundled scenarios' files). The lineage graph is kept for the
    files' digests as well: building it from every record was then most of a collect (17 of 18 ms for those files),
    and it is built again only when a file's text changed. Snapshots only read the graph."""

    def __init__(self, paths: Sequence[Path], limits: WalkLimits | None = None, root: Path | None = None) -> None:
        self._paths = tuple(Path(path) for path in paths)
        self._limits = limits or WalkLimits()
        self._root = root
        self._decoded: dict[Path, tuple[str, LoadedMetadataFile]] = {}
        """each path's text digest and what it decoded to, as of the last ``collect``"""
        self._graph: tuple[tuple[str, ...], MetadataGraph] | None = None
        """the graph of every file's records, and the file digests it was built from"""
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return FILE_PROVIDER

    @property
    def paths(self) -> tuple[Path, ...]:
        return self._paths

    def collect(self, model_urn: str, fetched_at: str) -> ContextSnapshot:
        """Raises MetadataFileError when a file is malformed."""
        files = [self._load(path) for path in self._paths]
        graph = self._graph_of(files)
        loaded = [file for _, file in files]
        return assemble_snapshot(
            graph,
            model_urn,
            ProvenanceStamp(FILE_PROVIDER, fetched_at),
            self._limits,
            source_warnings=(*CAPABILITY_GAPS, *_loading_warnings(loaded), *_no_files(self._paths)),
        )

    def warm(self) -> list[MetadataFileError]:
        """Decode the files now (the context service does at its start), so that the first incident does not pay
        for it (~250 ms for the bundled scenarios' files). A file that cannot be read or decoded is returned, not
        raised: ``collect`` reports it with the incident, as it would have without the warm-up."""
        problems: list[MetadataFileError] = []
        decoded: list[tuple[str, LoadedMetadataFile]] = []
        for path in self._paths:
            try:
                decoded.append(self._load(path))
            except MetadataFileError as problem:
                problems.append(problem)
        if not problems:
            self._graph_of(decoded)
        return problems

    def _load(self, path: Path) -> tuple[str, LoadedMetadataFile]:
        """The file's text digest and what it decodes to."""
        text = read_mcp_text(path, self._root)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        with self._lock:
            known = self._decoded.get(path)
        if known is not None and known[0] == digest:
            return known
        loaded = decode_mcp_text(path, text)
        with self._lock:
            self._decoded[path] = (digest, loaded)
        return digest, loaded

    def _graph_of(self, files: Sequence[tuple[str, LoadedMetadataFile]]) -> MetadataGraph:
        """The graph of the files' records (each file as its digest and what it decoded to)."""
        key = tuple(digest for digest, _ in files)
        with self._lock:
            known = self._graph
        if known is not None and known[0] == key:
            return known[1]
        graph = MetadataGraph.from_records(record for _, file in files for record in file.records)
        with self._lock:
            self._graph = (key, graph)
        return graph


def _no_files(paths: Sequence[Path]) -> list[str]:
    return [] if paths else ["file provider: no metadata files are configured; the snapshot is empty"]


def _loading_warnings(loaded: Sequence[LoadedMetadataFile]) -> list[str]:
    warnings: list[str] = []
    for file in loaded:
        warnings.extend(file.warnings)
        if file.skipped:
            reasons = sorted({entry.reason for entry in file.skipped})
            warnings.append(f"{file.path}: skipped {len(file.skipped)} entries: {'; '.join(reasons)}")
    return warnings
