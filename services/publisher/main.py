"""Entrypoint of the publisher service: `python -m services.publisher.main`."""

from libs.bus.runtime import serve
from services.publisher.bootstrap import bootstrap
from services.publisher.wiring import NAME

if __name__ == "__main__":
    serve(NAME, bootstrap)
