"""The request parcel for one command (``protocol.py``): the working directory packed (a protected path inside
it an empty stand-in), each input the shipment sends, the manifest with their sizes and digests. Written by the
caller for the workspace runner (``client.py``) and for a workspace Job's pod (``libs/sandbox/job/backend.py``),
which receive the same format."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

from libs.policy.sandbox import SandboxPolicy
from libs.sandbox.process import CommandNotAllowed
from libs.sandbox.protected_paths import ProtectedPaths, inside
from libs.sandbox.remote.parcel import write_parcel
from libs.sandbox.remote.protocol import (
    MAX_REQUEST_BYTES,
    PROTOCOL,
    REQUEST_MANIFEST,
    REVISION_MEMBER,
    Blob,
    RequestInput,
    RequestManifest,
    input_member,
)
from libs.sandbox.remote.shipment import Shipment, ShippedInput
from libs.sandbox.remote.trees import TreeRefused, pack_tree

BLOCK = 1 << 16


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclasses.dataclass(frozen=True)
class RequestParcel:
    parcel: Path
    inputs: tuple[ShippedInput, ...]
    """The inputs sent (in the manifest's order)."""
    refused_inputs: tuple[str, ...]
    """Inputs the shipment meant to send that could not be packed, with why."""


def queue_s(policy: SandboxPolicy) -> float:
    """How long a request may wait on the runner for a free slot: as long as one more command of this length."""
    return policy.limits.wall_s


def _covers(cwd: Path, protected: ProtectedPaths) -> list[Path]:
    return [path for path in protected.everything if inside(path, cwd) and path != cwd]


def write_request(shipment: Shipment, policy: SandboxPolicy, protected: ProtectedPaths, work: Path) -> RequestParcel:
    revision = work / REVISION_MEMBER
    try:
        pack_tree(shipment.cwd, revision, covered=_covers(shipment.cwd, protected))
    except TreeRefused as error:
        raise CommandNotAllowed(f"refused to hand {shipment.cwd} to the workspace runner: {error}") from None
    sent: list[ShippedInput] = []
    refused: list[str] = []
    members: list[tuple[str, Path]] = [(REVISION_MEMBER, revision)]
    blobs: list[RequestInput] = []
    for given in shipment.inputs:
        source = given.path
        if given.kind == "folder":
            source = work / f"input-{len(sent)}.tar"
            try:
                pack_tree(given.path, source)
            except TreeRefused as error:
                refused.append(f"{given.path}: the workspace runner cannot receive it: {error}")
                continue
        size = source.stat().st_size
        blobs.append(RequestInput(path=str(given.path), kind=given.kind, sha256=_sha256(source), size=size))
        members.append((input_member(len(sent)), source))
        sent.append(given)
    total = sum(path.stat().st_size for _, path in members)
    if total > MAX_REQUEST_BYTES:
        raise CommandNotAllowed(
            f"refused to hand the command to the workspace runner: its revision and inputs take {total} bytes, "
            f"more than the {MAX_REQUEST_BYTES} a request may"
        )
    manifest = RequestManifest(
        protocol=PROTOCOL,
        argv=list(shipment.argv),
        cwd=str(shipment.cwd),
        policy=policy,
        revision=Blob(sha256=_sha256(revision), size=revision.stat().st_size),
        inputs=blobs,
        output_folders=[str(folder) for folder in shipment.output_folders],
        queue_s=queue_s(policy),
    )
    parcel = work / "request.tar"
    write_parcel(parcel, [(REQUEST_MANIFEST, manifest.model_dump_json().encode()), *members])
    return RequestParcel(parcel, tuple(sent), tuple(refused))
