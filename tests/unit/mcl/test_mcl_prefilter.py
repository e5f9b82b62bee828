"""The prefilter drops irrelevant MCLs after validation and before any SDK object is built; a kept aspect is
checked against its SDK class's schema without building it, and converted only when a reader asks."""

from __future__ import annotations

from typing import Any

import pytest
from datahub.metadata.schema_classes import DatasetPropertiesClass, StatusClass

from libs.datahub.mcl.aspect_decode import TypedAspect, decode_aspect
from libs.datahub.mcl.decode_error import MclDecodeError
from libs.datahub.mcl.decoder import MclDecoder
from libs.datahub.mcl.prefilter import MclPrefilter, lineage_aspects, mirrored_aspects
from libs.datahub.mcl.schema_registry import ShippedSchemaResolver
from tests.unit.mcl.mcl_test_inputs import Churn, avro_message, mcl_record


class _CountingAspectDecoder:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, aspect_name: str, aspect_json: dict[str, Any]) -> TypedAspect:
        self.calls.append(aspect_name)
        return decode_aspect(aspect_name, aspect_json)


def test_lineage_aspects_come_from_the_sdk_s_relationship_annotations() -> None:
    assert {"upstreamLineage", "dataJobInputOutput", "mlFeatureProperties", "mlModelProperties"} <= lineage_aspects()
    assert "datasetProperties" not in lineage_aspects() and "ownership" not in lineage_aspects()
    assert {"schemaMetadata", "ownership", "assertionRunEvent", "incidentInfo", "status"} <= mirrored_aspects()


def test_irrelevant_aspects_are_validated_then_skipped_without_converting_them() -> None:
    counting = _CountingAspectDecoder()
    decoder = MclDecoder(ShippedSchemaResolver(), aspect_decoder=counting)
    irrelevant = mcl_record(Churn.RAW, "datasetProperties", DatasetPropertiesClass(name="customers"))
    usage = mcl_record(Churn.RAW, "datasetUsageStatistics", {"timestampMillis": 1, "eventGranularity": None})

    assert decoder.decode_avro(avro_message(irrelevant)) is None
    assert decoder.decode_avro(avro_message(usage)) is None
    assert counting.calls == []  # skipped aspects are never converted to SDK classes
    kept = decoder.decode_avro(avro_message(mcl_record(Churn.RAW, "status", StatusClass(removed=True))))

    assert kept is not None
    assert (decoder.counts.skipped, decoder.counts.kept) == (2, 1)
    assert counting.calls == []  # a kept aspect that certainly fits its class's schema is not converted to decode
    assert kept.aspect == StatusClass(removed=True) and kept.aspect is kept.aspect
    assert counting.calls == ["status"]  # converted once, when read


def test_a_kept_aspect_the_schema_check_is_not_sure_of_goes_through_the_sdk_class() -> None:
    counting = _CountingAspectDecoder()
    decoder = MclDecoder(ShippedSchemaResolver(), aspect_decoder=counting)
    newer = mcl_record(Churn.RAW, "status", {"removed": False, "aFieldANewerServerAdds": 1})
    wrong = mcl_record(Churn.RAW, "status", {"removed": "no"})

    kept = decoder.decode_avro(avro_message(newer))
    assert kept is not None and counting.calls == ["status"]  # the SDK accepts it (the unknown field dropped)
    with pytest.raises(MclDecodeError) as caught:
        decoder.decode_avro(avro_message(wrong))
    assert caught.value.reason == "bad_aspect" and counting.calls == ["status", "status"]


def test_an_irrelevant_aspect_that_is_not_json_is_refused_not_skipped() -> None:
    irrelevant = mcl_record(Churn.RAW, "datasetProperties", DatasetPropertiesClass(name="customers"))
    irrelevant["aspect"]["value"] = b"{this is not even JSON"

    with pytest.raises(MclDecodeError) as caught:
        MclDecoder(ShippedSchemaResolver()).decode_avro(avro_message(irrelevant))
    assert caught.value.reason == "bad_aspect_json"


def test_an_entity_deletion_is_kept_even_though_key_aspects_are_not_mirrored() -> None:
    prefilter = MclPrefilter.for_mirror()

    assert prefilter.keeps("dataset", "datasetKey", "DELETE")
    assert not prefilter.keeps("dataset", "datasetKey", "UPSERT")
    assert not prefilter.keeps("dataset", "schemaMetadata", "NOT_A_CHANGE_TYPE")


def test_the_prefilter_can_be_narrowed_to_entity_types() -> None:
    prefilter = MclPrefilter.for_mirror(entity_types=["dataset", "mlModel"])

    assert prefilter.keeps("dataset", "schemaMetadata", "UPSERT")
    assert not prefilter.keeps("chart", "chartInfo", "UPSERT")
