"""An MCL's ``entityUrn`` parsed with the SDK's URN classes and checked against its ``entityType``."""

from __future__ import annotations

from datahub.metadata.urns import Urn
from datahub.utilities.urns.error import InvalidUrnError

from libs.datahub.mcl.decode_error import MclDecodeError, describe_exception, short_repr


def checked_urn(urn: object, entity_type: str) -> str:
    """``urn`` when the SDK parses it and it names an entity of ``entity_type``; raises MclDecodeError."""
    if not isinstance(urn, str):
        raise MclDecodeError("bad_urn", f"entityUrn must be a string, found {type(urn).__name__}")
    try:
        parsed = Urn.from_string(urn)
    except (InvalidUrnError, ValueError, IndexError, TypeError) as error:
        detail = f"entityUrn {short_repr(urn)} does not parse: {describe_exception(error)}"
        raise MclDecodeError("bad_urn", detail) from None
    if parsed.entity_type != entity_type:
        detail = f"entityUrn {short_repr(urn)} is a {parsed.entity_type}, entityType says {entity_type}"
        raise MclDecodeError("urn_entity_mismatch", detail)
    return urn
