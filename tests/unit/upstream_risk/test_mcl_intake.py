"""The context service's MCL intake: untrusted bytes in, an incident's first event out, once per change."""

from __future__ import annotations

import pytest

from libs.bus.handler_errors import RejectedInput
from libs.datahub.mcl.decoder import MclDecoder
from libs.datahub.mcl.mirror import MetadataMirror
from libs.datahub.mcl.schema_change import SchemaChangeError, changed_schema
from libs.datahub.mcl.schema_registry import schema_resolver_for
from libs.datahub.mcp_file import load_mcp_file
from modelguard.emit_mcl import OFFLINE_SCHEMA_ID, encode_change
from modelguard.stack import SCENARIOS
from services.context.mcl_intake import MclIntake

CHURN = SCENARIOS / "churn-monthly-spend"
METADATA = CHURN / "datahub" / "metadata.json"
CHANGE = CHURN / "datahub" / "changes" / "rename-account-age.yaml"


@pytest.fixture
def intake() -> MclIntake:
    mirror = MetadataMirror.in_memory()
    mirror.bootstrap(load_mcp_file(METADATA).records, source="test")
    return MclIntake(MclDecoder(schema_resolver_for(None)), mirror)


def test_a_rename_opens_one_incident_and_a_repeat_after_publication_opens_none(intake: MclIntake) -> None:
    raw, _urn = encode_change(CHANGE, [METADATA], OFFLINE_SCHEMA_ID)
    first = intake(raw)  # settled at once: a direct call has no position to wait for
    assert len(first) == 1 and first[0].incident_id.startswith("inc-")
    assert first[0].payload.cause == "schema_change"
    assert intake(raw) == []


@pytest.mark.parametrize("garbage", [b"", b"\x00\x00", b"\x01abcdefgh", b"{not json", b'{"a": Infinity}'])
def test_garbage_is_rejected_with_an_mcl_reason(intake: MclIntake, garbage: bytes) -> None:
    with pytest.raises(RejectedInput) as caught:
        intake(garbage)
    assert caught.value.reason.startswith("mcl-")


def test_schema_changes_are_checked() -> None:
    schema = next(r.aspect for r in load_mcp_file(METADATA).records if r.aspect_name == "schemaMetadata")
    with pytest.raises(SchemaChangeError):
        changed_schema(schema, "remove_field", "no_such_field")
    with pytest.raises(SchemaChangeError):
        changed_schema(schema, "rename_field", schema.fields[0].fieldPath)
    removed = changed_schema(schema, "remove_field", schema.fields[0].fieldPath)
    assert len(removed.fields) == len(schema.fields) - 1 and len(schema.fields) == len(removed.fields) + 1
