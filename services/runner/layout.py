"""One request laid out under a folder of the runner's own, ``root``: every path of the caller at the same place
below it (the revision at ``root`` + its working directory, each input at ``root`` + its path, each output folder
created empty), and the command line's path arguments moved there too, so that the sandbox shows, hides and
collects exactly what it would on the caller's side. Nothing is written through a link; what does not fit the
request's own manifest is refused (``LayoutRefused``)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from libs.sandbox.remote.parcel import Parcel, check_complete, check_member
from libs.sandbox.remote.protocol import REVISION_MEMBER, RequestManifest, input_member
from libs.sandbox.remote.shipment import fixed_folders, mirrored_argument
from libs.sandbox.remote.trees import unpack_tree


class LayoutRefused(ValueError):
    """The request cannot be laid out safely."""


@dataclass(frozen=True)
class Job:
    root: Path
    cwd: Path
    argv: list[str]


def mirror(root: Path, path: str) -> Path:
    """Where the caller's absolute ``path`` (normalised, checked by the manifest) lies under ``root``."""
    return root / path.lstrip("/")


def make_folders(root: Path, target: Path) -> None:
    """``target`` and every folder on the way from ``root``, none of them a link or a file."""
    current = root
    for part in target.relative_to(root).parts:
        current = current / part
        if current.is_symlink() or (os.path.lexists(current) and not current.is_dir()):
            raise LayoutRefused(f"{current.relative_to(root)} is in the way (a link or a file)")
        if not os.path.lexists(current):
            current.mkdir(mode=0o755)


def lay_out(manifest: RequestManifest, parcel: Parcel, root: Path) -> Job:
    root.mkdir(mode=0o755)
    members = [REVISION_MEMBER, *(input_member(index) for index in range(len(manifest.inputs)))]
    check_complete(parcel, members)
    cwd = mirror(root, manifest.cwd)
    make_folders(root, cwd.parent)
    unpack_tree(check_member(parcel, REVISION_MEMBER, manifest.revision.sha256, manifest.revision.size), cwd)
    for index, given in enumerate(manifest.inputs):
        source = check_member(parcel, input_member(index), given.sha256, given.size)
        target = mirror(root, given.path)
        make_folders(root, target.parent)
        if os.path.lexists(target):
            raise LayoutRefused(f"input {given.path} lands where something already is")
        if given.kind == "folder":
            unpack_tree(source, target)
        else:
            os.replace(source, target)
            target.chmod(0o644)
    for folder in manifest.output_folders:
        make_folders(root, mirror(root, folder))
    fixed = fixed_folders()
    argv = [manifest.argv[0], *(mirrored_argument(argument, root, fixed) for argument in manifest.argv[1:])]
    return Job(root=root, cwd=cwd, argv=argv)
