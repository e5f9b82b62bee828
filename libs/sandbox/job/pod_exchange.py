"""The caller's two HTTP exchanges with a workspace Job's pod, at the address the API gave it: the request parcel
to the ``receive`` role, later the answer parcel from the ``collect`` role, both with the Job's bearer token and
within a deadline. A role that is not listening yet (the container is starting) is tried again until the deadline;
a refusal (``{"refused", "reason"}``) is the same exception the workspace runner's would be. The answer is read
into a file, never past ``limit`` bytes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
from pydantic import ValidationError

from libs.sandbox.isolation import SandboxUnavailable
from libs.sandbox.job import pod
from libs.sandbox.process import CommandNotAllowed
from libs.sandbox.remote.protocol import (
    MAX_REFUSAL_BYTES,
    PARCEL_TYPE,
    Refusal,
    RunnerAnswerRejected,
    RunnerTimedOut,
    RunnerUnavailable,
)

BLOCK = 1 << 16
RETRY_S = 0.2
CONNECT_TIMEOUT_S = 5.0


def pod_url(address: str, port: int) -> str:
    host = f"[{address}]" if ":" in address else address
    return f"http://{host}:{port}"


def _blocks(path: Path) -> Iterator[bytes]:
    with path.open("rb") as handle:
        while block := handle.read(BLOCK):
            yield block


class PodExchange:
    def __init__(self, address: str, port: int, token: str, *, transport: httpx.BaseTransport | None = None) -> None:
        self.url = pod_url(address, port)
        self.token = token
        self.client = httpx.Client(base_url=self.url, transport=transport, trust_env=False, follow_redirects=False)

    def close(self) -> None:
        self.client.close()

    def _headers(self, **more: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}", **more}

    def _timeout(self, deadline: float) -> httpx.Timeout:
        left = deadline - time.monotonic()
        if left <= 0:
            raise RunnerTimedOut(f"the workspace Job's pod at {self.url} did not answer in time")
        return httpx.Timeout(left, connect=min(CONNECT_TIMEOUT_S, left))

    def _refused(self, status: int, body: bytes, role: str) -> Exception:
        where = f"the workspace Job's {role} role at {self.url}"
        try:
            refusal = Refusal.model_validate_json(body)
        except ValidationError:
            return RunnerUnavailable(f"refused to run workspace code: {where} answered HTTP {status}")
        if refusal.refused == "not_allowed":
            return CommandNotAllowed(f"{refusal.reason} ({where})")
        if refusal.refused == "sandbox_unavailable":
            return SandboxUnavailable(f"{refusal.reason} ({where})")
        return RunnerUnavailable(
            f"refused to run workspace code: {where} answered HTTP {status} ({refusal.refused}): {refusal.reason}"
        )

    def send_request(self, parcel: Path, deadline: float) -> None:
        """POST the request parcel; returns once the receiver has laid it out."""
        headers = self._headers(**{"Content-Type": PARCEL_TYPE, "Content-Length": str(parcel.stat().st_size)})
        while True:
            try:
                response = self.client.post(
                    pod.RECEIVE_PATH, content=_blocks(parcel), headers=headers, timeout=self._timeout(deadline)
                )
                break
            except httpx.ConnectError:
                time.sleep(RETRY_S)  # the receiver is not listening yet
            except httpx.TimeoutException:
                raise RunnerTimedOut(f"the workspace Job's pod at {self.url} took no request in time") from None
            except httpx.HTTPError as error:
                raise RunnerUnavailable(
                    f"refused to run workspace code: the workspace Job's pod at {self.url} broke off: "
                    f"{type(error).__name__}: {error}"
                ) from None
        if response.status_code != 200:
            raise self._refused(response.status_code, response.content[:MAX_REFUSAL_BYTES], "receive")

    def fetch_answer(self, target: Path, limit: int, deadline: float) -> None:
        """GET the answer parcel into ``target``, at most ``limit`` bytes."""
        while True:
            try:
                with self.client.stream(
                    "GET", pod.ANSWER_PATH, headers=self._headers(), timeout=self._timeout(deadline)
                ) as response:
                    self._read(response, target, limit)
                    return
            except httpx.ConnectError:
                time.sleep(RETRY_S)  # the collector is not listening yet
            except httpx.TimeoutException:
                raise RunnerTimedOut(f"the workspace Job's pod at {self.url} did not answer in time") from None
            except httpx.HTTPError as error:
                raise RunnerAnswerRejected(
                    f"the workspace Job's answer broke off: {type(error).__name__}: {str(error)[:200]}"
                ) from None

    def _read(self, response: httpx.Response, target: Path, limit: int) -> None:
        if response.status_code != 200:
            body = b"".join(response.iter_bytes())[:MAX_REFUSAL_BYTES]
            raise self._refused(response.status_code, body, "collect")
        kind = (response.headers.get("Content-Type") or "").split(";")[0].strip()
        if kind != PARCEL_TYPE:
            raise RunnerAnswerRejected(f"the workspace Job's pod answered {kind[:60] or 'untyped'}, not a parcel")
        declared = response.headers.get("Content-Length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            raise RunnerAnswerRejected(f"the workspace Job's answer exceeds {limit} bytes")
        total = 0
        with target.open("wb") as out:
            for block in response.iter_bytes():
                total += len(block)
                if total > limit:
                    raise RunnerAnswerRejected(f"the workspace Job's answer exceeds {limit} bytes")
                out.write(block)
