"""Which addresses a page may link: an absolute http(s) URL with a host, of a sane length, made of the characters
a URL may hold (RFC 3986: no whitespace, control character, quote or angle bracket). Anything else a publication
carries (``javascript:``, ``data:``, a relative or broken address) is shown as text; what is linked is still
escaped by the template like any other value."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

MAX_URL = 2000
_URL_CHARACTERS = re.compile(r"^[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+$")


def web_link(url: object) -> str | None:
    if not isinstance(url, str) or not url or len(url) > MAX_URL:
        return None
    if not _URL_CHARACTERS.match(url):
        return None
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not host or parts.username is not None:
        return None
    return url
