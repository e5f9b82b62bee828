"""The artifact store the settings name: object storage when ``MODELGUARD_ARTIFACTS_URL`` is an ``s3://`` URL,
else the local folder ``MODELGUARD_ARTIFACTS_DIR`` (the default). Every service, the CLI and the console get
their store here."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from libs.artifacts.s3_store import S3ArtifactStore
from libs.artifacts.store import ArtifactStore, LocalArtifactStore
from libs.s3_location import ArtifactsUrlError, S3Location, s3_client, s3_location_from
from libs.settings import Settings, SettingsError

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client


def artifact_store(settings: Settings, environ: Mapping[str, str] | None = None) -> ArtifactStore:
    """Raises SettingsError (one line, no secret) for a bad URL, endpoint or credential setting."""
    bucket = object_storage(settings, environ)
    if bucket is None:
        return LocalArtifactStore(settings.artifacts_dir)
    return S3ArtifactStore(*bucket)


def object_storage(settings: Settings, environ: Mapping[str, str] | None = None) -> tuple[S3Client, S3Location] | None:
    """A client for the artifacts' bucket and where in it they are; None when the artifacts are a local folder.
    Raises SettingsError (one line, no secret) for a bad URL, endpoint or credential setting."""
    if settings.artifacts_url is None:
        return None
    try:
        location = s3_location_from(settings.artifacts_url, settings.s3_endpoint_url)
        client = s3_client(location, os.environ if environ is None else environ)
    except ArtifactsUrlError as exc:
        raise SettingsError(str(exc)) from None
    return client, location
