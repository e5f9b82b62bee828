"""An incident's two data windows as one artifact: the approval window and the incident window, each with
the training (reference) rows the evaluation trains on and the rows it scores."""

from __future__ import annotations

import io
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from libs.workspace.snapshot import UnsafeSnapshot, extract_snapshot

MEDIA_TYPE = "application/vnd.modelguard.data-windows+tar"
WINDOW_NAMES: tuple[Literal["approval", "incident"], ...] = ("approval", "incident")
FILE_NAMES = ("train.csv", "eval.csv")
MAX_WINDOWS_BYTES = 512 * 1024 * 1024


class IncompleteDataWindows(UnsafeSnapshot):
    """A sound tar that lacks a window's file: an artifact no phase can use, refused as an unsafe one is (the
    detector's referee and ``incident_workspace`` turn it into the reason the revision or input is refused)."""


@dataclass(frozen=True)
class DataWindow:
    """One window of data: the rows the evaluation trains on and the rows it scores."""

    name: Literal["approval", "incident"]
    train: Path
    eval: Path

    def placeholders(self) -> dict[str, str]:
        """The values of the evaluate command's ``{train}`` and ``{eval}`` placeholders."""
        return {"train": str(self.train.resolve()), "eval": str(self.eval.resolve())}


def pack_data_windows(files: dict[str, dict[str, Path]]) -> bytes:
    """A deterministic tar of ``files[window][name]`` (fixed order, times, owners and modes)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for window in WINDOW_NAMES:
            for name in FILE_NAMES:
                data = Path(files[window][name]).read_bytes()
                member = tarfile.TarInfo(f"{window}/{name}")
                member.size, member.mtime, member.mode = len(data), 0, 0o644
                member.uid = member.gid = 0
                member.uname = member.gname = ""
                archive.addfile(member, io.BytesIO(data))
    return buffer.getvalue()


def unpack_data_windows(data: bytes, dest: Path) -> dict[str, DataWindow]:
    extract_snapshot(data, dest, max_bytes=MAX_WINDOWS_BYTES)
    missing = [f"{w}/{n}" for w in WINDOW_NAMES for n in FILE_NAMES if not (dest / w / n).is_file()]
    if missing:
        raise IncompleteDataWindows(f"the data windows artifact lacks {', '.join(missing)}")
    return {w: DataWindow(name=w, train=dest / w / FILE_NAMES[0], eval=dest / w / FILE_NAMES[1]) for w in WINDOW_NAMES}
