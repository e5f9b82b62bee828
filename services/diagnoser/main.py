"""Entrypoint of the diagnoser service: `python -m services.diagnoser.main`."""

from libs.bus.runtime import serve
from services.diagnoser.bootstrap import bootstrap
from services.diagnoser.wiring import NAME

if __name__ == "__main__":
    serve(NAME, bootstrap)
