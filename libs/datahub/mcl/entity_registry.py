"""Which aspects belong to which entity type, as the acryl-datahub SDK's registry declares them.

The SDK's generated classes carry DataHub's entity registry on each entity's key aspect:
``KeyAspectClass.ASPECT_INFO = {"keyForEntity": "dataset", "entityAspects": [...]}``. The key aspect
itself belongs to its entity too (DataHub deletes an entity with a DELETE of its key aspect).
"""

from __future__ import annotations

from functools import cache

from datahub.metadata.schema_classes import KEY_ASPECTS


@cache
def entity_aspects() -> dict[str, frozenset[str]]:
    """entity type -> the aspect names DataHub accepts on it (its key aspect included)."""
    registry: dict[str, frozenset[str]] = {}
    for key_class in KEY_ASPECTS.values():
        info = key_class.ASPECT_INFO
        entity = info.get("keyForEntity")
        if isinstance(entity, str):
            registry[entity] = frozenset((*info.get("entityAspects", ()), key_class.ASPECT_NAME))
    return registry


def aspects_of(entity_type: str) -> frozenset[str] | None:
    """The aspects of ``entity_type``; None when the SDK does not know the entity type."""
    return entity_aspects().get(entity_type)
