"""The detector's HTTP ingestion for a model's CI: upload artifacts, report an evaluation, read the verdict.

PUT  /artifacts/{sha256}                 the bytes of a snapshot or data file  → 201 its ArtifactRef
POST /model-policies                     {"model_urn", "policy": YAML text}   → 201 pinned, 200 pinned before
                                                                                  or governed by the platform
POST /evaluations                        an EvaluationReported payload (JSON)  → 202 incident id, event id
GET  /incidents/{incident}/runs/{run}    → 200 the run's verdict (see ingest_verdict)

Every route needs `Authorization: Bearer <MODELGUARD_INGEST_TOKEN>`. Errors are JSON `{"error": "<one line>"}`:
401 for the token, 422 for a body or reference that cannot be accepted; for a policy, 403 when the central policy
accepts none for the model and 409 when the model is pinned to another (services.detector.policy_catalog).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from contracts.events.evaluation import EvaluationReported
from libs.artifacts.store import ArtifactCorrupted, ArtifactNotFound, ArtifactStore
from libs.canonical_json import strict_loads
from libs.events.codec import SignedEvent
from libs.policy.model_policies.pins import PinConflict
from libs.policy.model_policies.submission import NotPermitted, SubmissionRefused
from services.detector.ingest_request import BadRequest, parse_evaluation, referenced_artifacts
from services.detector.ingest_verdict import Verdict
from services.detector.policy_catalog import SubmissionAnswer

INCIDENT_ID = re.compile(r"^inc-[0-9a-f]{16}$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class IngestPorts:
    token: str
    artifacts: ArtifactStore
    metric_for: Callable[[str], str | None]  # the gate metric of the policy that applies to a model, if any
    sign: Callable[[EvaluationReported, str], SignedEvent]  # the report, signed, in its incident
    publish: Callable[[SignedEvent], Awaitable[None]]
    verdict: Callable[[str, str], Verdict]  # incident id, run id
    submit_policy: Callable[[str, bytes], SubmissionAnswer] | None = None  # model urn, the policy's YAML
    max_artifact_bytes: int = 512 * 1024 * 1024


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _authorized(request: Request, token: str) -> bool:
    scheme, _, presented = request.headers.get("authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(presented.strip().encode(), token.encode())


def _unauthorized() -> JSONResponse:
    return _error(401, "missing or wrong bearer token", {"WWW-Authenticate": 'Bearer realm="modelguard"'})


def ingestion_app(ports: IngestPorts) -> Starlette:
    async def put_artifact(request: Request) -> JSONResponse:
        if not _authorized(request, ports.token):
            return _unauthorized()
        expected = request.path_params["sha256"]
        if not SHA256.match(expected):
            return _error(422, "the path must end in the sha256 of the body, 64 lowercase hex digits")
        declared = int(request.headers.get("content-length") or 0)
        if declared > ports.max_artifact_bytes:
            return _error(413, f"an artifact may have at most {ports.max_artifact_bytes} bytes")
        data = await request.body()
        actual = hashlib.sha256(data).hexdigest()
        if actual != expected:
            return _error(422, f"the body's sha256 is {actual}, not the {expected} in the path")
        media_type = request.headers.get("content-type") or "application/octet-stream"
        ref = await asyncio.to_thread(ports.artifacts.put, data, media_type)
        return JSONResponse(ref.model_dump(mode="json"), status_code=201)

    def _missing_artifact(evaluation: EvaluationReported) -> str | None:
        for field, ref in referenced_artifacts(evaluation).items():
            try:
                stored = ports.artifacts.get(ref)
            except ArtifactNotFound:
                return f"{field}: artifact {ref.sha256} is not stored; PUT it to /artifacts/{ref.sha256} first"
            except ArtifactCorrupted:
                return f"{field}: the stored artifact {ref.sha256} is corrupted; PUT it again"
            if len(stored) != ref.size:
                return f"{field}: artifact {ref.sha256} has {len(stored)} bytes, not the {ref.size} declared"
        return None

    async def post_evaluation(request: Request) -> JSONResponse:
        if not _authorized(request, ports.token):
            return _unauthorized()
        try:
            evaluation = parse_evaluation(await request.body())
        except BadRequest as exc:
            return _error(422, str(exc))
        metric = ports.metric_for(evaluation.workspace.model_urn)
        if metric is None:
            return _error(422, f"workspace.model_urn: no policy applies to {evaluation.workspace.model_urn}")
        missing = await asyncio.to_thread(_missing_artifact, evaluation)
        if missing:
            return _error(422, missing)
        signed = ports.sign(evaluation, metric)
        await ports.publish(signed)
        meta = signed.event.meta
        return JSONResponse(
            {
                "incident_id": meta.incident_id,
                "event_id": meta.event_id,
                "run_id": evaluation.run_id,
                "verdict_url": f"/incidents/{meta.incident_id}/runs/{evaluation.run_id}",
            },
            status_code=202,
        )

    async def post_model_policy(request: Request) -> JSONResponse:
        if not _authorized(request, ports.token):
            return _unauthorized()
        try:
            body = strict_loads(await request.body())
        except (ValueError, UnicodeDecodeError):
            return _error(422, 'the body must be JSON: {"model_urn": "urn:li:mlModel:...", "policy": "<YAML>"}')
        if not isinstance(body, dict) or set(body) != {"model_urn", "policy"}:
            return _error(422, "the body must have exactly model_urn and policy")
        model_urn, policy = body["model_urn"], body["policy"]
        if not isinstance(model_urn, str) or not model_urn.startswith("urn:li:mlModel:"):
            return _error(422, "model_urn must be an mlModel URN")
        if not isinstance(policy, str):
            return _error(422, "policy must be the policy's YAML text")
        if ports.submit_policy is None:
            return _error(403, "this detector accepts no submitted policies")
        try:
            answer = await asyncio.to_thread(ports.submit_policy, model_urn, policy.encode("utf-8"))
        except NotPermitted as exc:
            return _error(403, str(exc))
        except PinConflict as exc:
            return _error(409, str(exc))
        except SubmissionRefused as exc:
            return _error(422, str(exc))
        return JSONResponse(
            {"status": answer.status, "policy": answer.policy, "digest": answer.digest},
            status_code=201 if answer.status == "pinned" else 200,
        )

    async def get_verdict(request: Request) -> JSONResponse:
        if not _authorized(request, ports.token):
            return _unauthorized()
        incident_id, run_id = request.path_params["incident_id"], request.path_params["run_id"]
        if not INCIDENT_ID.match(incident_id):
            return _error(422, "the incident id must look like inc-0123456789abcdef")
        verdict = await asyncio.to_thread(ports.verdict, incident_id, run_id)
        return JSONResponse(verdict.to_json())

    return Starlette(
        routes=[
            Route("/artifacts/{sha256}", put_artifact, methods=["PUT"]),
            Route("/model-policies", post_model_policy, methods=["POST"]),
            Route("/evaluations", post_evaluation, methods=["POST"]),
            Route("/incidents/{incident_id}/runs/{run_id}", get_verdict, methods=["GET"]),
        ]
    )
