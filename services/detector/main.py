"""Entrypoint of the detector service: `python -m services.detector.main`."""

from libs.bus.runtime import serve
from services.detector.wiring import NAME, definition

if __name__ == "__main__":
    serve(NAME, definition)
