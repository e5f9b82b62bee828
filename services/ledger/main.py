"""Entrypoint of the ledger service: `python -m services.ledger.main`."""

from libs.bus.runtime import serve
from services.ledger.wiring import NAME, definition

if __name__ == "__main__":
    serve(NAME, definition)
