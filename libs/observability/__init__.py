"""What an operator reads off a running service: log lines, their incident context, spans around commands and
outgoing HTTP calls (docs/operations.md)."""
