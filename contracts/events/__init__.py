"""Event payload contracts, one module per phase."""
