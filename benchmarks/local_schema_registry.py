"""A schema registry on loopback answering the part of Confluent's REST API MCL consumers use: ``GET /schemas/ids/N``.

Serves the MCL schema shipped in acryl-datahub under the ids the benchmark stream is written with, so ModelGuard
(``MODELGUARD_SCHEMA_REGISTRY_URL``) and datahub-actions (its Kafka source's ``schema_registry_url``, which it
requires) resolve writer schemas the same way, over HTTP, as against DataHub's own registry.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from benchmarks.mcl_workload import TIMESERIES_SCHEMA_ID, VERSIONED_SCHEMA_ID
from libs.datahub.mcl.avro_schema import shipped_mcl_schema_json

_SCHEMA_PATH = re.compile(r"^/schemas/ids/(\d+)(?:\?.*)?$")


@contextmanager
def local_schema_registry() -> Iterator[str]:
    """The registry's base URL while the block runs."""
    schemas = {schema_id: shipped_mcl_schema_json() for schema_id in (VERSIONED_SCHEMA_ID, TIMESERIES_SCHEMA_ID)}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            match = _SCHEMA_PATH.match(self.path)
            schema = schemas.get(int(match.group(1))) if match else None
            if schema is None:
                self._answer(404, {"error_code": 40403, "message": "Schema not found"})
            else:
                self._answer(200, {"schema": schema, "schemaType": "AVRO"})

        def _answer(self, status: int, document: dict[str, Any]) -> None:
            body = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
