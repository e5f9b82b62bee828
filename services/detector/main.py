"""Entrypoint of the detector service: `python -m services.detector.main`.

With MODELGUARD_INGEST_PORT set it also serves the HTTP ingestion for model CI (services.detector.ingest_server),
whose bearer token is read from the secrets mapping handed in here: the process environment.
"""

import os
from functools import partial

from libs.bus.runtime import serve
from services.detector.bootstrap import bootstrap
from services.detector.ingest_server import attach_ingestion
from services.detector.wiring import NAME

if __name__ == "__main__":
    serve(NAME, bootstrap, extend=partial(attach_ingestion, secrets=os.environ))
