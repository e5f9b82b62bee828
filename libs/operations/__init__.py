"""Operational records kept beside the signed ledger: what the services refused (dead letters), unsigned."""
