"""An MCL's ``entityUrn`` parsed with the SDK's URN classes and checked against its ``entityType``.

Parses are cached by URN string (an entity's aspects arrive one MCL each, so URNs repeat): the SDK's
parser is a tenth of the cost of decoding an MCL.
"""

from __future__ import annotations

from functools import lru_cache

from datahub.metadata.urns import Urn
from datahub.utilities.urns.error import InvalidUrnError

from libs.datahub.mcl.decode_error import MclDecodeError, describe_exception, short_repr

URN_CACHE_SIZE = 65_536


def checked_urn(urn: object, entity_type: str) -> str:
    """``urn`` when the SDK parses it and it names an entity of ``entity_type``; raises MclDecodeError."""
    if not isinstance(urn, str):
        raise MclDecodeError("bad_urn", f"entityUrn must be a string, found {type(urn).__name__}")
    parsed_type, problem = _entity_type_of(urn)
    if problem is not None:
        raise MclDecodeError("bad_urn", f"entityUrn {short_repr(urn)} does not parse: {problem}")
    if parsed_type != entity_type:
        detail = f"entityUrn {short_repr(urn)} is a {parsed_type}, entityType says {entity_type}"
        raise MclDecodeError("urn_entity_mismatch", detail)
    return urn


@lru_cache(maxsize=URN_CACHE_SIZE)
def _entity_type_of(urn: str) -> tuple[str | None, str | None]:
    """(entity type, None) for a URN the SDK parses, else (None, why not)."""
    try:
        return Urn.from_string(urn).entity_type, None
    except (InvalidUrnError, ValueError, IndexError, TypeError) as error:
        return None, describe_exception(error)
