"""Entrypoint of the repairer service: `python -m services.repairer.main`."""

from libs.bus.runtime import serve
from services.repairer.wiring import NAME, definition

if __name__ == "__main__":
    serve(NAME, definition)
