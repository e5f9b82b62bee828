"""`modelguard emit-mcl`: encode an upstream change as DataHub would (a Confluent-framed Avro MCL with the
SDK's schema) and put it on DataHub's MetadataChangeLog topic. For demos, tests and drills."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

import httpx
import yaml
from datahub.metadata.schema_classes import SchemaMetadataClass

from libs.bus.kafka_connection import KafkaConnection
from libs.bus.producer import publish_raw
from libs.datahub.mcl.avro_schema import shipped_mcl_schema, shipped_mcl_schema_json
from libs.datahub.mcl.record_builder import mcl_record
from libs.datahub.mcl.schema_change import changed_schema
from libs.datahub.mcl.wire import encode_confluent
from libs.datahub.mcp_file import load_mcp_file
from libs.yaml_errors import yaml_error_line

SUBJECT = "MetadataChangeLog_Versioned_v1-value"
OFFLINE_SCHEMA_ID = 1  # one of SHIPPED_SCHEMA_IDS: a consumer without a registry decodes it with the shipped schema


class ChangeSpecError(ValueError):
    pass


def registered_schema_id(registry_url: str, auth_headers: Mapping[str, str] | None = None) -> int:
    """Register (or find) the shipped MCL schema under the topic's subject; the registry names its id."""
    response = httpx.post(
        f"{registry_url.rstrip('/')}/subjects/{SUBJECT}/versions",
        json={"schema": shipped_mcl_schema_json()},
        headers={"Content-Type": "application/vnd.schemaregistry.v1+json", **(auth_headers or {})},
        timeout=10,
    )
    response.raise_for_status()
    return int(response.json()["id"])


def encode_change(spec_path: Path, metadata_files: list[Path], schema_id: int) -> tuple[bytes, str]:
    try:
        spec = yaml.safe_load(spec_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ChangeSpecError(yaml_error_line(spec_path, exc)) from exc
    if not isinstance(spec, dict) or spec.get("aspect") != "schemaMetadata":
        raise ChangeSpecError(f"{spec_path}: only schemaMetadata changes are supported")
    missing = [key for key in ("urn", "field", "change") if key not in spec]
    if missing:
        raise ChangeSpecError(f"{spec_path}: missing {', '.join(missing)}")
    urn = str(spec["urn"])
    current = next(
        (
            r.aspect
            for path in metadata_files
            for r in load_mcp_file(path).records
            if r.urn == urn and isinstance(r.aspect, SchemaMetadataClass)
        ),
        None,
    )
    if current is None:
        raise ChangeSpecError(f"{urn} has no schemaMetadata in {', '.join(map(str, metadata_files))}")
    new = changed_schema(current, spec["change"], str(spec["field"]), spec.get("to"))
    record = mcl_record(urn, "schemaMetadata", new, previous=current, run_id=f"modelguard-emit-{spec_path.stem}")
    return encode_confluent(schema_id, record, shipped_mcl_schema()), urn


def emit_change(target: KafkaConnection | str, topic: str, data: bytes, urn: str) -> None:
    asyncio.run(publish_raw(target, topic, data, key=urn.encode()))
