"""Entrypoint of the diagnoser service: `python -m services.diagnoser.main`."""

from libs.bus.runtime import serve
from services.diagnoser.wiring import NAME, definition

if __name__ == "__main__":
    serve(NAME, definition)
