"""Authentication to the schema registry that serves MCL writer schemas: HTTP basic or a bearer token.

Confluent Cloud's registry takes an API key and secret as basic auth; DataHub's own registry (GMS at
``/schema-registry/api/``) takes a DataHub access token as a bearer token when metadata service authentication is
on. Variables:

- ``MODELGUARD_SCHEMA_REGISTRY_USER`` with ``MODELGUARD_SCHEMA_REGISTRY_PASSWORD`` or ``..._PASSWORD_FILE``: basic;
- ``MODELGUARD_SCHEMA_REGISTRY_TOKEN`` or ``..._TOKEN_FILE``: bearer.

The secret goes into the ``Authorization`` header and nowhere else: not the repr, not a log line, not an error.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

PREFIX = "MODELGUARD_SCHEMA_REGISTRY_"


class RegistryAuthError(ValueError):
    """A registry credential setting that cannot work; one line naming the variable."""


@dataclass(frozen=True)
class RegistryAuth:
    kind: Literal["none", "basic", "bearer"] = "none"
    user: str | None = None
    _authorization: str | None = field(default=None, repr=False)

    def headers(self) -> dict[str, str]:
        return {"Authorization": self._authorization} if self._authorization else {}

    def describe(self) -> str:
        return {"none": "no authentication", "basic": f"basic auth as {self.user}", "bearer": "a bearer token"}[
            self.kind
        ]


def _secret(environ: Mapping[str, str], name: str) -> str | None:
    """``PREFIX + name`` itself, or the content of the file ``PREFIX + name + _FILE`` names (a mounted Secret)."""
    value = environ.get(PREFIX + name) or None
    path = environ.get(PREFIX + name + "_FILE", "").strip()
    if value is not None and path:
        raise RegistryAuthError(f"{PREFIX}{name} and {PREFIX}{name}_FILE are both set; set one")
    if not path:
        return value
    try:
        value = Path(path).read_text(encoding="utf-8").rstrip("\r\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise RegistryAuthError(f"{PREFIX}{name}_FILE: cannot read {path}: {exc}") from None
    if not value:
        raise RegistryAuthError(f"{PREFIX}{name}_FILE: {path} is empty")
    return value


def registry_auth_from(environ: Mapping[str, str]) -> RegistryAuth:
    user = environ.get(PREFIX + "USER", "").strip() or None
    password = _secret(environ, "PASSWORD")
    token = _secret(environ, "TOKEN")
    if token is not None and (user is not None or password is not None):
        raise RegistryAuthError(f"{PREFIX}TOKEN and {PREFIX}USER/PASSWORD are both set; use basic auth or a token")
    if token is not None:
        return RegistryAuth("bearer", None, f"Bearer {token}")
    if user is None and password is None:
        return RegistryAuth()
    if user is None:
        raise RegistryAuthError(f"{PREFIX}PASSWORD is set without {PREFIX}USER")
    if password is None:
        raise RegistryAuthError(f"{PREFIX}USER is set without {PREFIX}PASSWORD or {PREFIX}PASSWORD_FILE")
    if ":" in user:
        raise RegistryAuthError(f"{PREFIX}USER must not contain ':' (HTTP basic auth separates the password with it)")
    encoded = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return RegistryAuth("basic", user, f"Basic {encoded}")


def registry_auth_for(environ: Mapping[str, str], registry_url: str | None) -> RegistryAuth:
    """The registry's credentials, refused when they are set for no registry (they would silently do nothing)."""
    auth = registry_auth_from(environ)
    if auth.kind != "none" and not registry_url:
        raise RegistryAuthError(f"schema registry credentials are set but {PREFIX}URL is not")
    return auth
