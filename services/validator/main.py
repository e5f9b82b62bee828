"""Entrypoint of the validator service: `python -m services.validator.main`."""

from libs.bus.runtime import serve
from services.validator.bootstrap import bootstrap
from services.validator.wiring import NAME

if __name__ == "__main__":
    serve(NAME, bootstrap)
