"""Filling an empty mirror from DataHub metadata files (MCP JSON, as ``datahub`` file sinks write), in batches.

An MCP entry's aspect is checked the way the MCL intake checks one (the URN parsed and of the entry's entity type,
the aspect one of the entity's in the SDK's registry, strict JSON, the aspect's SDK class by
:func:`~libs.datahub.mcl.aspect_shape.fits_schema` or else the SDK route) and then handed to
:meth:`MetadataMirror.bootstrap_json` as JSON: no SDK object is built for an aspect that certainly fits its
schema, and the mirror writes a transaction every :data:`~libs.datahub.mcl.mirror.BOOTSTRAP_FLUSH_EVERY`
aspects. A file with MCE snapshots (``proposedSnapshot``) takes :func:`libs.datahub.mcp_file.load_mcp_file`'s
typed route. An entry that does not validate fails the file (:class:`MetadataFileError`, with its index).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from datahub.emitter.aspect import JSON_CONTENT_TYPE
from datahub.emitter.serialization_helper import pre_json_transform

from libs.datahub.file_root import readable
from libs.datahub.mcl.aspect_decode import decode_aspect
from libs.datahub.mcl.aspect_shape import fits_schema
from libs.datahub.mcl.decode_error import MclDecodeError
from libs.datahub.mcl.entity_registry import aspects_of
from libs.datahub.mcl.mirror import MetadataMirror
from libs.datahub.mcl.prefilter import mirrored_aspects
from libs.datahub.mcl.strict_json import parse_strict_json
from libs.datahub.mcl.urn_check import checked_urn
from libs.datahub.mcp_file import MetadataFileError, load_mcp_file

UPSERTS = frozenset({"UPSERT", "CREATE", "CREATE_ENTITY", "UPDATE", "RESTATE"})

MirroredAspect = tuple[str, str, str, dict[str, Any]]
"""(urn, entity type, aspect name, aspect JSON)."""


def bootstrap_from_files(mirror: MetadataMirror, paths: Iterable[Path], root: Path | None = None) -> int:
    """Load every mirrored aspect of the files (relative ones under ``root`` when one is given); how many were
    kept. Raises MetadataFileError."""
    paths = tuple(paths)
    aspects = (aspect for path in paths for aspect in mirrored_aspects_of_file(path, root))
    return mirror.bootstrap_json(aspects, source="file:" + ",".join(str(path) for path in paths))


def mirrored_aspects_of_file(path: Path, root: Path | None = None) -> Iterator[MirroredAspect]:
    entries = _entries(path, readable(path, root))
    if any(isinstance(entry, dict) and "proposedSnapshot" in entry for entry in entries):
        for record in load_mcp_file(path, root).records:
            if record.aspect_name in mirrored_aspects():
                yield record.urn, record.entity_type, record.aspect_name, pre_json_transform(record.aspect.to_obj())
        return
    for index, entry in enumerate(entries):
        try:
            aspect = _mirrored_aspect(entry)
        except MclDecodeError as error:
            raise MetadataFileError(path, str(error), index) from None
        if aspect is not None:
            yield aspect


def _mirrored_aspect(entry: Any) -> MirroredAspect | None:
    if not isinstance(entry, dict):
        raise MclDecodeError("bad_envelope", f"expected an object, found {type(entry).__name__}")
    aspect_name = entry.get("aspectName")
    if aspect_name not in mirrored_aspects() or entry.get("changeType", "UPSERT") not in UPSERTS:
        return None
    entity_type = entry.get("entityType")
    if not isinstance(entity_type, str):
        raise MclDecodeError("bad_envelope", "entityType must be a string")
    urn = checked_urn(entry.get("entityUrn"), entity_type)
    if aspect_name not in (aspects_of(entity_type) or ()):
        raise MclDecodeError("aspect_not_of_entity", f"aspect {aspect_name} is not an aspect of {entity_type}")
    aspect_json = _aspect_json(entry.get("aspect"), f"aspect {aspect_name} of {urn}")
    if not fits_schema(aspect_name, aspect_json):
        decode_aspect(aspect_name, aspect_json)  # not certain: the SDK class decides (raises bad_aspect)
    return urn, entity_type, aspect_name, aspect_json


def _aspect_json(generic: Any, what: str) -> dict[str, Any]:
    if not isinstance(generic, dict):
        raise MclDecodeError("missing_aspect", f"{what} has no aspect object")
    if "json" in generic:
        value = generic["json"]
    else:
        if generic.get("contentType", JSON_CONTENT_TYPE) != JSON_CONTENT_TYPE or not isinstance(
            generic.get("value"), str
        ):
            raise MclDecodeError("unsupported_content_type", f"{what} is not a JSON string value")
        value = parse_strict_json(generic["value"], "bad_aspect_json", what)
    if not isinstance(value, dict):
        raise MclDecodeError("bad_aspect_json", f"{what} must be a JSON object")
    return value


def _entries(path: Path, location: Path) -> list[Any]:
    try:
        text = location.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise MetadataFileError(path, f"cannot read the file: {error}") from None
    try:
        document = parse_strict_json(text, "not_json", str(path))
    except MclDecodeError as error:
        raise MetadataFileError(path, f"not valid JSON: {error.detail}") from None
    if not isinstance(document, list):
        raise MetadataFileError(path, f"expected a JSON array of MCPs/MCEs, found {type(document).__name__}")
    return document
