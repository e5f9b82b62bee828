"""Entrypoint of the repairer service: `python -m services.repairer.main`."""

from libs.bus.runtime import serve
from services.repairer.bootstrap import bootstrap
from services.repairer.wiring import NAME

if __name__ == "__main__":
    serve(NAME, bootstrap)
