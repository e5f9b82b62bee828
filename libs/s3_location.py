"""Object storage for artifacts: ``MODELGUARD_ARTIFACTS_URL=s3://bucket/prefix``.

``MODELGUARD_S3_ENDPOINT_URL`` names a non-AWS endpoint (MinIO, Ceph, moto), addressed path-style. Credentials
are the standard ``AWS_ACCESS_KEY_ID`` and ``AWS_SECRET_ACCESS_KEY`` (and ``AWS_SESSION_TOKEN``), each also as
``…_FILE`` naming a mounted Secret; with none set, boto3's own chain answers (a web identity token on EKS, an
instance profile, ``~/.aws``). ``AWS_REGION`` (or ``AWS_DEFAULT_REGION``) names the region.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

ARTIFACTS_URL_ENV = "MODELGUARD_ARTIFACTS_URL"
S3_ENDPOINT_ENV = "MODELGUARD_S3_ENDPOINT_URL"
CREDENTIALS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_PREFIX = re.compile(r"[A-Za-z0-9!_.*'()/-]*")


class ArtifactsUrlError(ValueError):
    """A bad artifacts URL, endpoint or credential setting; the message is one line without secrets."""


@dataclass(frozen=True)
class S3Location:
    bucket: str
    prefix: str
    """Without leading or trailing slashes; empty: the bucket's root."""
    endpoint_url: str | None = None

    def key(self, sha256: str) -> str:
        name = f"{sha256[:2]}/{sha256[2:]}"
        return f"{self.prefix}/{name}" if self.prefix else name

    def describe(self) -> str:
        where = f"s3://{self.bucket}/{self.prefix}".rstrip("/")
        return f"{where} at {self.endpoint_url}" if self.endpoint_url else where


def s3_location_from(url: str, endpoint_url: str | None) -> S3Location:
    parts = urlsplit(url.strip())
    if parts.scheme != "s3":
        raise ArtifactsUrlError(f"{ARTIFACTS_URL_ENV} must be s3://bucket/prefix, got a {parts.scheme or 'bare'} URL")
    if parts.username or parts.password or parts.port or parts.query or parts.fragment:
        raise ArtifactsUrlError(
            f"{ARTIFACTS_URL_ENV} is s3://bucket/prefix only: credentials go in AWS_ACCESS_KEY_ID and "
            f"AWS_SECRET_ACCESS_KEY (or their _FILE variants), the endpoint in {S3_ENDPOINT_ENV}"
        )
    bucket = parts.netloc
    prefix = parts.path.strip("/")
    if not _BUCKET.fullmatch(bucket) or ".." in bucket:
        raise ArtifactsUrlError(f"{ARTIFACTS_URL_ENV}: {bucket!r} is not an S3 bucket name")
    if not _PREFIX.fullmatch(prefix) or "//" in prefix or any(part in (".", "..") for part in prefix.split("/")):
        raise ArtifactsUrlError(f"{ARTIFACTS_URL_ENV}: {prefix!r} is not a plain key prefix")
    if endpoint_url is not None:
        endpoint = urlsplit(endpoint_url)
        if endpoint.scheme not in ("http", "https") or not endpoint.hostname or endpoint.username:
            raise ArtifactsUrlError(f"{S3_ENDPOINT_ENV} must be an http(s)://host[:port] URL without credentials")
    return S3Location(bucket, prefix, endpoint_url.rstrip("/") if endpoint_url else None)


def credential_files(environ: Mapping[str, str]) -> tuple[Path, ...]:
    """The files the credentials are read from (kept out of sandboxed commands' reach)."""
    return tuple(Path(environ[f"{name}_FILE"]) for name in CREDENTIALS if environ.get(f"{name}_FILE", "").strip())


def _credential(environ: Mapping[str, str], name: str) -> str | None:
    value = environ.get(name) or None
    path = environ.get(f"{name}_FILE", "").strip()
    if value is not None and path:
        raise ArtifactsUrlError(f"{name} and {name}_FILE are both set; set one")
    if not path:
        return value
    try:
        value = Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ArtifactsUrlError(f"{name}_FILE: cannot read {path}: {type(exc).__name__}") from None
    if not value:
        raise ArtifactsUrlError(f"{name}_FILE: {path} is empty")
    return value


def s3_client(location: S3Location, environ: Mapping[str, str]) -> S3Client:
    """A client for ``location``: explicit credentials when set (or their files), else boto3's chain; a few
    standard retries and bounded timeouts, so an unreachable store is an error in seconds, not minutes."""
    import boto3
    from botocore.config import Config

    key_id, secret, token = (_credential(environ, name) for name in CREDENTIALS)
    if (key_id is None) != (secret is None):
        raise ArtifactsUrlError("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together (or their _FILE variants)")
    region = environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    config = Config(
        retries={"max_attempts": 4, "mode": "standard"},
        connect_timeout=5,
        read_timeout=30,
        s3={"addressing_style": "path" if location.endpoint_url else "auto"},
    )
    session = boto3.session.Session(
        aws_access_key_id=key_id, aws_secret_access_key=secret, aws_session_token=token, region_name=region
    )
    return session.client("s3", endpoint_url=location.endpoint_url, config=config)
