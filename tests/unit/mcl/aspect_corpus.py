"""Aspect values as DataHub writes them, for the checks that compare a fast route with the SDK's own.

Every aspect of DataHub's golden files (``<repo>/../shared/datahub-golden``, read in place) and of the
fixtures' DataHub catalogues: once as the file holds it (MCP files' ``aspect.json`` or ``aspect.value``),
once as the SDK re-encodes it (``pre_json_transform(to_obj())``, also for MCE snapshots).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from datahub.emitter.serialization_helper import pre_json_transform

from libs.datahub.mcp_file import MetadataFileError, load_mcp_file

REPO = Path(__file__).resolve().parents[3]
GOLDEN_DIR = REPO.parent / "shared" / "datahub-golden"

AspectSample = tuple[str, str, dict[str, Any]]
"""(urn, aspect name, aspect JSON)."""


def corpus_files() -> list[Path]:
    golden = sorted(GOLDEN_DIR.glob("*.json")) if GOLDEN_DIR.is_dir() else []
    fixtures = sorted(REPO.glob("fixtures/*/*/datahub/metadata.json"))
    return [*golden, *fixtures]


def aspect_samples() -> list[AspectSample]:
    samples: dict[tuple[str, str], AspectSample] = {}
    for path in corpus_files():
        for sample in _as_written(path):
            samples.setdefault((sample[1], json.dumps(sample[2], sort_keys=True)), sample)
        try:
            records = load_mcp_file(path).records
        except MetadataFileError:
            continue
        for record in records:
            value = pre_json_transform(record.aspect.to_obj())
            key = (record.aspect_name, json.dumps(value, sort_keys=True))
            samples.setdefault(key, (record.urn, record.aspect_name, value))
    return list(samples.values())


def _as_written(path: Path) -> Iterator[AspectSample]:
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    for entry in entries if isinstance(entries, list) else ():
        if not isinstance(entry, dict) or not isinstance(entry.get("aspect"), dict) or not entry.get("aspectName"):
            continue
        aspect = entry["aspect"]
        try:
            value = aspect["json"] if "json" in aspect else json.loads(aspect["value"])
        except (KeyError, TypeError, ValueError):
            continue
        if isinstance(value, dict):
            yield str(entry.get("entityUrn")), str(entry["aspectName"]), value
