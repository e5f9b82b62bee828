"""Writer-schema resolution for Confluent-framed MCLs: a schema registry client, or the SDK's schema offline.

Schema ids are never hard-coded. DataHub has published several MCL schema versions under different ids
(2/3, 11/12, 18/19 have been seen), so when a registry is configured every id is resolved through it
(DataHub's built-in registry answers the Confluent REST API at ``<gms>/schema-registry/api/``). Only when
no registry is configured does :class:`ShippedSchemaResolver` map the ids known to name the MCL schema
shipped in acryl-datahub (:data:`SHIPPED_SCHEMA_IDS`) to it; any other id is unknown and its messages are
dead-lettered, never decoded with a schema they were perhaps not written with.

Errors are split by what the consumer should do:

- :class:`UnknownSchemaId` / :class:`InvalidRegisteredSchema`: the message can never be decoded (dead letter);
- :class:`SchemaRegistryUnavailable`: the registry could not be asked (network, 5xx); retry later, do not
  dead-letter the message.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Protocol

import fastavro
import httpx

from libs.canonical_json import strict_loads
from libs.datahub.mcl.avro_schema import ParsedSchema, shipped_mcl_schema
from libs.datahub.mcl.decode_error import describe_exception

DEFAULT_TIMEOUT_SECONDS = 5.0


class SchemaRegistryError(Exception):
    """Base of the errors of writer-schema resolution."""


class UnknownSchemaId(SchemaRegistryError):
    def __init__(self, schema_id: int, detail: str = "") -> None:
        self.schema_id = schema_id
        super().__init__(f"schema id {schema_id} is unknown to the schema registry" + (f": {detail}" if detail else ""))


class InvalidRegisteredSchema(SchemaRegistryError):
    def __init__(self, schema_id: int, detail: str) -> None:
        self.schema_id = schema_id
        super().__init__(f"schema id {schema_id} does not name a usable Avro schema: {detail}")


class SchemaRegistryUnavailable(SchemaRegistryError):
    """Transient: the registry did not answer usefully (connection error, timeout, 5xx)."""


class SchemaResolver(Protocol):
    def resolve(self, schema_id: int) -> ParsedSchema:
        """The parsed writer schema for ``schema_id``; raises a :class:`SchemaRegistryError`."""
        ...


SHIPPED_SCHEMA_IDS = frozenset({1, 18, 19})
"""Ids whose writer schema is the one shipped in acryl-datahub: 18/19, the newest DataHub MCL schemas
(versioned, timeseries), and 1, what ``modelguard emit-mcl`` writes without a registry."""


class ShippedSchemaResolver:
    """Offline resolver: the ids in ``schema_ids`` map to the MCL schema shipped in acryl-datahub.

    Use it only when no schema registry is configured (see :func:`schema_resolver_for`): with a registry,
    an id must name the schema it was written with. Any other id raises :class:`UnknownSchemaId`.
    """

    def __init__(self, schema_ids: frozenset[int] = SHIPPED_SCHEMA_IDS) -> None:
        self.schema_ids = schema_ids

    def resolve(self, schema_id: int) -> ParsedSchema:
        if schema_id not in self.schema_ids:
            known = ", ".join(str(i) for i in sorted(self.schema_ids))
            detail = f"no schema registry is configured and only ids {known} name the shipped schema"
            raise UnknownSchemaId(schema_id, detail)
        return shipped_mcl_schema()


class RegistrySchemaResolver:
    """Confluent REST API client: ``GET {url}/schemas/ids/{id}`` -> ``{"schema": "<Avro schema JSON>"}``.

    Parsed schemas are cached by id (a registered id never changes its schema); failures are not cached.
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        client: httpx.Client | None = None,
    ) -> None:
        self._base_url = url.rstrip("/")
        self._client = client or httpx.Client(timeout=timeout_seconds, headers=dict(headers or {}))
        self._owns_client = client is None
        self._cache: dict[int, ParsedSchema] = {}
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return self._base_url

    def resolve(self, schema_id: int) -> ParsedSchema:
        cached = self._cache.get(schema_id)
        if cached is not None:
            return cached
        with self._lock:
            cached = self._cache.get(schema_id)
            if cached is None:
                cached = self._fetch(schema_id)
                self._cache[schema_id] = cached
        return cached

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def _fetch(self, schema_id: int) -> ParsedSchema:
        url = f"{self._base_url}/schemas/ids/{schema_id}"
        try:
            response = self._client.get(url, headers={"Accept": "application/vnd.schemaregistry.v1+json"})
        except httpx.HTTPError as error:
            raise SchemaRegistryUnavailable(f"GET {url}: {describe_exception(error)}") from None
        if response.status_code == 404:
            raise UnknownSchemaId(schema_id, _registry_message(response))
        if response.status_code >= 500 or response.status_code == 429:
            raise SchemaRegistryUnavailable(f"GET {url}: HTTP {response.status_code} {_registry_message(response)}")
        if response.status_code != 200:
            # 401/403 and other 4xx: a configuration problem that retrying will not fix by itself, but not
            # evidence that the message is bad either; surface it as unavailable so nothing is dead-lettered.
            raise SchemaRegistryUnavailable(f"GET {url}: HTTP {response.status_code} {_registry_message(response)}")
        return _parse_registered_schema(schema_id, response)


def schema_resolver_for(
    registry_url: str | None, *, headers: Mapping[str, str] | None = None
) -> RegistrySchemaResolver | ShippedSchemaResolver:
    """The registry client when a URL is configured, else the offline resolver over the shipped schema."""
    if registry_url:
        return RegistrySchemaResolver(registry_url, headers=headers)
    return ShippedSchemaResolver()


def _parse_registered_schema(schema_id: int, response: httpx.Response) -> ParsedSchema:
    try:
        body = strict_loads(response.content)
    except ValueError as error:
        raise InvalidRegisteredSchema(schema_id, f"the answer is not JSON: {describe_exception(error)}") from None
    if not isinstance(body, dict) or not isinstance(body.get("schema"), str):
        raise InvalidRegisteredSchema(schema_id, 'the answer has no "schema" string')
    schema_type = body.get("schemaType", "AVRO")
    if schema_type != "AVRO":
        raise InvalidRegisteredSchema(schema_id, f"schemaType is {schema_type!r}, not AVRO")
    try:
        parsed = fastavro.parse_schema(strict_loads(body["schema"]))
        assert isinstance(parsed, dict), "an MCL schema is an Avro record"
        return parsed
    except Exception as error:  # fastavro raises many types (SchemaParseException, KeyError, TypeError, ...)
        raise InvalidRegisteredSchema(schema_id, describe_exception(error)) from None


def _registry_message(response: httpx.Response) -> str:
    try:
        body = strict_loads(response.content)
    except ValueError:
        return response.text[:200]
    if isinstance(body, dict) and "message" in body:
        return f"{body.get('error_code', '')} {body['message']}".strip()
    return str(body)[:200]
