"""Context from DataHub MCP JSON files (the embedded default: no DataHub server needed)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from contracts.context_snapshot import ContextSnapshot
from libs.datahub.graph import MetadataGraph
from libs.datahub.mcp_file import LoadedMetadataFile, load_mcp_file
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
    under ``root`` when one is given (``libs/datahub/file_root.py``)."""

    def __init__(self, paths: Sequence[Path], limits: WalkLimits | None = None, root: Path | None = None) -> None:
        self._paths = tuple(Path(path) for path in paths)
        self._limits = limits or WalkLimits()
        self._root = root

    @property
    def name(self) -> str:
        return FILE_PROVIDER

    @property
    def paths(self) -> tuple[Path, ...]:
        return self._paths

    def collect(self, model_urn: str, fetched_at: str) -> ContextSnapshot:
        """Raises MetadataFileError when a file is malformed."""
        loaded = [load_mcp_file(path, self._root) for path in self._paths]
        graph = MetadataGraph.from_records(record for file in loaded for record in file.records)
        return assemble_snapshot(
            graph,
            model_urn,
            ProvenanceStamp(FILE_PROVIDER, fetched_at),
            self._limits,
            source_warnings=(*CAPABILITY_GAPS, *_loading_warnings(loaded), *_no_files(self._paths)),
        )


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
