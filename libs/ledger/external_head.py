"""The latest checkpoint kept outside the database, so that a database that lost its newest events (and the
checkpoints over them) can be told from one that never had them.

`HeadSink` is the port the ledger service writes each sealed checkpoint to, `HeadSource` what `verify` reads
back. Two adapters: `HeadFile`, one JSON document in the ModelGuard home replaced atomically, and `HeadLog`, a
JSON-lines file only ever appended to (point it at a WORM mount). What they hold is the signed checkpoint
envelope itself, so nothing in them is trusted before its signature is checked (see `external_check`).
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Protocol

from libs.ledger.rows import CheckpointRow


class ExternalHeadError(RuntimeError):
    """The external head exists but cannot be read: verification must refuse, not pass."""


class HeadSink(Protocol):
    def record(self, checkpoint: CheckpointRow) -> None: ...


class HeadSource(Protocol):
    name: str
    path: Path

    def heads(self) -> list[CheckpointRow]:
        """Every head this source holds, oldest first; [] when it holds none. Raises ExternalHeadError."""
        ...


def to_document(checkpoint: CheckpointRow) -> dict[str, object]:
    return {
        "position": checkpoint.position,
        "event_count": checkpoint.event_count,
        "head_hash": checkpoint.head_hash,
        "signer_keyid": checkpoint.signer_keyid,
        "envelope": checkpoint.envelope,
        "created_at": checkpoint.created_at.isoformat(),
    }


def from_document(document: object, where: str) -> CheckpointRow:
    try:
        if not isinstance(document, dict):
            raise TypeError("not an object")
        return CheckpointRow(
            position=int(document["position"]),
            event_count=int(document["event_count"]),
            head_hash=str(document["head_hash"]),
            signer_keyid=str(document["signer_keyid"]),
            envelope=str(document["envelope"]),
            created_at=datetime.fromisoformat(str(document["created_at"])),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ExternalHeadError(f"{where} is not a checkpoint head: {str(exc)[:200]}") from exc


class HeadFile:
    """One file, replaced atomically (write beside it, fsync, rename) and never moved backwards."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = "external head file"

    def record(self, checkpoint: CheckpointRow) -> None:
        current = self._read()
        if current is not None and current.position >= checkpoint.position:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(self.path.name + ".partial")
        with partial.open("w", encoding="utf-8") as out:
            out.write(json.dumps(to_document(checkpoint), sort_keys=True) + "\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, self.path)
        _sync_folder(self.path.parent)

    def heads(self) -> list[CheckpointRow]:
        current = self._read()
        return [current] if current is not None else []

    def _read(self) -> CheckpointRow | None:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ExternalHeadError(f"cannot read {self.name} {self.path}: {exc}") from exc
        try:
            return from_document(json.loads(text), f"{self.name} {self.path}")
        except json.JSONDecodeError as exc:
            raise ExternalHeadError(f"{self.name} {self.path} is not JSON: {exc}") from exc


class HeadLog:
    """A JSON-lines file, one checkpoint a line, only ever appended to."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = "external head log"
        self._last: int | None = None

    def record(self, checkpoint: CheckpointRow) -> None:
        if self._last is None:
            held = self.heads()
            self._last = held[-1].position if held else 0
        if checkpoint.position <= self._last:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(to_document(checkpoint), sort_keys=True) + "\n")
            out.flush()
            os.fsync(out.fileno())
        self._last = checkpoint.position

    def heads(self) -> list[CheckpointRow]:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise ExternalHeadError(f"cannot read {self.name} {self.path}: {exc}") from exc
        heads: list[CheckpointRow] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                heads.append(from_document(json.loads(line), f"line {number} of {self.name} {self.path}"))
            except json.JSONDecodeError as exc:
                raise ExternalHeadError(f"line {number} of {self.name} {self.path} is not JSON: {exc}") from exc
        return heads


def _sync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
