"""The ``collect`` role (beside the model's container in a workspace Job's pod): answer the caller's one
``GET /v1/answer`` (the Job's bearer token) with the answer parcel (``answer.py``), then exit 0. The caller asks
only once the kubelet says the model's container has ended; the collector packs whatever is there when asked.
Nobody within ``MODELGUARD_JOB_WAIT_S``: exit 1."""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from libs.sandbox.job import pod
from libs.sandbox.remote.protocol import PARCEL_TYPE
from services.runner.job_pod.answer import pack_answer
from services.runner.job_pod.one_shot import OneShotServer, Reply, Route

log = logging.getLogger("modelguard.job_pod")


def collector(plan: dict[str, object], results: Path, outputs: Path, work: Path) -> Route:
    def route(request: BaseHTTPRequestHandler) -> Reply:
        folder = Path(tempfile.mkdtemp(prefix="answer-", dir=work))
        target = folder / "answer.tar"
        pack_answer(dict(plan), results, outputs, folder, target)
        log.info("answering with %d bytes", target.stat().st_size)
        return Reply(200, PARCEL_TYPE, file=str(target), done=True)

    return route


def collect(environment: Mapping[str, str]) -> int:
    plan = json.loads((Path(pod.PLAN_MOUNT) / pod.PLAN_FILE).read_text())
    work = Path(tempfile.mkdtemp(prefix="modelguard-collect-"))
    server = OneShotServer(
        int(environment.get(pod.ENV_PORT) or pod.DEFAULT_PORT),
        environment[pod.ENV_TOKEN_SHA256],
        {("GET", pod.ANSWER_PATH): collector(plan, Path(pod.RESULTS_MOUNT), Path(pod.OUTPUTS_MOUNT), work)},
    )
    log.info("waiting for the caller on port %s", server.server_address[1])
    try:
        outcome = server.serve_until(float(environment[pod.ENV_WAIT_S]))
    finally:
        server.server_close()
        shutil.rmtree(work, ignore_errors=True)
    if outcome is None:
        log.error("nobody asked for the answer in time")
        return 1
    return 0 if outcome.done else 1
