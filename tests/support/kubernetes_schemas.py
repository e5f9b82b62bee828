"""Strict validation against the Kubernetes JSON schemas that kubernetes-validate ships, offline, with each kind's
validator built once: kubernetes_validate.validate reads its multi-megabyte definitions file on every call, which
made checking every object of a dozen chart renders take most of a minute."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import jsonschema
import kubernetes_validate
from kubernetes_validate.utils import all_versions, major_minor, schema_contents
from referencing import Registry, Resource

VERSION = "1.30.0"  # the oldest minor release still in common support; later ones accept the same


@cache
def _definitions(schema_dir: str) -> Resource[Any]:
    return Resource.from_contents(schema_contents(f"kubernetes-json-schema/{schema_dir}/_definitions.json", VERSION))


@cache
def _validator(kind: str, api_version: str) -> jsonschema.protocols.Validator:
    """As kubernetes_validate.validate(strict=True) builds it: the kind's strict schema and the definitions."""
    version = [v for v in all_versions() if major_minor(v) <= major_minor(VERSION)][-1]
    schema_dir = f"v{version}-local-strict"
    group = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    schema = schema_contents(f"kubernetes-json-schema/{schema_dir}/{kind.lower()}-{group}.json", VERSION)
    registry: Registry[Any] = Resource.from_contents(schema) @ Registry()
    registry = _definitions(schema_dir) @ registry
    return jsonschema.validators.Draft202012Validator(schema, registry=registry)


def problems(document: dict[str, Any]) -> list[str]:
    """What is wrong with a Kubernetes object (one line, as kubernetes-validate words it), or nothing."""
    error = jsonschema.exceptions.best_match(_validator(document["kind"], document["apiVersion"]).iter_errors(document))
    if error is None:
        return []
    return [f"{document['kind']}/{document['metadata']['name']}: {'.'.join(map(str, error.path))}: {error.message}"]


def agrees_with_kubernetes_validate(document: dict[str, Any]) -> bool:
    """The cached validator and the library's own give the same verdict (a test holds them together)."""
    try:
        kubernetes_validate.validate(document, VERSION, strict=True)
        library = True
    except kubernetes_validate.ValidationError:
        library = False
    return library == (problems(document) == [])
