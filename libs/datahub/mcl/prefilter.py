"""Cheap relevance test on an MCL's entityType / aspectName / changeType, before the aspect is parsed.

The mirror keeps two kinds of aspects:

- every aspect that carries lineage, found from the ``Relationship`` annotations of the SDK's schemas
  (:func:`libs.datahub.relationships.relationship_specs`, ``isLineage``), plus every aspect with
  ``fineGrainedLineages`` (column-level lineage);
- the aspects risk detection and impact answers read: schemaMetadata, ownership, status,
  assertionInfo/assertionRunEvent, incidentInfo, dataJobInfo, dataJobInputOutput, mlModelProperties,
  mlFeatureProperties.

A DELETE of an entity's key aspect (the whole entity is deleted) is relevant too. Everything else — usage
statistics, browse paths, properties, profiles, operations, most events on a busy DataHub — is dropped
after :class:`~libs.datahub.mcl.decoder.MclDecoder` has validated it (envelope, URN, registry, size,
strict JSON), without building SDK objects.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from datahub.emitter.aspect import ASPECT_MAP
from datahub.metadata.schema_classes import KEY_ASPECT_NAMES, ChangeTypeClass

from libs.datahub.fine_grained import aspects_with_fine_grained_lineage
from libs.datahub.relationships import relationship_specs

MIRRORED_NON_LINEAGE_ASPECTS = frozenset(
    {
        "schemaMetadata",
        "ownership",
        "status",
        "assertionInfo",
        "assertionRunEvent",
        "incidentInfo",
        "dataJobInfo",
        "dataJobInputOutput",
        "mlModelProperties",
        "mlFeatureProperties",
    }
)

ALL_CHANGE_TYPES = frozenset(
    {
        ChangeTypeClass.UPSERT,
        ChangeTypeClass.CREATE,
        ChangeTypeClass.CREATE_ENTITY,
        ChangeTypeClass.UPDATE,
        ChangeTypeClass.PATCH,
        ChangeTypeClass.RESTATE,
        ChangeTypeClass.DELETE,
    }
)


@cache
def lineage_aspects() -> frozenset[str]:
    """Aspects with at least one ``isLineage`` relationship annotation or column-level lineage."""
    annotated = {name for name in ASPECT_MAP if any(spec.is_lineage for spec in relationship_specs(name))}
    return frozenset(annotated | aspects_with_fine_grained_lineage())


@cache
def mirrored_aspects() -> frozenset[str]:
    """Every aspect the mirror keeps (lineage aspects and the aspects listed above)."""
    return lineage_aspects() | MIRRORED_NON_LINEAGE_ASPECTS


@dataclass(frozen=True)
class MclPrefilter:
    """Keeps an MCL when its aspect is mirrored (or it deletes an entity) and its change type is accepted.

    ``entity_types`` narrows further (None: any entity type).
    """

    aspects: frozenset[str]
    change_types: frozenset[str] = ALL_CHANGE_TYPES
    entity_types: frozenset[str] | None = None
    key_aspects: frozenset[str] = frozenset(KEY_ASPECT_NAMES)

    @classmethod
    def for_mirror(cls, entity_types: Iterable[str] | None = None) -> MclPrefilter:
        return cls(aspects=mirrored_aspects(), entity_types=None if entity_types is None else frozenset(entity_types))

    def keeps(self, entity_type: object, aspect_name: object, change_type: object) -> bool:
        if change_type not in self.change_types:
            return False
        if self.entity_types is not None and entity_type not in self.entity_types:
            return False
        if aspect_name in self.aspects:
            return True
        return change_type == ChangeTypeClass.DELETE and aspect_name in self.key_aspects
