"""One request laid out in a workspace Job's volumes (``libs/sandbox/job/pod.py``): the revision and the inputs at
the caller's paths under the request volume's ``root`` (as the workspace runner lays them out,
``services/runner/layout.py``, output folders created there as the mount points of the outputs volume's folders),
one folder per output folder in the outputs volume, writable by the command's uid (and the mount points of output
folders nested inside it), and the plan the launcher and the collector read: the command line with its paths
where the model's container sees them, its working directory there, the limits, the output folders."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from libs.sandbox.confinement import SYSTEM_FOLDERS
from libs.sandbox.job import launcher, pod
from libs.sandbox.protected_paths import inside
from libs.sandbox.remote.parcel import Parcel
from libs.sandbox.remote.protocol import RequestManifest
from libs.sandbox.remote.shipment import mirrored_argument
from services.runner.layout import LayoutRefused, lay_out, make_folders

WRITABLE_BY_ALL = 0o777


@dataclass(frozen=True)
class PodVolumes:
    request: Path
    outputs: Path
    plan: Path


def image_argv(manifest: RequestManifest) -> list[str]:
    """The command line as the model's container sees it: each path argument under the view root, unless it lies
    in a system folder (the image's own ``/usr``, ``/etc``, …)."""
    system = [Path(name) for name in SYSTEM_FOLDERS]
    view = Path(pod.VIEW_ROOT)
    return [manifest.argv[0], *(mirrored_argument(argument, view, system) for argument in manifest.argv[1:])]


def _output_folders(manifest: RequestManifest, outputs: Path) -> list[dict[str, str]]:
    planned = []
    for index, folder in enumerate(manifest.output_folders):
        target = outputs / pod.output_volume_folder(index)
        if os.path.lexists(target):
            raise LayoutRefused(f"output folder {index} is already in the outputs volume")
        target.mkdir()
        target.chmod(WRITABLE_BY_ALL)  # the command's uid is not the receiver's
        for other in manifest.output_folders:
            if other != folder and inside(Path(other), Path(folder)):
                make_folders(target, target / Path(other).relative_to(folder))  # a nested folder's mount point
        planned.append({"path": folder, "folder": target.name})
    return planned


def plan_of(manifest: RequestManifest, outputs: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "argv": image_argv(manifest),
        "cwd": pod.view_path(manifest.cwd),
        "limits": manifest.policy.limits.model_dump(),
        "results": pod.RESULTS_MOUNT,
        "scratch": pod.SCRATCH_MOUNT,
        "outputs": outputs,
    }


def lay_out_pod(manifest: RequestManifest, parcel: Parcel, volumes: PodVolumes) -> dict[str, Any]:
    """Lay the request out, write the launcher and its plan; the plan. Raises LayoutRefused, ParcelError,
    TreeRefused for a request that does not fit."""
    lay_out(manifest, parcel, volumes.request / pod.REQUEST_ROOT)
    plan = plan_of(manifest, _output_folders(manifest, volumes.outputs))
    (volumes.plan / pod.LAUNCHER_FILE).write_bytes(Path(launcher.__file__).read_bytes())
    (volumes.plan / pod.PLAN_FILE).write_text(json.dumps(plan, sort_keys=True))
    return plan
