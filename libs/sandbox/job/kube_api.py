"""The Kubernetes API, as far as the Job backend needs it, behind a port (``JobApi``): create a Job, list the pods
its controller made, delete it. ``HttpxJobApi`` speaks the API's REST paths with httpx (no client library): the
pod's projected service-account token, re-read for every request because the kubelet rotates it, and the
cluster's CA.

Only the paths and fields used here are relied on: ``POST /apis/batch/v1/namespaces/{ns}/jobs`` (201 and the Job,
whose ``metadata.uid`` selects its pods; ``Warning`` headers carry Pod Security admission's verdict on the pod
template), ``GET /api/v1/namespaces/{ns}/pods?labelSelector=batch.kubernetes.io/controller-uid=…`` (a PodList),
``DELETE /apis/batch/v1/namespaces/{ns}/jobs/{name}`` with ``propagationPolicy: Background`` (its pods go too);
errors are ``Status`` objects (``reason``, ``message``, ``code``)."""

from __future__ import annotations

import json
import re
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

import httpx

CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
MAX_MESSAGE = 500


class KubeApiError(Exception):
    """The API refused or could not be reached; one line with the status, reason and message."""

    def __init__(self, message: str, status: int | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class CreatedJob:
    name: str
    uid: str
    warnings: tuple[str, ...]
    """The API's ``Warning`` headers: Pod Security admission reports a pod template that its namespace would
    refuse here (it refuses the pods, not the Job)."""


class JobApi(Protocol):
    def create_job(self, namespace: str, manifest: dict[str, Any]) -> CreatedJob: ...

    def job_pods(self, namespace: str, job_uid: str) -> list[dict[str, Any]]: ...

    def delete_job(self, namespace: str, name: str) -> None: ...


def _warnings(response: httpx.Response) -> tuple[str, ...]:
    """``Warning: 299 - "text"`` headers (RFC 7234), their text (a quoted string: ``\\"`` is a quote)."""
    found = []
    for value in response.headers.get_list("warning"):
        text = value.split(" ", 2)[-1].strip() if value[:3].isdigit() else value
        if len(text) >= 2 and text[0] == text[-1] == '"':
            text = re.sub(r"\\(.)", r"\1", text[1:-1])
        found.append(text[:MAX_MESSAGE])
    return tuple(found)


def _error(response: httpx.Response, action: str) -> KubeApiError:
    reason, message = "", ""
    try:
        status = response.json()
        if isinstance(status, dict):
            reason, message = str(status.get("reason") or ""), str(status.get("message") or "")
    except (ValueError, UnicodeDecodeError):
        pass
    text = " ".join((message or response.text[:MAX_MESSAGE]).split())[:MAX_MESSAGE]
    return KubeApiError(
        f"the Kubernetes API refused to {action}: HTTP {response.status_code} {reason}: {text}".rstrip(": "),
        response.status_code,
        reason,
    )


class HttpxJobApi:
    def __init__(
        self,
        base_url: str,
        token_file: Path | None,
        ca_file: Path | None,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout_s: float = 30.0,
    ) -> None:
        verify: ssl.SSLContext | bool = True
        if ca_file is not None and base_url.startswith("https://") and transport is None:
            verify = ssl.create_default_context(cafile=str(ca_file))
        self.token_file = token_file
        self.client = httpx.Client(
            base_url=base_url,
            verify=verify,
            transport=transport,
            timeout=timeout_s,
            follow_redirects=False,
            trust_env=False,
        )

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if self.token_file is not None:
            try:
                token = self.token_file.read_text().strip()
            except OSError as error:
                raise KubeApiError(
                    f"cannot read the service-account token {self.token_file}: {error.strerror or error}"
                ) from None
            headers["Authorization"] = f"Bearer {token}"
        return headers

    def _send(self, method: str, path: str, action: str, **options: Any) -> httpx.Response:
        headers = self._headers()
        if "content" in options:
            headers["Content-Type"] = "application/json"
        try:
            return self.client.request(method, path, headers=headers, **options)
        except httpx.HTTPError as error:
            raise KubeApiError(
                f"the Kubernetes API at {self.client.base_url} cannot be reached to {action}: "
                f"{type(error).__name__}: {str(error)[:MAX_MESSAGE]}"
            ) from None

    def create_job(self, namespace: str, manifest: dict[str, Any]) -> CreatedJob:
        action = f"create the Job {manifest['metadata']['name']} in {namespace}"
        path = f"/apis/batch/v1/namespaces/{quote(namespace)}/jobs"
        response = self._send("POST", path, action, content=json.dumps(manifest).encode())
        if response.status_code != 201:
            raise _error(response, action)
        created = response.json()
        metadata = created.get("metadata", {}) if isinstance(created, dict) else {}
        if not isinstance(metadata.get("uid"), str) or not metadata["uid"]:
            raise KubeApiError(f"the Kubernetes API created the Job without a uid ({action})")
        return CreatedJob(name=str(metadata.get("name", "")), uid=metadata["uid"], warnings=_warnings(response))

    def job_pods(self, namespace: str, job_uid: str) -> list[dict[str, Any]]:
        action = f"list the pods of Job {job_uid} in {namespace}"
        path = f"/api/v1/namespaces/{quote(namespace)}/pods"
        response = self._send("GET", path, action, params={"labelSelector": f"{CONTROLLER_UID_LABEL}={job_uid}"})
        if response.status_code != 200:
            raise _error(response, action)
        listed = response.json()
        items = listed.get("items") if isinstance(listed, dict) else None
        if not isinstance(items, list):
            raise KubeApiError(f"the Kubernetes API answered a pod list without items ({action})")
        return [item for item in items if isinstance(item, dict)]

    def delete_job(self, namespace: str, name: str) -> None:
        action = f"delete the Job {name} in {namespace}"
        path = f"/apis/batch/v1/namespaces/{quote(namespace)}/jobs/{quote(name)}"
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"}
        response = self._send("DELETE", path, action, content=json.dumps(body).encode())
        if response.status_code not in (200, 202, 404):
            raise _error(response, action)

    def close(self) -> None:
        self.client.close()
