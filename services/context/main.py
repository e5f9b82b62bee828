"""Entrypoint of the context service: `python -m services.context.main`."""

from libs.bus.runtime import serve
from services.context.wiring import NAME, definition

if __name__ == "__main__":
    serve(NAME, definition)
