"""The shape of a workspace Job's pod, shared by the caller that creates it (``manifest.py``, ``backend.py``) and
the two ModelGuard roles inside it (``services/runner/job_pod``): container names, where each volume is mounted,
the environment the roles read, the HTTP paths and the plan the receiver writes for the launcher and the
collector. docs/sandbox.md, "In a per-model image".

The pod, in order:

1. ``receive`` (init container, ModelGuard's image, uid 10001): waits for exactly one request parcel (the
   workspace runner's format, ``libs/sandbox/remote/protocol.py``) on ``POST /v1/commands`` with the Job's bearer
   token, checks it, lays the revision and inputs out in the ``request`` volume at the caller's paths, creates
   one ``outputs`` folder per declared output folder, writes the launcher and its plan into ``plan``, exits.
2. ``workspace`` (the model's image, uid 65534): ``python -I -S /modelguard/plan/launch.py plan.json`` runs the
   command (``launcher.py``); the request volume read-only at ``/modelguard/root``, each output folder writable
   at its place under it, ``/tmp`` a scratch volume, the results volume for stdout, stderr and the status.
3. ``collect`` (ModelGuard's image, uid 10001, beside ``workspace``): on ``GET /v1/answer`` with the token, once
   the command has ended, packs the answer parcel (the runner's answer format) from the results and output
   volumes, read-only, sends it, exits.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

RECEIVE = "receive"
WORKSPACE = "workspace"
COLLECT = "collect"
HELPER_UID = 10001
"""The helpers' uid (ModelGuard's image's user)."""
WORKSPACE_UID = 65534
"""The command's uid: not the helpers', so it cannot change what the receiver laid out."""

BASE = "/modelguard"
REQUEST_MOUNT = f"{BASE}/request"
"""The request volume, as the receiver sees it (writable)."""
REQUEST_ROOT = "root"
"""The folder of the request volume that holds the caller's paths (the revision, the inputs)."""
VIEW_ROOT = f"{BASE}/root"
"""Where the workspace container sees that folder (read-only): the caller's path P is at VIEW_ROOT + P."""
OUTPUTS_MOUNT = f"{BASE}/outputs"
"""The outputs volume: one folder per output folder, ``0``, ``1``, …"""
PLAN_MOUNT = f"{BASE}/plan"
RESULTS_MOUNT = f"{BASE}/results"
SCRATCH_MOUNT = "/tmp"
LAUNCHER_FILE = "launch.py"
PLAN_FILE = "plan.json"
STATUS_FILE = "status.json"
STDOUT_FILE = "stdout"
STDERR_FILE = "stderr"

RECEIVE_PATH = "/v1/commands"
ANSWER_PATH = "/v1/answer"
DEFAULT_PORT = 8091

# the environment of the two ModelGuard roles (the workspace container gets none)
ENV_PORT = "MODELGUARD_JOB_PORT"
ENV_TOKEN_SHA256 = "MODELGUARD_JOB_TOKEN_SHA256"
"""The sha256 of the Job's bearer token: the token itself is only ever in the caller's memory and its requests."""
ENV_CWD = "MODELGUARD_JOB_CWD"
ENV_OUTPUT_FOLDERS = "MODELGUARD_JOB_OUTPUT_FOLDERS"
"""The caller's output folders, a JSON list, in the order of the outputs volume's folders."""
ENV_WAIT_S = "MODELGUARD_JOB_WAIT_S"
"""How long a role waits for the caller's request before it gives up (exit 1)."""


def token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def view_path(caller_path: str) -> str:
    """Where the caller's absolute path lies in the workspace container."""
    return VIEW_ROOT + caller_path


def output_volume_folder(index: int) -> str:
    return str(index)


@dataclass(frozen=True)
class PlannedOutput:
    path: str
    """The caller's output folder."""
    folder: str
    """Its folder in the outputs volume."""
