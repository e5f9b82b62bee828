"""Entrypoint of the context service: `python -m services.context.main`."""

from libs.bus.runtime import serve
from services.context.bootstrap import bootstrap
from services.context.wiring import NAME

if __name__ == "__main__":
    serve(NAME, bootstrap)
