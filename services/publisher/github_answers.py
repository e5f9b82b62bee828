"""The shapes the publisher reads in GitHub's answers, checked where they arrive: JSON (``strict_loads``), a
listing's page a list (or an object holding one under its key), every comment, review and check run an object
with an integer ``id``, text where the publisher reads text and an object for a check run's ``output``. GitHub
answers so; a proxy in front of it, an Enterprise server of another version or a broken answer need not, and that
is a refused step with the reason (``ChannelRejected``: a failed channel result), not an AttributeError, KeyError,
TypeError or RecursionError out of the handler."""

from __future__ import annotations

from typing import Any

import httpx

from libs.canonical_json import strict_loads
from services.publisher.channel_errors import ChannelRejected

Json = dict[str, Any]
TEXT_FIELDS = ("body", "html_url", "state", "external_id", "conclusion")
OBJECT_FIELDS = ("output",)


def answer_json(response: httpx.Response, where: str) -> Any:
    """The JSON of ``response``, answered to the request ``where`` (``GitHub <method> <path>``)."""
    try:
        return strict_loads(response.content)
    except ValueError as error:
        why = f"{where}: answered {response.status_code} with a body that is not JSON ({error})"
        raise ChannelRejected(why[:300]) from None


def listing_page(document: Any, items_key: str | None, where: str) -> list[Any]:
    """The items of one page of a listing: the page itself, or the list it holds under ``items_key``."""
    if items_key is None:
        if not isinstance(document, list):
            raise ChannelRejected(f"{where}: answered a page that is not a list")
        return document
    items = document.get(items_key) if isinstance(document, dict) else None
    if not isinstance(items, list):
        raise ChannelRejected(f"{where}: answered a page that is not an object holding {items_key}")
    return items


def github_object(value: Any, where: str) -> Json:
    """``value`` when it is a comment, review or check run as the publisher reads one."""
    if not isinstance(value, dict):
        raise ChannelRejected(f"{where}: answered {type(value).__name__} where an object was expected")
    if type(value.get("id")) is not int:
        raise ChannelRejected(f"{where}: answered an object without an integer id")
    for name in TEXT_FIELDS:
        if value.get(name) is not None and not isinstance(value[name], str):
            raise ChannelRejected(f"{where}: answered an object whose {name} is not text")
    for name in OBJECT_FIELDS:
        if value.get(name) is not None and not isinstance(value[name], dict):
            raise ChannelRejected(f"{where}: answered an object whose {name} is not an object")
    return value
