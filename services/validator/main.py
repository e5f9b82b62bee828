"""Entrypoint of the validator service: `python -m services.validator.main`."""

from libs.bus.runtime import serve
from services.validator.wiring import NAME, definition

if __name__ == "__main__":
    serve(NAME, definition)
