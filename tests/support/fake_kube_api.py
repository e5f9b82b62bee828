"""A stand-in for the Kubernetes API server, for unit tests only: the three calls the Job backend makes
(``libs/sandbox/job/kube_api.py``), answered the way an API server answers them, with a small Job controller that
makes the Job's pod. It is a recorded contract, not a cluster:

- every request is checked as the API server would check it: the bearer token, ``Content-Type: application/json``,
  a Job body valid against the Kubernetes 1.30 schemas (strict);
- every response body is valid against the same schemas (a Job, a PodList, a ``Status``), so the fake cannot drift
  from the API's types; errors are ``Status`` objects with the reason and message RBAC and the API give;
- Pod Security admission's answer to a workload resource is the API's: the Job is created, and a ``Warning:
  299 - "would violate PodSecurity ..."`` header says its pods will be refused (tests/support/pod_security.py);
- the pods' status is whatever a test (or tests/support/local_kubelet.py) writes, as the kubelet would.

What the real API server adds is not modelled: admission webhooks, quota, the scheduler, watches, resource versions
beyond a counter, server-side defaulting of every field."""

from __future__ import annotations

import contextlib
import copy
import json
import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

import httpx
import jsonschema
import kubernetes_validate
from kubernetes_validate.utils import schema_contents
from referencing import Registry, Resource

from tests.support.pod_security import restricted_violations

VERSION = "1.30.0"
SCHEMAS = "kubernetes-json-schema/v1.30.0-local-strict"
CONTROLLER_UID = "batch.kubernetes.io/controller-uid"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def valid_status(document: dict[str, Any]) -> None:
    """A ``Status`` against meta/v1's schema (kubernetes-validate looks Status up under core v1, where it is not)."""
    schema = schema_contents(f"{SCHEMAS}/status-meta-v1.json", VERSION)
    definitions = schema_contents(f"{SCHEMAS}/_definitions.json", VERSION)
    registry: Registry[Any] = Resource.from_contents(definitions) @ (Resource.from_contents(schema) @ Registry())
    jsonschema.validators.Draft202012Validator(schema, registry=registry).validate(document)


def _status(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> httpx.Response:
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success" if code < 400 else "Failure",
        "code": code,
    }
    if code >= 400:
        body |= {"reason": reason, "message": message}
    if details:
        body["details"] = details
    valid_status(body)
    return httpx.Response(code, json=body)


class FakeKubeApi:
    def __init__(
        self,
        token: str,
        *,
        allowed_namespace: str = "modelguard-jobs",
        user: str = "system:serviceaccount:modelguard:modelguard-job-launcher",
        on_pod: Callable[[dict[str, Any]], None] | None = None,
        on_delete: Callable[[str], None] | None = None,
    ) -> None:
        self.token = token
        self.allowed_namespace = allowed_namespace
        self.user = user
        self.on_pod = on_pod
        self.on_delete = on_delete
        self.jobs: dict[str, dict[str, Any]] = {}
        self.pods: dict[str, dict[str, Any]] = {}
        self.deleted: list[str] = []
        self.requests: list[tuple[str, str]] = []
        self.version = 1
        self.lock = threading.Lock()

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    # what the kubelet writes
    def set_status(self, pod_name: str, status: dict[str, Any]) -> None:
        with self.lock:
            pod = self.pods[pod_name]
            pod["status"] = {**pod.get("status", {}), **status}
            self.version += 1
            pod["metadata"]["resourceVersion"] = str(self.version)
            kubernetes_validate.validate(pod, VERSION, strict=True)

    def pod_of(self, job_name: str) -> dict[str, Any]:
        [pod] = [p for p in self.pods.values() if p["metadata"]["labels"]["batch.kubernetes.io/job-name"] == job_name]
        return pod

    # the API
    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append((request.method, request.url.path))
        if request.headers.get("authorization") != f"Bearer {self.token}":
            return _status(401, "Unauthorized", "Unauthorized")
        parts = request.url.path.strip("/").split("/")
        if parts[:4] == ["apis", "batch", "v1", "namespaces"] and len(parts) >= 6 and parts[5] == "jobs":
            namespace = parts[4]
            if namespace != self.allowed_namespace:
                verb = {"POST": "create", "DELETE": "delete"}.get(request.method, "get")
                return self._forbidden(verb, "jobs", "batch", namespace)
            if request.method == "POST" and len(parts) == 6:
                return self._create_job(namespace, request)
            if request.method == "DELETE" and len(parts) == 7:
                return self._delete_job(namespace, parts[6], request)
        if parts[:3] == ["api", "v1", "namespaces"] and len(parts) == 5 and parts[4] == "pods":
            if parts[3] != self.allowed_namespace:
                return self._forbidden("list", "pods", "", parts[3])
            if request.method == "GET":
                return self._list_pods(parts[3], request)
        return _status(404, "NotFound", "the server could not find the requested resource")

    def _forbidden(self, verb: str, resource: str, group: str, namespace: str) -> httpx.Response:
        qualified = f"{resource}.{group}" if group else resource
        message = (
            f'{qualified} is forbidden: User "{self.user}" cannot {verb} resource "{resource}" in API group '
            f'"{group}" in the namespace "{namespace}"'
        )
        return _status(403, "Forbidden", message, {"group": group, "kind": resource})

    def _create_job(self, namespace: str, request: httpx.Request) -> httpx.Response:
        if request.headers.get("content-type") != "application/json":
            return _status(415, "UnsupportedMediaType", "the body of the request was in an unknown format")
        job = json.loads(request.content)
        try:
            kubernetes_validate.validate(job, VERSION, strict=True)
        except kubernetes_validate.ValidationError as error:
            return _status(422, "Invalid", f"Job.batch is invalid: {error.message}")
        name = job["metadata"]["name"]
        if name in self.jobs:
            return _status(409, "AlreadyExists", f'jobs.batch "{name}" already exists')
        with self.lock:
            self.version += 1
            uid = str(uuid.uuid4())
            job["metadata"] |= {
                "namespace": namespace,
                "uid": uid,
                "resourceVersion": str(self.version),
                "creationTimestamp": _now(),
            }
            job["status"] = {}
            self.jobs[name] = job
            template = job["spec"]["template"]
            headers = {}
            problems = restricted_violations(template.get("metadata", {}), template["spec"])
            if problems:
                headers["Warning"] = f'299 - "would violate PodSecurity \\"restricted:latest\\": {"; ".join(problems)}"'
            pod = self._make_pod(job)
        if self.on_pod is not None and not problems:
            self.on_pod(copy.deepcopy(pod))
        kubernetes_validate.validate(job, VERSION, strict=True)
        return httpx.Response(201, json=job, headers=headers)

    def _make_pod(self, job: dict[str, Any]) -> dict[str, Any]:
        """What the Job controller makes (the pod itself is admitted only when Pod Security allows it)."""
        name = f"{job['metadata']['name']}-{uuid.uuid4().hex[:5]}"
        uid = job["metadata"]["uid"]
        labels = {
            **job["spec"]["template"]["metadata"].get("labels", {}),
            CONTROLLER_UID: uid,
            "controller-uid": uid,
            "batch.kubernetes.io/job-name": job["metadata"]["name"],
            "job-name": job["metadata"]["name"],
        }
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": job["metadata"]["namespace"],
                "uid": str(uuid.uuid4()),
                "labels": labels,
                "resourceVersion": str(self.version),
                "creationTimestamp": _now(),
                "ownerReferences": [
                    {
                        "apiVersion": "batch/v1",
                        "kind": "Job",
                        "name": job["metadata"]["name"],
                        "uid": uid,
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": copy.deepcopy(job["spec"]["template"]["spec"]),
            "status": {"phase": "Pending", "qosClass": "Burstable"},
        }
        if not restricted_violations(job["spec"]["template"].get("metadata", {}), job["spec"]["template"]["spec"]):
            kubernetes_validate.validate(pod, VERSION, strict=True)
            self.pods[name] = pod
        return pod

    def _list_pods(self, namespace: str, request: httpx.Request) -> httpx.Response:
        selector = parse_qs(request.url.query.decode()).get("labelSelector", [""])[0]
        key, _, value = selector.partition("=")
        with self.lock:
            items = [
                copy.deepcopy(pod)
                for pod in self.pods.values()
                if pod["metadata"]["namespace"] == namespace and pod["metadata"]["labels"].get(key) == value
            ]
            listed: dict[str, Any] = {
                "kind": "PodList",
                "apiVersion": "v1",
                "metadata": {"resourceVersion": str(self.version)},
                "items": items,
            }
        kubernetes_validate.validate(listed, VERSION, strict=True)
        return httpx.Response(200, json=listed)

    def _delete_job(self, namespace: str, name: str, request: httpx.Request) -> httpx.Response:
        options = json.loads(request.content or b"{}")
        if options and options.get("kind") != "DeleteOptions":
            return _status(400, "BadRequest", "the body is not DeleteOptions")
        job = self.jobs.pop(name, None)
        if job is None:
            return _status(404, "NotFound", f'jobs.batch "{name}" not found')
        self.deleted.append(name)
        with self.lock:
            gone = [n for n, p in self.pods.items() if p["metadata"]["labels"]["job-name"] == name]
            for pod_name in gone:
                self.pods.pop(pod_name)
        for pod_name in gone:
            if self.on_delete is not None:
                self.on_delete(pod_name)
        details = {"name": name, "group": "batch", "kind": "jobs", "uid": job["metadata"]["uid"]}
        return _status(200, "", "", details)


@contextlib.contextmanager
def served_on_loopback(fake: FakeKubeApi) -> Iterator[str]:
    """The fake behind a real HTTP server on 127.0.0.1 (the adapter then speaks real HTTP to it); its URL."""

    class Bridge(BaseHTTPRequestHandler):
        def _bridge(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            request = httpx.Request(
                self.command,
                f"http://127.0.0.1{self.path}",
                headers=dict(self.headers.items()),
                content=self.rfile.read(length) if length else b"",
            )
            response = fake.handle(request)
            body = response.content
            self.send_response(response.status_code)
            for name, value in response.headers.items():
                if name.lower() not in ("content-length", "transfer-encoding"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_DELETE = _bridge

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Bridge)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
