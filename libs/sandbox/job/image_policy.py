"""Which images a model's commands may run in: the central policy's ``workspace_images`` section. A model's
policy names its image (``workspace.image``); it runs only when this allow-list names its repository (or the
image itself) and the image is pinned by digest. Fail closed: no section, an empty list, a tag, a name without
its registry: refused, with the reason in one line (the incident ends ``environment_failed``)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from libs.policy.central import CentralPolicyError, installed_central_policy, read_central_policy_document

SECTION = "workspace_images"
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_REGISTRY = r"(?:localhost(?::[0-9]+)?|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?::[0-9]+)?|[A-Za-z0-9-]+:[0-9]+)"
"""A registry host the way a runtime recognises one: ``localhost``, a name with a dot, or any name with a port
(anything else before the first ``/`` is a Docker Hub namespace)."""
REPOSITORY = re.compile(rf"^(?P<registry>{_REGISTRY})(?:/{_COMPONENT})+$")
REGISTRY = re.compile(rf"^{_REGISTRY}$")
PINNED = re.compile(r"^(?P<repository>[^@\s]+)@sha256:(?P<digest>[0-9a-f]{64})$")
MAX_REFERENCE = 512


def image_declaration(image: str) -> str:
    """How an environment failure names the image (an EnvironmentFailed event's ``declaration``: 200 characters)."""
    return f"image {image}"[:200]


class ImageRefused(ValueError):
    """The image may not run here; one line."""


class WorkspaceImagePolicy(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    allowed: tuple[str, ...] = Field(
        default=(),
        description="repositories (registry/path), prefixes of repositories ending in '/', or single images "
        "(repository@sha256:…) a model's policy may name",
    )

    @field_validator("allowed")
    @classmethod
    def _entries(cls, entries: tuple[str, ...]) -> tuple[str, ...]:
        for entry in entries:
            pinned = PINNED.match(entry)
            repository = pinned.group("repository") if pinned else entry.removesuffix("/")
            whole_registry = entry.endswith("/") and REGISTRY.match(repository)
            if not (REPOSITORY.match(repository) or whole_registry):
                raise ValueError(
                    f"{entry!r} is not a registry/repository, a prefix ending in '/', or an image by digest"
                )
        return entries


def parse_image(image: str) -> tuple[str, str]:
    """(repository, digest) of ``image``; ImageRefused unless it names its registry and is pinned by digest."""
    if not isinstance(image, str) or not image or len(image) > MAX_REFERENCE:
        raise ImageRefused(f"the model's image must be a reference of at most {MAX_REFERENCE} characters")
    pinned = PINNED.match(image)
    if pinned is None:
        raise ImageRefused(
            f"the model's image {image[:200]!r} is not pinned by digest (registry/repository@sha256:<64 hex>): "
            "a tag can be moved to another image"
        )
    repository = pinned.group("repository")
    if ":" in repository.rsplit("/", 1)[-1]:
        raise ImageRefused(f"the model's image {image[:200]!r} names a tag and a digest: name the digest only")
    if not REPOSITORY.match(repository):
        raise ImageRefused(
            f"the model's image {image[:200]!r} does not name its registry (registry.example.com/team/model@sha256:…)"
        )
    return repository, pinned.group("digest")


def check_image(image: str, policy: WorkspaceImagePolicy) -> str:
    """``image`` when the policy allows it; else ImageRefused with why."""
    repository, _ = parse_image(image)
    for entry in policy.allowed:
        if entry in (image, repository) or (entry.endswith("/") and repository.startswith(entry)):
            return image
    if not policy.allowed:
        raise ImageRefused(
            f"the model's image {image[:200]!r} is not allowed: the central policy's {SECTION}.allowed is empty"
        )
    raise ImageRefused(
        f"the model's image {image[:200]!r} is not allowed by the central policy's {SECTION}.allowed "
        f"({len(policy.allowed)} entries)"
    )


def image_policy_from(section: object, origin: str = SECTION) -> WorkspaceImagePolicy:
    if section is None:
        return WorkspaceImagePolicy()
    if not isinstance(section, dict):
        raise ImageRefused(f"{origin}: the {SECTION} section is a mapping")
    try:
        return WorkspaceImagePolicy.model_validate(section)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ImageRefused(f"{origin}: {SECTION}.{where}: {first['msg']}") from None


@cache
def _cached(path: Path, mtime_ns: int) -> WorkspaceImagePolicy:
    try:
        document = read_central_policy_document(path)
    except CentralPolicyError as error:
        raise ImageRefused(str(error)) from None
    return image_policy_from(document.get(SECTION), str(path))


def default_image_policy(path: Path | None = None) -> WorkspaceImagePolicy:
    """The central policy's section (``path``, else ``$MODELGUARD_CENTRAL_POLICY`` or ``policy/central.yaml``; none
    named and none installed: nothing allowed; the one named not there: a CentralPolicyError)."""
    installed = installed_central_policy(path)
    if installed is None:
        return WorkspaceImagePolicy()
    return _cached(*installed)
