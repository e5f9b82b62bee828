"""The ``receive`` role (the init container of a workspace Job's pod): wait for exactly one request parcel on
``POST /v1/commands`` from the caller that created the Job (the bearer token whose sha256 the Job's spec holds),
check it as the workspace runner does (``services/runner/handler.read_request``) and that it is the command the Job
was made for (its working directory and output folders are in the Job's spec, as the mounts were built from them),
lay it out (``layout.py``), answer ``{"received": true}`` and exit 0. A request it refuses is answered with the
reason and the role exits 1 (the pod fails; the Job is never retried). Nobody within ``MODELGUARD_JOB_WAIT_S``:
exit 1."""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from libs.sandbox.job import pod
from libs.sandbox.remote.parcel import ParcelError
from libs.sandbox.remote.protocol import MAX_REQUEST_BYTES, PARCEL_TYPE, RequestManifest
from libs.sandbox.remote.trees import TreeRefused
from services.runner.handler import Refused, read_request
from services.runner.job_pod.layout import PodVolumes, lay_out_pod
from services.runner.job_pod.one_shot import OneShotServer, Reply, Route, refusal
from services.runner.layout import LayoutRefused

log = logging.getLogger("modelguard.job_pod")
BLOCK = 1 << 16


def _declared_length(request: BaseHTTPRequestHandler) -> int:
    kind = (request.headers.get("Content-Type") or "").split(";")[0].strip()
    if kind != PARCEL_TYPE:
        raise Refused("bad_request", f"a request is a {PARCEL_TYPE} parcel, not {kind[:60] or 'untyped'}")
    declared = request.headers.get("Content-Length") or ""
    if not declared.isdigit():
        raise Refused("bad_request", "a request must declare its Content-Length")
    if int(declared) > MAX_REQUEST_BYTES:
        raise Refused("too_large", f"a request may take at most {MAX_REQUEST_BYTES} bytes")
    return int(declared)


def _save(request: BaseHTTPRequestHandler, target: Path, length: int) -> None:
    left = length
    with target.open("wb") as out:
        while left > 0:
            block = request.rfile.read(min(BLOCK, left))
            if not block:
                raise Refused("bad_request", f"the request ended {left} bytes before its Content-Length")
            out.write(block)
            left -= len(block)


def _matches_the_job(manifest: RequestManifest, environment: Mapping[str, str]) -> None:
    folders = json.loads(environment[pod.ENV_OUTPUT_FOLDERS])
    if manifest.cwd != environment[pod.ENV_CWD] or list(manifest.output_folders) != folders:
        raise Refused(
            "bad_request", "the request's working directory or output folders are not the ones this Job was made for"
        )


def receiver(environment: Mapping[str, str], volumes: PodVolumes) -> Route:
    def route(request: BaseHTTPRequestHandler) -> Reply:
        incoming = volumes.request / "incoming"
        try:
            length = _declared_length(request)
            incoming.mkdir(mode=0o700)
            _save(request, incoming / "request.tar", length)
            parcel, manifest = read_request(incoming / "request.tar", incoming)
            _matches_the_job(manifest, environment)
            try:
                plan = lay_out_pod(manifest, parcel, volumes)
            except (ParcelError, TreeRefused, LayoutRefused) as error:
                raise Refused("bad_request", f"the request is malformed: {error}") from None
        except Refused as refused:
            return refusal(refused.status, refused.kind, refused.reason, failed=True)
        finally:
            shutil.rmtree(incoming, ignore_errors=True)
        command = " ".join(plan["argv"][:2])[:200]
        log.info("received %s in %s (%d output folders)", command, plan["cwd"][:200], len(plan["outputs"]))
        return Reply(200, "application/json", json.dumps({"received": True}).encode(), done=True)

    return route


def receive(environment: Mapping[str, str]) -> int:
    volumes = PodVolumes(Path(pod.REQUEST_MOUNT), Path(pod.OUTPUTS_MOUNT), Path(pod.PLAN_MOUNT))
    server = OneShotServer(
        int(environment.get(pod.ENV_PORT) or pod.DEFAULT_PORT),
        environment[pod.ENV_TOKEN_SHA256],
        {("POST", pod.RECEIVE_PATH): receiver(environment, volumes)},
    )
    log.info("waiting for the request on port %s", server.server_address[1])
    try:
        outcome = server.serve_until(float(environment[pod.ENV_WAIT_S]))
    finally:
        server.server_close()
    if outcome is None:
        log.error("no request came in time")
        return 1
    return 0 if outcome.done else 1
