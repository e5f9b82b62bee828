"""A real S3-compatible server on this machine for the tests: moto's server mode as its own process, on a free
loopback port, with a bucket made for the test and credentials a client must send (any will do for moto)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from libs.s3_location import S3Location, s3_client

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

ACCESS_KEY = "modelguard-test-key"
SECRET_KEY = "modelguard-test-secret-0123456789"


@dataclass(frozen=True)
class S3Server:
    endpoint_url: str

    def new_bucket(self) -> str:
        bucket = f"mg-{uuid.uuid4().hex[:16]}"
        self.client().create_bucket(Bucket=bucket)
        return bucket

    def client(self) -> S3Client:
        """A plain boto3 client, as an operator (or an attacker with write access to the bucket) would use."""
        return s3_client(S3Location("unused", "", self.endpoint_url), self.environment())

    def environment(self) -> dict[str, str]:
        return {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_REGION": "us-east-1"}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def s3_server(logs: Path) -> Iterator[S3Server]:
    moto = Path(sys.executable).parent / "moto_server"
    if not moto.exists():
        pytest.skip("moto's server is not installed (pip install 'moto[server]', in the dev extra)")
    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    logs.mkdir(parents=True, exist_ok=True)
    with (logs / "moto.log").open("ab") as log:
        process = subprocess.Popen(
            [str(moto), "-H", "127.0.0.1", "-p", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{endpoint}/moto-api/", timeout=1.0)
                break
            except httpx.HTTPError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"moto_server did not start; see {logs / 'moto.log'}") from None
                time.sleep(0.2)
        yield S3Server(endpoint)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
