"""Named records beside the artifacts: small documents stored under a name of their writer's choosing and
overwritten by the next write, where every service of a deployment reaches them (unlike the content-addressed
blobs, a record is found by its name, not by its bytes).

Where the artifacts are, the records are: ``<MODELGUARD_ARTIFACTS_DIR>/<space>/ab/<name>.json`` on a local folder
(the ReadWriteMany claim every service mounts in the Helm chart), ``<prefix>/<space>/<name>.json`` in the artifacts'
bucket. Nothing here vouches for a record's bytes: anyone who can write the artifacts can write a record, so a
reader checks what it reads (the evaluation cache checks a signature, `libs/workspace/evaluation_cache.py`).

A record store is a cache's storage, never the only copy of anything: a store that does not answer is reported by
``RecordsUnavailable`` and the caller measures again instead. Nor does anything remove a record but its next write
or an operator's ``modelguard evaluations prune`` (``record_retention``), which is why each store also lists its
records, with when each was last written, and removes them by name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
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
_FILE = re.compile(r"([0-9a-f]{64})\.json")
DELETE_BATCH = 1000
"""Keys one S3 DeleteObjects request takes at most."""
_SPACE = re.compile(r"[a-z][a-z0-9-]{0,39}")


class RecordsUnavailable(RuntimeError):
    """The store did not answer, or refused (unreachable, denied, a folder that cannot be written): one line."""


class RecordStore(Protocol):
    @property
    def where(self) -> str:
        """Where the records are, for messages: a folder, or an s3:// prefix."""
        ...

    def read(self, name: str) -> bytes | None:
        """The record's bytes; None when there is none. Raises RecordsUnavailable."""
        ...

    def write(self, name: str, data: bytes) -> None:
        """Store ``data`` as the record ``name``, replacing any before it, atomically. Raises RecordsUnavailable."""
        ...

    def listed(self) -> Iterator[StoredRecord]:
        """Every record, with when it was last written. Raises RecordsUnavailable."""
        ...

    def remove(self, names: Sequence[str]) -> None:
        """Remove these records (one already gone is no error). Raises RecordsUnavailable."""
        ...


@dataclass(frozen=True)
class StoredRecord:
    name: str
    written: datetime
    """When the record was last written (UTC)."""
    size: int


def checked_name(name: str) -> str:
    """A record's name is a sha256 in lower-case hex: it never leads outside its space."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"not a record name: {name!r}")
    return name


class FolderRecords:
    """One file per record, fanned out by the name's first two characters, replaced by rename."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def where(self) -> str:
        return str(self.root)

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

    def listed(self) -> Iterator[StoredRecord]:
        """Every record, in no order: only files named as records in the fan-out folders of their names."""
        try:
            fans = [entry for entry in os.scandir(self.root) if entry.is_dir(follow_symlinks=False)]
        except FileNotFoundError:
            return
        except OSError as exc:
            raise RecordsUnavailable(f"cannot list the records in {self.root}: {exc.strerror}") from None
        for fan in fans:
            try:
                entries = list(os.scandir(fan.path))
            except OSError as exc:
                raise RecordsUnavailable(f"cannot list the records in {fan.path}: {exc.strerror}") from None
            for entry in entries:
                found = _FILE.fullmatch(entry.name)
                if found is None or found.group(1)[:2] != fan.name or not entry.is_file(follow_symlinks=False):
                    continue
                try:
                    stat = entry.stat(follow_symlinks=False)
                except FileNotFoundError:  # replaced or removed meanwhile
                    continue
                yield StoredRecord(found.group(1), datetime.fromtimestamp(stat.st_mtime, UTC), stat.st_size)

    def remove(self, names: Sequence[str]) -> None:
        for name in names:
            try:
                self._path(name).unlink(missing_ok=True)
            except OSError as exc:
                raise RecordsUnavailable(f"cannot remove record {name[:16]}… in {self.root}: {exc.strerror}") from None


class ObjectRecords:
    """One object per record in the artifacts' bucket, under ``<prefix>/<space>/``."""

    def __init__(self, client: S3Client, location: S3Location, space: str) -> None:
        self._client = client
        self.location = location
        self.space = space

    @property
    def where(self) -> str:
        return f"s3://{self.location.bucket}/{self._folder()}"

    def _folder(self) -> str:
        """The key prefix of the space's records, with its trailing slash."""
        return f"{self.location.prefix}/{self.space}/" if self.location.prefix else f"{self.space}/"

    def _key(self, name: str) -> str:
        return f"{self._folder()}{checked_name(name)}.json"

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

    def listed(self) -> Iterator[StoredRecord]:
        """Every record, in key order: only objects named as records directly under the space's prefix."""
        folder = self._folder()
        pages = self._client.get_paginator("list_objects_v2").paginate(Bucket=self.location.bucket, Prefix=folder)
        try:
            for page in pages:
                for listed in page.get("Contents", []):
                    found = _FILE.fullmatch(listed["Key"][len(folder) :])
                    if found is not None:
                        yield StoredRecord(found.group(1), listed["LastModified"].astimezone(UTC), listed["Size"])
        except (ClientError, BotoCoreError) as exc:
            raise RecordsUnavailable(f"cannot list the records in {self.where}: {error_line(exc)}") from None

    def remove(self, names: Sequence[str]) -> None:
        for start in range(0, len(names), DELETE_BATCH):
            keys = [{"Key": self._key(name)} for name in names[start : start + DELETE_BATCH]]
            try:
                answer = self._client.delete_objects(
                    Bucket=self.location.bucket,
                    Delete={"Objects": keys, "Quiet": True},  # type: ignore[typeddict-item]
                )
            except (ClientError, BotoCoreError) as exc:
                where = f"s3://{self.location.bucket}"
                raise RecordsUnavailable(f"cannot remove records in {where}: {error_line(exc)}") from None
            refused = answer.get("Errors", [])
            if refused:
                first = refused[0]
                raise RecordsUnavailable(
                    f"cannot remove s3://{self.location.bucket}/{first.get('Key', '?')}: {first.get('Code', '?')} "
                    f"({len(refused)} of {len(keys)} refused)"
                )


def record_store(settings: Settings, space: str, environ: Mapping[str, str] | None = None) -> RecordStore:
    """The records of ``space`` where the settings keep the artifacts. Raises SettingsError (one line, no secret)
    for a bad URL, endpoint or credential setting."""
    if not _SPACE.fullmatch(space):
        raise ValueError(f"not a record space: {space!r}")
    bucket = object_storage(settings, environ)
    if bucket is None:
        return FolderRecords(settings.artifacts_dir / space)
    return ObjectRecords(*bucket, space)
