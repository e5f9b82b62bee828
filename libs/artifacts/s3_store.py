"""Artifacts in object storage over the S3 API: one object per blob, named ``<prefix>/ab/cdef…`` by its sha256.

Written once (an object already there is not written again) with its SHA-256 checksum, so the store refuses an
upload damaged on the way; every read is checked against the name, so an object changed in the bucket afterwards
is refused with the reason, never handed on. An unreachable, throttling or denying store raises
``ArtifactStoreUnavailable`` (the service retries the input); a missing object ``ArtifactNotFound``.
"""

from __future__ import annotations

import base64
import hashlib
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError

from contracts.common import ArtifactRef
from libs.artifacts.store import (
    ArtifactCorrupted,
    ArtifactNotFound,
    ArtifactStoreUnavailable,
    checked_digest,
    digest_of,
)
from libs.s3_location import S3Location

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

MISSING = ("404", "NoSuchKey", "NotFound")


class S3ArtifactStore:
    def __init__(self, client: S3Client, location: S3Location) -> None:
        self._client = client
        self.location = location

    def describe(self) -> str:
        return self.location.describe()

    def put(self, data: bytes, media_type: str) -> ArtifactRef:
        digest = hashlib.sha256(data).hexdigest()
        if not self.exists(digest):
            key = self.location.key(digest)
            try:
                self._client.put_object(
                    Bucket=self.location.bucket,
                    Key=key,
                    Body=data,
                    ContentType=media_type,
                    ChecksumSHA256=base64.b64encode(bytes.fromhex(digest)).decode(),
                )
            except (ClientError, BotoCoreError) as exc:
                raise ArtifactStoreUnavailable(
                    f"cannot write artifact {digest} to {self._where(key)}: {error_line(exc)}"
                ) from None
        return ArtifactRef(sha256=digest, media_type=media_type, size=len(data))

    def get(self, ref: ArtifactRef | str) -> bytes:
        digest = digest_of(ref)
        key = self.location.key(digest)
        try:
            data = self._client.get_object(Bucket=self.location.bucket, Key=key)["Body"].read()
        except ClientError as exc:
            if error_code(exc) in MISSING:
                raise ArtifactNotFound(f"artifact {digest} is not in {self.describe()}") from None
            raise ArtifactStoreUnavailable(
                f"cannot read artifact {digest} from {self._where(key)}: {error_line(exc)}"
            ) from None
        except BotoCoreError as exc:
            raise ArtifactStoreUnavailable(
                f"cannot read artifact {digest} from {self._where(key)}: {error_line(exc)}"
            ) from None
        actual = hashlib.sha256(data).hexdigest()
        if actual != digest:
            raise ArtifactCorrupted(
                f"artifact {digest} at {self._where(key)} does not match its digest (its {len(data)} bytes hash to "
                f"{actual[:16]}…): refused, the object was changed after it was written"
            )
        return data

    def exists(self, sha256: str) -> bool:
        key = self.location.key(checked_digest(sha256))
        try:
            self._client.head_object(Bucket=self.location.bucket, Key=key)
        except ClientError as exc:
            if error_code(exc) in MISSING:
                return False
            raise ArtifactStoreUnavailable(
                f"cannot look up artifact {sha256} in {self._where(key)}: {error_line(exc)}"
            ) from None
        except BotoCoreError as exc:
            raise ArtifactStoreUnavailable(
                f"cannot look up artifact {sha256} in {self._where(key)}: {error_line(exc)}"
            ) from None
        return True

    def _where(self, key: str) -> str:
        return f"s3://{self.location.bucket}/{key}"


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def error_line(exc: Exception) -> str:
    """One line: the service's error code and message, or the client's (never a credential: botocore puts none)."""
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        return f"{error.get('Code', 'error')}: {error.get('Message', '')}".strip().rstrip(":")
    return (str(exc).splitlines() or [type(exc).__name__])[0]
