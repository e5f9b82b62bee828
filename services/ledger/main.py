"""Entrypoint of the ledger service: `python -m services.ledger.main`.

It also keeps the dead letters in the ledger's database for the console (services.ledger.dead_letter_keeping).
"""

from libs.bus.runtime import serve
from services.ledger.bootstrap import bootstrap
from services.ledger.dead_letter_keeping import keep_dead_letters
from services.ledger.wiring import NAME

if __name__ == "__main__":
    serve(NAME, bootstrap, extend=keep_dead_letters)
