"""Named records beside the artifacts: small documents stored under a name of their writer's choosing and
overwritten by the next write, where every service of a deployment reaches them (unlike the content-addressed
blobs, a record is found by its name, not by its bytes).

Where the artifacts are, the records are: ``<MODELGUARD_ARTIFACTS_DIR>/<space>/ab/<name>.json`` on a local folder
(the ReadWriteMany claim every service mounts in the Helm chart), ``<prefix>/<space>/<name>.json`` in the artifacts'
bucket. Nothing here vouches for a record's bytes: anyone who can write the artifacts can write a record, so a
reader checks what it reads (the evaluation cache checks a signature, `libs/workspace/evaluation_cache.py`).

A record store is a cache's storage, never the only copy of anything: a store that does not answer is reported by
``RecordsUnavailable`` and the caller measures again instead.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from botocore.exceptions import BotoCoreError, ClientError

from libs.artifacts.open_store import object_storage
from libs.artifacts.s3_store import MISSING, error_code, error_line
from libs.atomic_file import atomic_write
from libs.s3_location import S3Location
from libs.settings import Settings

if TYPE_CHECKING:
    from collections.abc import Mapping

    from mypy_boto3_s3 import S3Client

_NAME = re.compile(r"[0-9a-f]{64}")
_SPACE = re.compile(r"[a-z][a-z0-9-]{0,39}")


class RecordsUnavailable(RuntimeError):
    """The store did not answer, or refused (unreachable, denied, a folder that cannot be written): one line."""


class RecordStore(Protocol):
    def read(self, name: str) -> bytes | None:
        """The record's bytes; None when there is none. Raises RecordsUnavailable."""
        ...

    def write(self, name: str, data: bytes) -> None:
        """Store ``data`` as the record ``name``, replacing any before it, atomically. Raises RecordsUnavailable."""
        ...


def checked_name(name: str) -> str:
    """A record's name is a sha256 in lower-case hex: it never leads outside its space."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"not a record name: {name!r}")
    return name


class FolderRecords:
    """One file per record, fanned out by the name's first two characters, replaced by rename."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, name: str) -> Path:
        return self.root / name[:2] / f"{checked_name(name)}.json"

    def read(self, name: str) -> bytes | None:
        try:
            return self._path(name).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise RecordsUnavailable(f"cannot read record {name[:16]}… in {self.root}: {exc.strerror}") from None

    def write(self, name: str, data: bytes) -> None:
        path = self._path(name)
        try:
            atomic_write(path, data)
        except OSError as exc:
            raise RecordsUnavailable(f"cannot write record {name[:16]}… in {self.root}: {exc.strerror}") from None


class ObjectRecords:
    """One object per record in the artifacts' bucket, under ``<prefix>/<space>/``."""

    def __init__(self, client: S3Client, location: S3Location, space: str) -> None:
        self._client = client
        self.location = location
        self.space = space

    def _key(self, name: str) -> str:
        key = f"{self.space}/{checked_name(name)}.json"
        return f"{self.location.prefix}/{key}" if self.location.prefix else key

    def read(self, name: str) -> bytes | None:
        key = self._key(name)
        try:
            return self._client.get_object(Bucket=self.location.bucket, Key=key)["Body"].read()
        except ClientError as exc:
            if error_code(exc) in MISSING:
                return None
            raise RecordsUnavailable(f"cannot read s3://{self.location.bucket}/{key}: {error_line(exc)}") from None
        except BotoCoreError as exc:
            raise RecordsUnavailable(f"cannot read s3://{self.location.bucket}/{key}: {error_line(exc)}") from None

    def write(self, name: str, data: bytes) -> None:
        key = self._key(name)
        try:
            self._client.put_object(Bucket=self.location.bucket, Key=key, Body=data, ContentType="application/json")
        except (ClientError, BotoCoreError) as exc:
            raise RecordsUnavailable(f"cannot write s3://{self.location.bucket}/{key}: {error_line(exc)}") from None


def record_store(settings: Settings, space: str, environ: Mapping[str, str] | None = None) -> RecordStore:
    """The records of ``space`` where the settings keep the artifacts. Raises SettingsError (one line, no secret)
    for a bad URL, endpoint or credential setting."""
    if not _SPACE.fullmatch(space):
        raise ValueError(f"not a record space: {space!r}")
    bucket = object_storage(settings, environ)
    if bucket is None:
        return FolderRecords(settings.artifacts_dir / space)
    return ObjectRecords(*bucket, space)
