"""The read-only incident console: server-rendered pages over the ledger's projections and verified events."""
